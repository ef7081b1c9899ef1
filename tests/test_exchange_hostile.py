"""import and export against folders someone else wrote: links out, YAML bombs, FIFOs, crafted manifests.

A repository can ship a memory bank, and an export folder can be copied around: every read of such a
folder stays inside it (no link followed), is bounded, and never blocks; every write of an export stays
inside the export folder.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import time

from agentmem import errors
from tests.fixtures_core import laptop, machines, make_machine, store_dir  # noqa: F401


def _save(m, title, text):
    status, out, err = m.json("save", "--title", title, "--text", text, cwd=m.checkout)
    assert status == 0, (out, err)
    return out["id"]


# -- reading only inside the memory folder (issue U, item 2) -----------------------------------------

def test_a_link_in_a_memory_bank_to_a_file_outside_is_reported_and_never_read(laptop):  # INV confined-read
    history = laptop.user_home / ".bash_history"
    history.write_text("git push --force origin main\nssh deploy@10.0.0.7\n")
    bank = laptop.checkout / "memory-bank"
    bank.mkdir()
    (bank / "progress.md").write_text("# Progress\nLogin works.\n")
    (bank / "history.md").symlink_to(history)
    for extra in ([], ["--apply"]):
        status, out, err = laptop.json("import", "--from", "cline", *extra, cwd=laptop.checkout)
        assert status == errors.EXIT_ATTENTION, err  # the link is a refused item
        assert "push --force" not in json.dumps(out)
        by_title = {i["title"]: i for i in out["items"]}
        assert by_title["Progress"]["action"] == "save"
        linked = [i for i in out["items"] if i["source"].endswith("history.md")]
        assert linked and linked[0]["action"] == "refused" and "link" in linked[0]["reason"]
    notes = laptop.user_home.parent.parent / "shared-store" / "projects" / "app" / "notes"
    assert not any("push --force" in p.read_text() for p in notes.glob("*.md"))


def test_a_memory_bank_that_links_to_a_folder_outside_the_project_is_refused(laptop, tmp_path):  # INV confined-read
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secrets.md").write_text("# Secrets\nthe vault is in the basement\n")
    (laptop.checkout / "memory-bank").symlink_to(outside, target_is_directory=True)
    status, out, err = laptop.run("import", "--from", "cline", "--apply", cwd=laptop.checkout)
    assert status == 2 and err.count("\n") == 1 and "outside" in err and "Traceback" not in err
    assert "basement" not in out + err
    assert not (tmp_path / "shared-store" / "projects").exists()


def test_a_linked_folder_inside_codex_memories_is_not_followed(laptop, tmp_path):  # INV confined-read
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "2026-11-01T10-00-00-netrc.md").write_text("machine build.example login ci\n")
    root = laptop.user_home / ".codex" / "memories"
    (root / "extensions" / "ad_hoc").mkdir(parents=True)
    (root / "extensions" / "ad_hoc" / "notes").symlink_to(outside, target_is_directory=True)
    (root / "memory_summary.md").write_text("v1\n## User preferences\n- Short commit messages.\n")
    status, out, err = laptop.json("import", "--from", "codex", "--project", "app", cwd=laptop.checkout)
    assert status == errors.EXIT_ATTENTION, err  # the link is a refused item
    assert "build.example" not in json.dumps(out)
    assert [i["title"] for i in out["items"] if i["action"] == "save"] == ["Short commit messages."]
    assert any(i["action"] == "refused" and "link" in i["reason"] for i in out["items"])


# -- bounded parsing of foreign frontmatter (issue U, item 3) -----------------------------------------

ALIAS_BOMB = (
    "---\n"
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
    "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
    "name: [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n"
    "description: [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n"
    "---\n\nRun the tests with -x.\n"
)


def _limited(limit_bytes):
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
    return apply


def test_a_yaml_alias_bomb_in_an_imported_memory_costs_neither_memory_nor_time(laptop):  # INV confined-read
    import re

    assert len(ALIAS_BOMB.encode()) < 520
    folder = laptop.user_home / ".claude" / "projects" / re.sub(r"[^a-zA-Z0-9]", "-", str(laptop.checkout)) / "memory"
    folder.mkdir(parents=True)
    (folder / "testing.md").write_text(ALIAS_BOMB)
    started = time.monotonic()
    proc = subprocess.run([*laptop.cli, "import", "--from", "claude-code", "--json"], capture_output=True,
                          cwd=laptop.checkout, env=laptop.env, timeout=60,
                          preexec_fn=_limited(1024 * 1024 * 1024))  # 1 GiB of address space
    elapsed = time.monotonic() - started
    out, err = proc.stdout.decode(), proc.stderr.decode()
    assert proc.returncode == 0 and "Traceback" not in err and "MemoryError" not in err, (proc.returncode, err)
    assert elapsed < 20, elapsed
    (item,) = json.loads(out)["items"]
    assert item["action"] == "save" and item["title"] == "testing" and "lol" not in item["title"]


# -- export and import of an export folder someone crafted (issue U, item 10) ---------------------------

def test_a_temp_file_left_by_a_killed_export_does_not_block_the_next_export(laptop, tmp_path):  # INV confined-read
    _save(laptop, "one", "first finding")
    dest = tmp_path / "export"
    dest.mkdir()
    # What a first export killed while writing its manifest leaves: only fsutil's temp file.
    (dest / ".tmp-manifest.json.999999999.0badc0de").write_text('{"format": "agentmem-ex')
    status, out, err = laptop.json("export", dest, cwd=laptop.checkout)
    assert status == 0, err
    assert out["notes"] == 1 and (dest / "manifest.json").is_file()


def test_export_never_writes_or_removes_through_a_linked_project_folder(laptop, tmp_path):  # INV confined-read
    note = _save(laptop, "one", "first finding")
    dest = tmp_path / "export"
    laptop.json("export", dest, cwd=laptop.checkout)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "index.md").write_text("the user's own index\n")
    (victim / "keep.md").write_text("the user's own file\n")
    import shutil

    shutil.rmtree(dest / "app")
    (dest / "app").symlink_to(victim, target_is_directory=True)
    (dest / "other").symlink_to(victim, target_is_directory=True)
    manifest = json.loads((dest / "manifest.json").read_text())
    manifest["projects"].append("other")
    manifest["notes"].append({"id": "keep", "project": "app", "path": "app/keep.md", "sha256": "0" * 64})
    (dest / "manifest.json").write_text(json.dumps(manifest))
    before = {p.name: p.read_bytes() for p in victim.iterdir()}
    status, out, err = laptop.run("export", dest, cwd=laptop.checkout)
    assert status == 2 and err.count("\n") == 1 and "link" in err and "Traceback" not in err, (status, err)
    assert {p.name: p.read_bytes() for p in victim.iterdir()} == before
    assert not (victim / f"{note}.md").exists()


def test_a_fifo_named_in_a_manifest_is_refused_without_hanging_import(laptop, tmp_path):  # INV confined-read
    note = _save(laptop, "one", "first finding")
    dest = tmp_path / "export"
    laptop.json("export", dest, cwd=laptop.checkout)
    path = dest / "app" / f"{note}.md"
    path.unlink()
    os.mkfifo(path)
    desk = make_machine(tmp_path, "desk", tmp_path / "shared-store", {laptop.checkout: "app"})
    try:
        proc = subprocess.run([*desk.cli, "import", "--from", "agentmem", str(dest), "--json"],
                              capture_output=True, cwd=laptop.checkout, env=desk.env, timeout=30)
    except subprocess.TimeoutExpired:
        raise AssertionError("import --from agentmem hung on a FIFO") from None
    out = json.loads(proc.stdout)
    assert proc.returncode == errors.EXIT_ATTENTION, proc.stderr  # the FIFO is a refused item
    (item,) = out["items"]
    assert item["action"] == "refused" and "regular file" in item["reason"]


# INV confined-read
def test_a_manifest_that_is_a_fifo_is_refused_by_export_and_import_without_hanging(laptop, tmp_path):
    dest = tmp_path / "export"
    dest.mkdir()
    os.mkfifo(dest / "manifest.json")
    for args in (["export", dest], ["import", "--from", "agentmem", dest]):
        try:
            proc = subprocess.run([*laptop.cli, *map(str, args)], capture_output=True, cwd=laptop.checkout,
                                  env=laptop.env, timeout=30)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{args[0]} hung on a FIFO manifest") from None
        err = proc.stderr.decode()
        assert proc.returncode == 2 and err.count("\n") == 1 and "Traceback" not in err, (args, err)
