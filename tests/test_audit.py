"""`agentmem audit`: every note in the store (folder or bucket) scanned, findings listed without their value,
and `--fix` saving one redacted copy that corrects the original."""

from __future__ import annotations

import json
import shlex
import subprocess

from tests.test_planted_credentials import NOTE_ID, TOKEN, planted, side  # noqa: F401 - the fixture


def test_audit_lists_each_place_a_planted_token_sits_never_its_value_and_exits_12(side):  # noqa: F811
    # INV no-credentials
    side.plant(planted())
    status, out, err = side.run("audit", "--json")
    assert status == 12, (out, err)
    data = json.loads(out)
    assert TOKEN not in out + err
    assert data["status"] == "found" and data["scanned"] == 1 and data["projects"] == ["app"]
    [finding] = data["findings"]
    assert finding["id"] == NOTE_ID and finding["project"] == "app" and finding["redacted_copy"] is None
    assert {(w["where"], w["kind"]) for w in finding["withheld"]} == {
        ("title", "github-token"), ("tags", "github-token"), ("body", "github-token")}
    assert shlex.split(finding["purge"])[1:] == ["purge", NOTE_ID, "--project", "app"]
    status, text, err = side.run("audit", "--all")
    assert status == 12 and TOKEN not in text + err
    assert f"app/{NOTE_ID}: title (github-token), tags (github-token), body line 2 (github-token)" in text


def test_a_clean_store_audits_clean_with_exit_0(side):  # noqa: F811
    status, out, err = side.run("save", "--title", "Zebra", "--json", input=b"The zebra pipeline.\n")
    assert status == 0, err
    status, out, _ = side.run("audit", "--all", "--json")
    data = json.loads(out)
    assert status == 0 and data["status"] == "clean" and data["scanned"] == 1 and data["findings"] == []


