"""An export rerun does work in proportion to what changed (issue W, item 4): an unchanged note is neither read,
screened nor written again; a changed, new, retracted or purged one is, and so is a file changed by hand.

What each exported file was made from is kept in the machine folder (`exchange/exported_from.py`); what the
rerun writes, and only that, is flushed to disk before the manifest says the export is done.
"""

from __future__ import annotations

import hashlib
import json
import os

from agentmem import paths
from agentmem.replica import redacted_copies
from tests.fixtures_core import laptop, machines, make_machine, store_dir  # noqa: F401
from tests.test_planted_credentials import NOTE_ID, TOKEN, planted


def _save(m, title, text, *extra):
    status, out, err = m.json("save", "--title", title, "--text", text, *extra, cwd=m.checkout)
    assert status == 0, (out, err)
    return out["id"]


def _export(m, dest):
    status, out, err = m.json("export", dest, cwd=m.checkout)
    assert status == 0, (out, err)
    return out


def _cached(m, note_id):
    [notes] = list(m.home.glob("cache/*/projects/app/notes"))
    return notes / f"{note_id}.md"


def _files(dest):
    return {p.relative_to(dest).as_posix(): (p.stat().st_mtime_ns, p.read_bytes()) for p in dest.rglob("*")
            if p.is_file()}


def _manifest_true(dest):
    """Every note the manifest names is in the folder with that SHA-256, and nothing else is named."""
    manifest = json.loads((dest / "manifest.json").read_text())
    for e in manifest["notes"]:
        assert hashlib.sha256((dest / e["path"]).read_bytes()).hexdigest() == e["sha256"], e
    return {e["id"] for e in manifest["notes"]}


