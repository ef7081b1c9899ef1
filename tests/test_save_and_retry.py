"""Saving through the CLI on the folder store: confirmed saves, pending saves, retries, crashes."""

from __future__ import annotations

from pathlib import Path

from agentmem.errors import EXIT_PENDING
from agentmem.note import document
from agentmem.store.folder import FolderStore
from agentmem.uploads import pending


def store_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.md"))


def test_save_uploads_and_leaves_nothing_pending(machines, tmp_path, store_dir):
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = machines("laptop", {checkout: "app"})
    status, out, err = m.json("save", "--title", "Build", "--tag", "ci", input="Use ninja for builds.", cwd=checkout)
    assert status == 0, err
    assert out["status"] == "saved" and out["project"] == "app"
    assert out["path"] == f"projects/app/notes/{out['id']}.md"
    saved = (store_dir / out["path"]).read_bytes()
    assert document.parse(saved).meta["agent"] == "laptop"
    assert m.json("pending")[1] == {"status": "ok", "pending": []}


def test_unreachable_store_keeps_the_note_pending_and_says_so(machines, tmp_path):
    # INV nothing-lost
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = machines("laptop", {checkout: "app"})
    missing = tmp_path / "unmounted" / "store"
    m.write_config((m.home / "config.toml").read_text().replace(str(tmp_path / "shared-store"), str(missing)))
    status, out, err = m.run("save", input="A finding worth keeping.", cwd=checkout)
    assert status == EXIT_PENDING
    assert "NOT confirmed" in out and "agentmem save --retry" in out
    status, js, _ = m.json("pending")
    [entry] = js["pending"]
    assert entry["store"] == {"kind": "folder", "location": str(missing)}
    assert entry["last_error"]["error"] == "offline"
    # the pending note is searchable on this machine, marked as pending
    status, found, _ = m.json("search", "finding", "--offline", cwd=checkout)
    assert found["results"][0]["pending"] is True


def test_retry_reuses_the_id_and_bytes_and_creates_no_duplicate(machines, tmp_path):
    # INV same-bytes-retry
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = machines("laptop", {checkout: "app"})
    drive = tmp_path / "drive"
    target = drive / "store"
    m.write_config((m.home / "config.toml").read_text().replace(str(tmp_path / "shared-store"), str(target)))
    status, out, _ = m.json("save", "--kind", "checkpoint", input="Checkpoint body", cwd=checkout)
    assert status == EXIT_PENDING and out["status"] == "pending"
    note_id = out["id"]
    kept = (m.home / "pending" / note_id / "note.md").read_bytes()
    target.mkdir(parents=True)  # the drive comes back, with the store's folder on it
    status, again, _ = m.json("save", "--retry", note_id)
    assert status == 0 and again["status"] == "saved" and again["id"] == note_id
    assert [p.read_bytes() for p in store_files(target)] == [kept]
    status, third, err = m.json("save", "--retry", note_id)
    # nothing left to retry, nothing duplicated, and the note is reported as what it is: saved
    assert status == 0 and third["status"] == "saved" and third["already_confirmed"] is True
    assert len(store_files(target)) == 1


def test_crash_after_upload_before_cleanup_is_recovered_by_retry(tmp_path, machines):
    # INV nothing-lost, INV same-bytes-retry: the store already has the object when the retry runs
    m = machines("laptop")
    store = FolderStore(tmp_path / "shared-store")
    note = document.build(body="Decided X", title="X", kind="note", project="app", agent="laptop")
    data = note.render()
    entry = pending.Entry(note.id, store.description, "app", document.note_path("app", note.id), note.created)
    pending.persist(m.home, entry, data)
    store.put(entry.path, data)  # upload succeeded ... and then the process died before cleanup
    status, out, _ = m.json("save", "--retry", note.id)
    assert status == 0 and out["status"] == "saved"
    assert store_files(tmp_path / "shared-store") == [tmp_path / "shared-store" / entry.path]
    assert pending.list_entries(m.home) == []


def test_pending_upload_keeps_its_destination_after_the_config_changes(machines, tmp_path):
    # INV same-bytes-retry: destination recorded at save time wins over today's config
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = machines("laptop", {checkout: "app"})
    first = tmp_path / "drive1" / "store"
    second = tmp_path / "store2"
    second.mkdir()
    cfg = (m.home / "config.toml").read_text()
    m.write_config(cfg.replace(str(tmp_path / "shared-store"), str(first)))
    _, out, _ = m.json("save", input="goes to the first store", cwd=checkout)
    m.write_config(cfg.replace(str(tmp_path / "shared-store"), str(second)).replace('"app"', '"renamed"'))
    first.mkdir(parents=True)  # the first drive comes back, with its store folder
    status, again, _ = m.json("save", "--retry", out["id"])
    assert status == 0
    assert (first / "projects" / "app" / "notes" / f"{out['id']}.md").exists()
    assert list(second.rglob("*.md")) == []


