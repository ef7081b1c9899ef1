"""export and import: plain Markdown out, the same notes back in, other tools' memories brought in once."""

from __future__ import annotations

import hashlib
import json

from tests.fixtures_core import laptop, machines, make_machine, store_dir  # noqa: F401


def _save(m, title, text, *extra):
    status, out, err = m.json("save", "--title", title, "--text", text, *extra, cwd=m.checkout)
    assert status == 0, (out, err)
    return out["id"]


def test_export_writes_a_folder_per_project_an_index_newest_first_and_a_manifest(laptop, tmp_path):
    first = _save(laptop, "CI cache key", "The key includes the lockfile hash.")
    second = _save(laptop, "Deploy", "Deploy needs the VPN.", "--tag", "ops")
    dest = tmp_path / "export"
    status, out, err = laptop.json("export", dest, cwd=laptop.checkout)
    assert status == 0, err
    assert out["notes"] == 2 and out["projects"] == {"app": 2} and out["stale"] is False
    store_notes = laptop.env and (tmp_path / "shared-store" / "projects" / "app" / "notes")
    for note_id in (first, second):  # the store's own bytes: frontmatter and body
        assert (dest / "app" / f"{note_id}.md").read_bytes() == (store_notes / f"{note_id}.md").read_bytes()
    index = (dest / "app" / "index.md").read_text()
    assert index.index(f"({second}.md)") < index.index(f"({first}.md)")  # newest first, relative links
    manifest = json.loads((dest / "manifest.json").read_text())
    assert {e["id"] for e in manifest["notes"]} == {first, second}
    for e in manifest["notes"]:
        assert hashlib.sha256((dest / e["path"]).read_bytes()).hexdigest() == e["sha256"]


def test_exporting_again_into_the_same_folder_changes_nothing_that_did_not_change(laptop, tmp_path):
    _save(laptop, "one", "first finding")
    dest = tmp_path / "export"
    laptop.json("export", dest, cwd=laptop.checkout)
    before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in dest.rglob("*") if p.is_file()}
    status, out, _ = laptop.json("export", dest, cwd=laptop.checkout)
    assert status == 0 and out["written"] == 0 and out["unchanged"] == len(before)
    assert {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in dest.rglob("*") if p.is_file()} == before


def test_a_note_gone_from_the_store_leaves_the_export_and_the_users_own_files_stay(laptop, tmp_path):
    keep = _save(laptop, "keep", "stays")
    gone = _save(laptop, "gone", "goes away")
    dest = tmp_path / "export"
    laptop.json("export", dest, cwd=laptop.checkout)
    (dest / "app" / "my-own.md").write_text("the user's file")
    (tmp_path / "shared-store" / "projects" / "app" / "notes" / f"{gone}.md").unlink()
    status, out, _ = laptop.json("export", dest, cwd=laptop.checkout)
    assert status == 0 and out["removed"] == 1
    assert not (dest / "app" / f"{gone}.md").exists() and (dest / "app" / f"{keep}.md").exists()
    assert (dest / "app" / "my-own.md").read_text() == "the user's file"


def test_export_refuses_a_folder_that_holds_something_else(laptop, tmp_path):
    dest = tmp_path / "vault"
    dest.mkdir()
    (dest / "notes.md").write_text("mine")
    status, out, err = laptop.run("export", dest, cwd=laptop.checkout)
    assert status == 2 and "is not empty and holds no agentmem export" in err and "Traceback" not in err
    assert sorted(p.name for p in dest.iterdir()) == ["notes.md"]


def test_export_then_import_into_an_empty_store_gives_the_same_notes_byte_for_byte(laptop, tmp_path):
    ids = [_save(laptop, f"note {i}", f"finding number {i}") for i in range(3)]
    corr = _save(laptop, "fixed", "the right finding", "--corrects", ids[0])
    dest = tmp_path / "export"
    laptop.json("export", dest, cwd=laptop.checkout)
    other_store = tmp_path / "other-store"
    other_store.mkdir()
    desk = make_machine(tmp_path, "desk", other_store, {laptop.checkout: "app"})
    status, dry, _ = desk.json("import", "--from", "agentmem", dest, cwd=laptop.checkout)
    assert status == 0 and dry["counts"] == {"save": 4, "present": 0, "refused": 0}
    assert not (other_store / "projects").exists()  # a dry run saves nothing
    status, out, err = desk.json("import", "--from", "agentmem", dest, "--apply", cwd=laptop.checkout)
    assert status == 0, err
    for note_id in [*ids, corr]:
        rel = f"projects/app/notes/{note_id}.md"
        assert (other_store / rel).read_bytes() == (tmp_path / "shared-store" / rel).read_bytes()
    status, again, _ = desk.json("import", "--from", "agentmem", dest, "--apply", cwd=laptop.checkout)
    assert again["counts"] == {"save": 0, "present": 4, "refused": 0} and again["saved"] == []