def _rewrite_in_place(path, data):
    """New bytes of the same length in the same file (same inode), its modification time set back."""
    st = path.stat()
    assert len(data) == st.st_size
    with open(path, "r+b") as fh:
        fh.write(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_an_unchanged_rerun_reads_no_cached_note(laptop, tmp_path):
    """The proof: after the first export a cached note's bytes are changed where a reread would see them
    and only there (same file, size and time), and the rerun leaves its exported copy as it was."""
    one = _save(laptop, "one", "the build uses the lockfile hash")
    _save(laptop, "two", "deploys need the VPN")
    dest = tmp_path / "export"
    _export(laptop, dest)
    before = _files(dest)
    cached = _cached(laptop, one)
    data = cached.read_bytes()
    _rewrite_in_place(cached, data.replace(b"lockfile", b"LOCKFILE"))
    out = _export(laptop, dest)
    assert out["written"] == 0 and out["notes"] == 2
    assert _files(dest) == before  # before the change the rerun read the cache and wrote LOCKFILE
    assert b"lockfile hash" in (dest / "app" / f"{one}.md").read_bytes()


def test_a_rerun_exports_again_the_notes_that_changed_and_only_those(laptop, tmp_path, store_dir):
    same = _save(laptop, "same", "the staging host is staging-3")
    edited = _save(laptop, "edited", "the cache key ignores the lockfile")
    wrong = _save(laptop, "wrong", "the linter runs in CI only")
    gone = _save(laptop, "gone", "a phone number that must not be kept")
    dest = tmp_path / "export"
    _export(laptop, dest)
    before = _files(dest)
    store_note = store_dir / "projects" / "app" / "notes" / f"{edited}.md"
    store_note.write_bytes(store_note.read_bytes().replace(b"ignores the lockfile", b"includes the lockfile hash"))
    added = _save(laptop, "added", "always run the linter before pushing")
    for args in (("retract", wrong, "--reason", "the linter runs locally too"), ("purge", gone, "--yes")):
        status, out, err = laptop.json(*args, cwd=laptop.checkout)
        assert status == 0, (args, out, err)
    out = _export(laptop, dest)
    after = _files(dest)
    assert b"includes the lockfile hash" in after[f"app/{edited}.md"][1]
    assert f"app/{added}.md" in after and f"app/{gone}.md" not in after and out["removed"] == 1
    assert after[f"app/{same}.md"] == before[f"app/{same}.md"] and after[f"app/{wrong}.md"] == before[f"app/{wrong}.md"]
    index = after["app/index.md"][1].decode()
    assert f"({wrong}.md) - note, " in index and "retracted" in index.split(f"({wrong}.md)")[1].split("\n")[0]
    assert _manifest_true(dest) == {same, edited, wrong, added}
    # edited, added, the index, the retract and purge records, the manifest
    assert out["written"] == 6, out
    assert _export(laptop, dest)["written"] == 0


def test_an_exported_file_deleted_or_edited_by_hand_is_written_again(laptop, tmp_path):
    deleted = _save(laptop, "deleted", "the build uses the lockfile hash")
    edited = _save(laptop, "edited", "deploys need the VPN")
    dest = tmp_path / "export"
    _export(laptop, dest)
    before = _files(dest)
    (dest / "app" / f"{deleted}.md").unlink()
    exported = dest / "app" / f"{edited}.md"
    _rewrite_in_place(exported, exported.read_bytes().replace(b"VPN", b"vpn"))  # even with its time set back
    out = _export(laptop, dest)
    assert out["written"] == 2
    assert {k: v[1] for k, v in _files(dest).items()} == {k: v[1] for k, v in before.items()}
    _manifest_true(dest)


def test_a_note_holding_a_newly_set_credential_value_is_screened_again(laptop, tmp_path):  # INV no-credentials
    """The value of HF_TOKEN is withheld wherever it appears: a rerun after it is set (or changed) screens the
    notes again, though no cached note changed."""
    value = "opaque-sentinel-credential-42"
    note_id = _save(laptop, "CI", f"the pipeline passes {value} to the uploader")
    dest = tmp_path / "export"
    _export(laptop, dest)
    assert value.encode() in (dest / "app" / f"{note_id}.md").read_bytes()  # no credential yet: a plain word
    laptop.env["HF_TOKEN"] = value
    out = _export(laptop, dest)
    shown = (dest / "app" / f"{note_id}.md").read_bytes()
    assert value.encode() not in shown and b"[REDACTED:" in shown
    assert [w["id"] for w in out["withheld"]] == [note_id]
    state = b"".join(p.read_bytes() for p in laptop.home.glob("cache/*/exports/*.json"))
    assert state and value.encode() not in state  # what the rerun keeps names no credential value
    _manifest_true(dest)
    assert _export(laptop, dest)["withheld"] == out["withheld"]  # and a rerun after says so still


def _as_an_older_scanner_left_it(m, dest, note_id, raw):
    """The cache and the export as an older scanner that missed a credential in `note_id` left them: the raw
    note cached and exported, the cache's `screened` marker and the export's record naming that scanner."""
    from agentmem.exchange import exported_from

    cached = _cached(m, note_id)
    cached.write_bytes(raw)
    (cached.parent.parent / paths.SCREENED_FILE).write_text("older files\nsha256:older rules")
    (dest / "app" / f"{note_id}.md").write_bytes(raw)
    [path] = list(m.home.glob(f"cache/*/{exported_from.FOLDER}/*.json"))
    state = json.loads(path.read_text())
    state["scanner"].update(fingerprint="older files", rules="sha256:older rules")
    entry = state["notes"][f"app/{note_id}.md"]
    entry[:3] = [exported_from.source_of(cached.stat()), exported_from.file_of((dest / "app" / f"{note_id}.md").stat()),
                 hashlib.sha256(raw).hexdigest()]
    path.write_text(json.dumps(state))


def test_a_note_exported_under_an_older_scanner_is_screened_again_by_a_newer_one(
        laptop, tmp_path, store_dir):  # INV no-credentials
    """A scanner that missed a credential exported the note as it was; the rerun by a scanner with other rules
    withholds it, and leaves the notes it finds clean as they were."""
    other = _save(laptop, "other", "deploys need the VPN")
    (store_dir / "projects" / "app" / "notes" / f"{NOTE_ID}.md").write_bytes(planted())
    dest = tmp_path / "export"
    _export(laptop, dest)
    _as_an_older_scanner_left_it(laptop, dest, NOTE_ID, planted())
    before = _files(dest)
    out = _export(laptop, dest)
    shown = (dest / "app" / f"{NOTE_ID}.md").read_bytes()
    assert TOKEN.encode() not in shown and b"[REDACTED:" in shown
    assert {w["id"] for w in out["withheld"]} == {NOTE_ID}
    assert _files(dest)[f"app/{other}.md"] == before[f"app/{other}.md"]
    _manifest_true(dest)


def test_records_made_under_other_rules_or_of_another_file_are_not_reused(tmp_path, monkeypatch):
    """What `exported_from` keeps holds for the scanner that screened it and the file as it was left."""
    from agentmem.exchange import exported_from

    dest = tmp_path / "export"
    (dest / "app").mkdir(parents=True)
    (dest / "app" / "n.md").write_bytes(b"note")
    made = exported_from.ExportedFrom(str(tmp_path / "machine"), "store", str(dest))
    made.note("app/n.md", [4, 1, 2], "f" * 64, ("t", "note", "2026", "", ""), [])
    made.save()

    def again():
        return exported_from.ExportedFrom(str(tmp_path / "machine"), "store", str(dest))

    assert again().reuse("app/n.md", [4, 1, 2]) is not None
    assert again().reuse("app/n.md", [4, 1, 3]) is None  # the cached note changed
    assert exported_from.ExportedFrom(str(tmp_path / "machine"), "store", str(tmp_path / "elsewhere")
                                      ).reuse("app/n.md", [4, 1, 2]) is None
    monkeypatch.setattr(redacted_copies, "_rules", "sha256:other")
    monkeypatch.setattr(redacted_copies, "_fingerprint", "other files")
    assert again().reuse("app/n.md", [4, 1, 2]) is None


def test_an_export_flushes_exactly_what_it_wrote_and_a_rerun_that_wrote_nothing_flushes_nothing(
        laptop, tmp_path, monkeypatch):  # INV export-durable
    """No machine-wide `sync`: each file written and each folder naming it is fsynced before the manifest."""
    for i in range(12):  # more files than Flush.WORKERS: the fsyncs run side by side
        _save(laptop, f"note {i}", f"finding number {i}")
    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(fd):
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        return real_fsync(fd)

    def sync():
        raise AssertionError("os.sync flushes every disk of the machine")

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "sync", sync)
    dest = tmp_path / "export"
    out = _export(laptop, dest)
    files = {str(p) for p in dest.rglob("*") if p.is_file() and p.name != "manifest.json"}
    assert out["written"] == len(files) + 1 == 14  # 12 notes, the index, the manifest
    # the manifest is written durable (its temp file fsynced, then renamed) and last: after every other file
    # and every folder naming one (the export's own, made in tmp_path: that too)
    last = max(i for i, p in enumerate(synced) if os.path.basename(p).startswith(".tmp-manifest.json"))
    assert files | {str(dest), str(dest / "app"), str(tmp_path)} <= set(synced[:last])
    synced.clear()
    assert _export(laptop, dest)["written"] == 0
    assert [p for p in synced if p.startswith(str(dest))] == []