def test_two_agents_append_to_one_project_without_overwriting(machines, tmp_path, store_dir):
    a_checkout, b_checkout = tmp_path / "a" / "app", tmp_path / "elsewhere" / "app-clone"
    a_checkout.mkdir(parents=True)
    b_checkout.mkdir(parents=True)
    a = machines("laptop", {a_checkout: "app"})
    b = machines("desktop", {b_checkout: "app"})
    ids = []
    for i in range(3):
        ids.append(a.json("save", input=f"laptop note {i}", cwd=a_checkout)[1]["id"])
        ids.append(b.json("save", input=f"desktop note {i}", cwd=b_checkout)[1]["id"])
    assert len(store_files(store_dir)) == 6
    # each machine finds the other's notes through its own checkout path
    _, found, _ = a.json("search", "desktop note", "--mode", "literal", "--refresh", cwd=a_checkout)
    assert len(found["results"]) == 3
    _, found, _ = b.json("search", "laptop note", "--mode", "literal", "--refresh", cwd=b_checkout)
    assert len(found["results"]) == 3


def test_a_correction_keeps_the_original_claim_and_its_date(machines, tmp_path):
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = machines("laptop", {checkout: "app"})
    _, first, _ = m.json("save", "--title", "Port", input="The API listens on port 8080.", cwd=checkout)
    _, fix, _ = m.json("save", "--title", "Port (corrected)", "--corrects", first["id"],
                       input="Correction: the API listens on port 9090.", cwd=checkout)
    _, found, _ = m.json("search", "listens on port", "--refresh", cwd=checkout)
    by_id = {r["id"]: r for r in found["results"]}
    assert set(by_id) == {first["id"], fix["id"]}
    assert by_id[fix["id"]]["corrects"] == first["id"]
    assert by_id[first["id"]]["created"] < by_id[fix["id"]]["created"]
    _, original, _ = m.json("read", first["id"], cwd=checkout)
    assert "8080" in original["body"] and original["meta"]["created"] == by_id[first["id"]]["created"]


def test_saving_in_an_unmapped_directory_refuses_and_writes_nothing(machines, tmp_path, store_dir):
    m = machines("laptop", {})
    status, out, err = m.run("save", input="text", cwd=tmp_path)
    assert status == 3
    assert err.count("\n") == 1 and "agentmem map" in err and "Traceback" not in err
    assert not (m.home / "pending").exists() and store_files(store_dir) == []


def test_bad_input_gets_one_line_and_a_nonzero_exit(machines, tmp_path):
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = machines("laptop", {checkout: "app"})
    cases = [
        (("save", "--kind", "diary"), "x"),
        (("save",), ""),
        (("save", "nope.md"), None),
        (("save",), b"\xff\xfe bad"),
        (("read", "../../etc/passwd"), None),
        (("search", "--limit", "0"), None),
        (("frobnicate",), None),
    ]
    for args, body in cases:
        status, out, err = m.run(*args, input=body, cwd=checkout)
        assert status == 2, (args, status, err)
        assert err.startswith("agentmem: ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert not (m.home / "pending").exists()


def test_json_errors_are_objects_on_stdout(machines, tmp_path):
    m = machines("laptop", {})
    status, out, err = m.json("search", "x", cwd=tmp_path)
    assert status == 3 and out["status"] == "error" and out["error"] == "not-configured"


def test_search_matches_tags_and_sources_but_not_frontmatter_keys(machines, tmp_path):
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = machines("laptop", {checkout: "app"})
    m.json("save", "--tag", "deployment", "--source", "infra/terraform/main.tf", input="Body words only.", cwd=checkout)
    assert len(m.json("search", "deployment", cwd=checkout)[1]["results"]) == 1
    assert len(m.json("search", "terraform", cwd=checkout)[1]["results"]) == 1
    assert m.json("search", "kind", cwd=checkout)[1]["results"] == []


def test_match_lines_cite_the_same_file_line_in_literal_and_ranked_mode(machines, tmp_path, store_dir):
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = machines("laptop", {checkout: "app"})
    _, saved, _ = m.json("save", "--title", "Deploy", input="First line.\nThe canary rollout waits ten minutes.\n", cwd=checkout)
    file_lines = (store_dir / saved["path"]).read_text().splitlines()
    expected = file_lines.index("The canary rollout waits ten minutes.") + 1
    for mode in ("literal", "ranked"):
        _, found, _ = m.json("search", "canary rollout", "--mode", mode, cwd=checkout)
        assert found["results"][0]["matches"][0]["line"] == expected, mode


def test_a_malformed_network_timeout_warns_but_never_stops_a_save(machines, tmp_path, store_dir):
    # INV nothing-lost: a typo in config.toml must not turn away the agent's note.
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = machines("laptop", {checkout: "app"})
    m.write_config((m.home / "config.toml").read_text() + '\n[network]\ntimeout = "soon"\n')
    status, out, err = m.json("save", input="a note despite the typo", cwd=checkout)
    assert status == 0 and out["status"] == "saved", (out, err)
    assert "warning" in err and "[network] timeout" in err and "using 20 s" in err
    status, found, _ = m.json("search", "typo", cwd=checkout)
    assert status == 0 and [r["id"] for r in found["results"]] == [out["id"]]