def test_fix_without_a_terminal_asks_for_yes_and_writes_nothing(laptop, store_dir):
    side_dir = store_dir / "projects" / "app" / "notes"
    side_dir.mkdir(parents=True)
    (side_dir / f"{NOTE_ID}.md").write_bytes(planted())
    status, out, err = laptop.run("audit", "--fix", cwd=laptop.checkout)
    assert status == 2 and "nothing was done" in err and TOKEN not in out + err
    assert sorted(p.name for p in side_dir.iterdir()) == [f"{NOTE_ID}.md"]
    printed = err.split("run `", 1)[1].split("`", 1)[0]  # INV printed-commands-run
    done = subprocess.run(shlex.split(printed), cwd=laptop.checkout, env=laptop.env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    [copy] = [p for p in side_dir.iterdir() if p.suffix == ".md"]  # the original purged, its copy in its place
    assert copy.name != f"{NOTE_ID}.md" and TOKEN.encode() not in copy.read_bytes()


def test_fix_replaces_the_note_by_a_redacted_copy_and_purges_it_from_the_store_and_the_cache(side):  # noqa: F811
    # INV no-credentials, INV corrections-visible
    side.plant(planted())
    assert side.run("search", "zebra", "--json")[0] == 0  # cached here first: the purge must reach the cache too
    status, out, err = side.run("audit", "--fix", "--yes", "--json")
    assert status == 0, (out, err)
    data = json.loads(out)
    assert data["status"] == "fixed" and TOKEN not in out + err
    [fixed] = data["fixed"]
    assert fixed["status"] == "purged" and fixed["id"] == NOTE_ID
    copy = fixed["copy"]
    status, out, _ = side.run("read", copy, "--json")
    note = json.loads(out)
    assert TOKEN not in out and note["withheld"] == []
    assert note["meta"]["corrects"] == NOTE_ID and note["meta"]["tags"] == ["zebra"]
    assert note["meta"]["title"] == "Deploy with [REDACTED:github-token]"
    assert f"agentmem audit: redacted copy of {NOTE_ID}" in note["meta"]["sources"]
    assert "Push with [REDACTED:github-token] as the password." in note["body"]
    status, out, _ = side.run("search", "zebra pipeline", "--json")
    assert [r["id"] for r in json.loads(out)["results"]] == [copy]
    status, out, err = side.run("read", NOTE_ID, "--json")
    assert status == 4 and "purged" in json.loads(out)["message"]
    assert not any(NOTE_ID in str(p) for p in (side.home / "cache").rglob("*.md"))
    status, out, _ = side.run("audit", "--json")
    assert status == 0 and json.loads(out)["status"] == "clean"


def test_fix_reuses_the_copy_an_interrupted_fix_saved(laptop, store_dir):
    # INV nothing-lost: a fix cut short between the copy and the purge saves no second copy
    folder = store_dir / "projects" / "app" / "notes"
    folder.mkdir(parents=True)
    (folder / f"{NOTE_ID}.md").write_bytes(planted())
    status, out, err = laptop.run("save", "--title", "Deploy with [REDACTED:github-token]", "--corrects", NOTE_ID,
                                  "--source", f"agentmem audit: redacted copy of {NOTE_ID}", "--json",
                                  input="The zebra pipeline deploys from the release branch.\n", cwd=laptop.checkout)
    assert status == 0, err
    copy = json.loads(out)["id"]
    status, out, err = laptop.run("audit", "--json", cwd=laptop.checkout)
    assert status == 12 and json.loads(out)["findings"][0]["redacted_copy"] == copy
    status, text, err = laptop.run("audit", "--fix", "--yes", cwd=laptop.checkout)
    assert status == 0 and f"redacted copy {copy} saved; the original is purged" in text and TOKEN not in text + err
    assert [p.name for p in folder.iterdir() if p.suffix == ".md"] == [f"{copy}.md"]


def test_a_note_whose_file_name_is_a_token_is_never_cached_or_named_and_audit_reports_it(laptop, store_dir):
    # INV no-credentials
    folder = store_dir / "projects" / "app" / "notes"
    folder.mkdir(parents=True)
    (folder / f"{TOKEN}.md").write_bytes(b"---\ntitle: zebra\n---\n\nThe zebra pipeline.\n")
    outs = []
    for args in (("search", "zebra", "--json"), ("search", "--json"), ("audit", "--json"), ("audit",),
                 ("audit", "--fix", "--yes")):
        status, out, err = laptop.run(*args, cwd=laptop.checkout)
        outs.append((status, out + err))
    assert all(TOKEN not in text for _, text in outs)
    assert json.loads(outs[0][1])["results"] == [] and outs[0][0] == 0
    assert not any(TOKEN in str(p) for p in (laptop.home / "cache").rglob("*"))
    [finding] = json.loads(outs[2][1])["findings"]
    assert outs[2][0] == 12 and finding["id"] == "[REDACTED:github-token]" and finding["purge"] is None
    assert finding["withheld"] == [{"where": "note ID", "kind": "github-token"}]
    assert "delete projects/app/notes/[REDACTED:github-token].md" in outs[3][1]
    assert sorted(p.name for p in folder.iterdir()) == [f"{TOKEN}.md"]  # --fix saved no copy of it


def _fix_on_a_terminal(laptop, answer: bytes) -> tuple[int, str]:
    """`audit --fix` with a terminal for stdin, given `answer`; (exit status, what it printed on stderr)."""
    import os
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen([*laptop.cli, "audit", "--fix"], cwd=laptop.checkout, env=laptop.env, stdin=slave,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.close(slave)
    os.write(master, answer)
    _, err = proc.communicate(timeout=120)
    os.close(master)
    return proc.returncode, err.decode()


def test_the_fix_prompt_names_the_note_by_its_title_and_says_the_original_is_deleted_for_good(laptop, store_dir):
    # INV no-credentials: the title shown is the redacted one
    folder = store_dir / "projects" / "app" / "notes"
    folder.mkdir(parents=True)
    (folder / f"{NOTE_ID}.md").write_bytes(planted())
    status, err = _fix_on_a_terminal(laptop, b"n\n")
    assert TOKEN not in err
    [prompt] = [ln for ln in err.splitlines() if "[y/N]" in ln]
    assert f'app/{NOTE_ID} "Deploy with [REDACTED:github-token]"' in prompt
    assert "DELETE the original for good" in prompt and "cannot be undone" in prompt
    assert sorted(p.name for p in folder.iterdir()) == [f"{NOTE_ID}.md"]  # answered no: nothing done
    status, out, _ = laptop.json("audit", cwd=laptop.checkout)
    assert out["findings"][0]["title"] == "Deploy with [REDACTED:github-token]"
