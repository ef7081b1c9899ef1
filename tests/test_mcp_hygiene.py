"""The MCP server's hygiene tools (retract, pin, unpin, review), driven by the MCP SDK's own client over stdio;
the same library calls as the CLI's commands, so a second machine's CLI sees what the server did."""

from __future__ import annotations

from tests.mcpkit import call, session


def test_a_note_retracted_and_pinned_through_the_server_is_hidden_and_pinned_for_the_cli(laptop, machines):
    # INV append-only: the tools write records, never the note

    async def steps(c):
        kept = await call(c, "memory_save", {"body": "The queue drains every minute.", "title": "queue cadence"})
        wrong = await call(c, "memory_save", {"body": "The queue drains every hour.", "title": "queue hourly",
                                              "review_by": "2020-01-01"})
        retracted = await call(c, "memory_retract", {"id": wrong[2]["id"], "reason": "it is every minute"})
        pinned = await call(c, "memory_pin", {"id": kept[2]["id"]})
        again = await call(c, "memory_pin", {"id": kept[2]["id"]})
        found = await call(c, "memory_search", {"query": "queue"})
        read = await call(c, "memory_read", {"id": wrong[2]["id"]})
        queue = await call(c, "memory_review", {})
        unpinned = await call(c, "memory_unpin", {"id": kept[2]["id"]})
        return kept, wrong, retracted, pinned, again, found, read, queue, unpinned

    (kept, wrong, retracted, pinned, again, found, read, queue, unpinned), stderr = session(
        laptop.env, laptop.checkout, steps)
    assert stderr == ""
    assert not retracted[0] and retracted[2]["status"] == "saved" and retracted[2]["kind"] == "retract"
    assert retracted[1].startswith(f"retracted {wrong[2]['id']}: record ")
    assert pinned[2]["status"] == "saved" and again[2]["status"] == "unchanged"
    assert [r["id"] for r in found[2]["results"]] == [kept[2]["id"]] and found[2]["results"][0]["pinned"] is True
    assert read[1].startswith("RETRACTED on ") and read[2]["retracted"]["reason"] == "it is every minute"
    assert [i["kind"] for i in queue[2]["items"]] == ["retracted"]  # a retracted note is not also due
    assert queue[2]["items"][0]["commands"][0]["command"].endswith(f"read {wrong[2]['id']} --project app")
    assert "not instructions" in queue[2]["notice"]
    assert unpinned[2]["status"] == "saved"
    other = machines("desk", {laptop.checkout: "app"})
    status, out, _ = other.json("search", "queue", cwd=laptop.checkout)
    assert [r["id"] for r in out["results"]] == [kept[2]["id"]] and "pinned" not in out["results"][0]


def test_a_retraction_without_a_reason_or_with_a_credential_in_it_is_a_tool_error_and_nothing_is_written(laptop,
                                                                                                       store_dir):
    # INV no-credentials, INV mcp-keeps-serving
    from tests.test_secrets_cli import fake

    token = fake("ghp_", 36)

    async def steps(c):
        saved = await call(c, "memory_save", {"body": "A finding."})
        missing = await call(c, "memory_retract", {"id": saved[2]["id"]})
        blank = await call(c, "memory_retract", {"id": saved[2]["id"], "reason": "  "})
        secret = await call(c, "memory_retract", {"id": saved[2]["id"], "reason": f"token {token}"})
        return saved, missing, blank, secret

    saved, missing, blank, secret = session(laptop.env, laptop.checkout, steps)[0]
    assert missing[0] and "missing required argument `reason`" in missing[1]
    assert blank[0] and "needs a reason" in blank[1]
    assert secret[0] and "refusing to retract" in secret[1] and token not in secret[1]
    notes_dir = store_dir / "projects" / "app" / "notes"
    assert [p.name for p in notes_dir.iterdir()] == [f"{saved[2]['id']}.md"]
    assert not (laptop.home / "pending").exists() or list((laptop.home / "pending").iterdir()) == []