def test_an_export_file_edited_since_is_refused_not_saved_under_its_old_id(laptop, tmp_path):
    note_id = _save(laptop, "one", "original text")
    dest = tmp_path / "export"
    laptop.json("export", dest, cwd=laptop.checkout)
    path = dest / "app" / f"{note_id}.md"
    path.write_bytes(path.read_bytes().replace(b"original", b"edited"))
    other_store = tmp_path / "other-store"
    other_store.mkdir()
    desk = make_machine(tmp_path, "desk", other_store, {laptop.checkout: "app"})
    status, out, _ = desk.json("import", "--from", "agentmem", dest, "--apply", cwd=laptop.checkout)
    assert out["counts"]["refused"] == 1 and "SHA-256" in out["items"][0]["reason"]
    assert not (other_store / "projects").exists()


def _claude_memory(user_home, checkout):
    import re

    folder = user_home / ".claude" / "projects" / re.sub(r"[^a-zA-Z0-9]", "-", str(checkout)) / "memory"
    folder.mkdir(parents=True)
    (folder / "testing.md").write_text("---\nname: testing\ndescription: how the suite runs\nmetadata:\n"
                                       "  type: project\n---\n\nRun pytest with -x first.\n")
    (folder / "MEMORY.md").write_text("- [testing](testing.md) - how the suite runs\n"
                                      "- The user prefers short commit messages.\n")
    return folder


def test_claude_codes_auto_memory_imports_one_note_per_memory_once(laptop):
    folder = _claude_memory(laptop.user_home, laptop.checkout)
    status, out, err = laptop.json("import", "--from", "claude-code", "--apply", cwd=laptop.checkout)
    assert status == 0, err
    assert sorted(i["title"] for i in out["items"]) == ["The user prefers short commit messages.", "testing"]
    assert {i["source"] for i in out["items"]} == {str(folder / "testing.md"), str(folder / "MEMORY.md")}
    status, text, _ = laptop.run("read", out["saved"][0]["id"], cwd=laptop.checkout)
    assert "how the suite runs" in text and "Run pytest with -x first." in text and "imported-claude-code" in text
    status, again, _ = laptop.json("import", "--from", "claude-code", "--apply", cwd=laptop.checkout)
    assert again["counts"] == {"save": 0, "present": 2, "refused": 0}


def test_claude_codes_memory_folder_of_another_directory_goes_to_the_project_that_directory_is_mapped_to(
        machines, tmp_path):
    from agentmem import errors

    app, lib, loose = tmp_path / "src" / "app", tmp_path / "src" / "lib", tmp_path / "src" / "loose"
    for folder in (app, lib, loose):
        folder.mkdir(parents=True)
    m = machines("laptop", {app: "app", lib: "lib"})
    of_lib, of_loose = _claude_memory(m.user_home, lib), _claude_memory(m.user_home, loose)
    status, out, err = m.json("import", "--from", "claude-code", str(of_lib), "--apply", cwd=app)
    assert status == 0, err
    assert {i["project"] for i in out["items"]} == {"lib"} and out["counts"]["save"] == 2
    status, found, _ = m.json("search", "pytest", "--project", "lib", cwd=app)
    assert [r["id"] for r in found["results"]][:1] == [out["saved"][0]["id"]]
    status, out, err = m.json("import", "--from", "claude-code", str(of_lib), "--project", "app", cwd=app)
    assert status == errors.EXIT_ATTENTION and {i["action"] for i in out["items"]} == {"refused"}  # lib's, not app's
    # A directory mapped nowhere: refused, saying how to map it; from a directory mapped nowhere as well.
    status, out, err = m.json("import", "--from", "claude-code", str(of_loose), cwd=m.user_home)
    assert status == errors.EXIT_ATTENTION and {i["action"] for i in out["items"]} == {"refused"}, err
    assert all("not mapped here" in i["reason"] and " map DIRECTORY PROJECT" in i["reason"] for i in out["items"])
    status, out, err = m.json("import", "--from", "claude-code", str(of_loose), "--project", "app", cwd=m.user_home)
    assert status == 0 and {i["project"] for i in out["items"]} == {"app"}, err