def test_the_records_of_the_folders_exported_last_are_kept_and_older_ones_removed(tmp_path):
    from agentmem.exchange import exported_from

    machine = str(tmp_path / "machine")
    paths = []
    for i in range(exported_from.KEEP + 2):
        made = exported_from.ExportedFrom(machine, "store", str(tmp_path / f"export-{i}"))
        made.save()
        os.utime(made.path, ns=(10**18 + i, 10**18 + i))  # written in this order
        paths.append(made.path)
    kept = sorted(str(p) for p in (tmp_path / "machine" / "cache" / "store" / exported_from.FOLDER).iterdir())
    assert kept == sorted(paths[2:])


def test_the_manifest_text_is_what_json_writes_with_an_indent_of_two():
    """The manifest is written by a faster equivalent of `json.dumps(indent=2)`: the same bytes, so a rerun of
    an older export finds its manifest unchanged."""
    from agentmem.exchange.export import indented_json

    odd = ["", "plain-id_1.md", 'a "quote"', "back\\slash", "tab\there", "line\nbreak", "\u2028", "\x00\x1f",
           "caf\u00e9 \U0001f600", "\ud800", "</script>"]
    value = {"format": "agentmem-export", "version": 1, "projects": ["app", "big"], "empty": [], "none": {},
             "notes": [{"id": s, "n": 1.5, "ok": True, "no": None, "list": [s, [], {}]} for s in odd],
             "records": [], "nested": {"a": {"b": [1, {"c": odd}]}}, "odd keys": {s: s for s in odd}}
    assert indented_json(value) == json.dumps(value, indent=2, ensure_ascii=False)
