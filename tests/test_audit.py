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
    assert done.returncode == 12, done.stderr
    assert len(list(side_dir.iterdir())) == 2


def test_fix_saves_one_redacted_copy_that_corrects_the_original_and_says_which_purge_remains(side):  # noqa: F811
    # INV no-credentials, INV corrections-visible
    side.plant(planted())
    status, out, err = side.run("audit", "--fix", "--yes", "--json")
    assert status == 12, (out, err)
    data = json.loads(out)
    [fixed] = data["fixed"]
    assert fixed["status"] == "copied" and fixed["id"] == NOTE_ID
    copy = fixed["copy"]
    status, out, _ = side.run("read", copy, "--json")
    note = json.loads(out)
    assert TOKEN not in out and note["withheld"] == []
    assert note["meta"]["corrects"] == NOTE_ID and note["meta"]["tags"] == ["zebra"]
    assert note["meta"]["title"] == "Deploy with [REDACTED:github-token]"
    assert f"agentmem audit: redacted copy of {NOTE_ID}" in note["meta"]["sources"]
    assert "Push with [REDACTED:github-token] as the password." in note["body"]
    status, out, _ = side.run("search", "zebra pipeline", "--json")
    results = json.loads(out)["results"]
    assert [r["id"] for r in results] == [copy, NOTE_ID] and results[1]["corrected_by"] == [copy]
    # A second fix finds the copy and saves no other; the text names the purge left to run.
    status, text, err = side.run("audit", "--fix", "--yes")
    assert status == 12 and TOKEN not in text + err
    assert f"redacted copy {copy} saved" in text and f"purge {NOTE_ID} --project app" in text
    status, out, _ = side.run("search", "", "--json")
    assert sorted(r["id"] for r in json.loads(out)["results"]) == sorted([copy, NOTE_ID])


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