def test_codex_memories_import_a_note_per_task_group_and_ad_hoc_note(laptop):  # of no project: --project
    root = laptop.user_home / ".codex" / "memories"
    (root / "extensions" / "ad_hoc" / "notes").mkdir(parents=True)
    (root / "MEMORY.md").write_text(
        "# Task Group: app build\nscope: the build\n## Task 1: fix cache\n- keywords: cache\n"
        "# Task Group: app deploy\nscope: deploys\n## Reusable knowledge\n- the VPN is needed\n")
    (root / "extensions" / "ad_hoc" / "notes" / "vpn.md").write_text("# VPN\nUse the office VPN profile.\n")
    status, out, err = laptop.json("import", "--from", "codex", "--project", "app", cwd=laptop.checkout)
    assert status == 0, err
    assert [i["title"] for i in out["items"]] == ["app build", "app deploy", "VPN"]
    assert all(i["action"] == "save" for i in out["items"])


def test_gemini_global_memories_and_clines_memory_bank_import_and_nothing_else(laptop):
    gemini = laptop.user_home / ".gemini"
    gemini.mkdir()
    (gemini / "GEMINI.md").write_text("# Mine\n- Use pnpm.\n\n## Gemini Added Memories\n- Tests use vitest.\n\n"
                                      "```sh\n- not a memory: code\n```\n")
    status, out, _ = laptop.json("import", "--from", "gemini", "--project", "app", "--apply", cwd=laptop.checkout)
    assert [i["title"] for i in out["items"]] == ["Use pnpm.", "Tests use vitest."]
    bank = laptop.checkout / "memory-bank"
    bank.mkdir()
    (bank / "projectbrief.md").write_text("# Project brief\nA small app.\n")
    (bank / "progress.md").write_text("# Progress\nLogin works.\n")
    (bank / ".hidden.md").write_text("# Hidden\nnot one\n")
    (bank / "notes.txt").write_text("not Markdown\n")
    status, out, _ = laptop.json("import", "--from", "cline", cwd=laptop.checkout)
    assert [i["title"] for i in out["items"]] == ["Progress", "Project brief"]


def test_a_credential_in_an_imported_memory_is_refused_or_redacted_as_save_does(laptop):
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    gemini = laptop.user_home / ".gemini"
    gemini.mkdir()
    (gemini / "GEMINI.md").write_text(f"## Gemini Added Memories\n- deploy token is {token}\n")
    status, out, err = laptop.json("import", "--from", "gemini", "--project", "app", "--apply", cwd=laptop.checkout)
    assert out["counts"]["refused"] == 1 and out["saved"] == [] and token not in json.dumps(out) + err
    status, out, err = laptop.json("import", "--from", "gemini", "--project", "app", "--apply", "--redact",
                                   cwd=laptop.checkout)
    assert out["counts"]["save"] == 1 and token not in json.dumps(out) + err
    status, text, _ = laptop.run("read", out["saved"][0]["id"], cwd=laptop.checkout)
    assert "[REDACTED:" in text and token not in text


def test_an_import_that_refused_an_item_saves_the_rest_and_exits_with_the_attention_status_saying_so_last(laptop):
    from agentmem import errors

    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    gemini = laptop.user_home / ".gemini"
    gemini.mkdir()
    (gemini / "GEMINI.md").write_text(f"## Gemini Added Memories\n- deploy token is {token}\n- Use pnpm.\n")
    status, text, err = laptop.run("import", "--from", "gemini", "--project", "app", cwd=laptop.checkout)
    assert status == errors.EXIT_ATTENTION and text.splitlines()[-1] == (
        "refused 1 item(s), each with its reason above; nothing was saved")
    status, out, err = laptop.json("import", "--from", "gemini", "--project", "app", "--apply", cwd=laptop.checkout)
    assert status == errors.EXIT_ATTENTION and out["status"] == "ok"
    assert out["counts"] == {"save": 1, "present": 0, "refused": 1} and len(out["saved"]) == 1
    status, text, _ = laptop.run("import", "--from", "gemini", "--project", "app", "--apply", cwd=laptop.checkout)
    assert status == errors.EXIT_ATTENTION and text.splitlines()[-1] == (
        "refused 1 item(s), each with its reason above; the rest were imported") and token not in text
    status, found, _ = laptop.json("search", "pnpm", cwd=laptop.checkout)
    assert [r["id"] for r in found["results"]] == [out["saved"][0]["id"]]


def test_import_from_a_missing_folder_is_one_line_and_saves_nothing(laptop, tmp_path):
    status, out, err = laptop.run("import", "--from", "cline", tmp_path / "nope", cwd=laptop.checkout)
    assert status == 2 and err.count("\n") == 1 and "does not exist" in err
