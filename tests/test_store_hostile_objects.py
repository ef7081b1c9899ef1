"""Hostile or damaged objects in a folder store and in the cache: nothing hangs, nothing stops the other
notes, nothing damaged is served for ever, and what crashed writers left is swept."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from agentmem.errors import EXIT_INVALID, EXIT_REMOTE_ERROR
from agentmem.fsutil import STALE_TEMP_SECONDS
from agentmem.note import document
from agentmem.replica import cache, fetch_plan
from agentmem.store import dirwatch
from agentmem.store.folder import FolderStore
from tests.fixtures_core import REPO, make_machine, new_folder_store

NOTES = Path("projects") / "app" / "notes"


def note_bytes(title: str, body: str) -> tuple[str, bytes]:
    note = document.build(body=body, title=title, kind="note", project="app", agent="t")
    return note.id, note.render()


def plant(store: Path, note_id: str, data: bytes) -> Path:
    path = store / NOTES / f"{note_id}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


@pytest.fixture
def machine(tmp_path):
    store = tmp_path / "store"
    new_folder_store(store)
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = make_machine(tmp_path, "m", store, {checkout: "app"})
    m.checkout, m.store = checkout, store
    return m


def test_a_fifo_in_the_store_neither_hangs_a_search_nor_keeps_the_other_notes_out(machine):
    # INV unreadable-skipped: reading it used to block every refresh on every machine
    fifo = machine.store / NOTES / "20261130T000000000Z-fifofifo.md"
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    good, data = note_bytes("good", "a readable note beside the FIFO")
    plant(machine.store, good, data)
    started = time.monotonic()
    status, out, err = machine.json("search", "readable", cwd=machine.checkout)
    assert status == 0 and time.monotonic() - started < 20, err
    assert [r["id"] for r in out["results"]] == [good]
    assert [u["id"] for u in out["unreadable"]] == ["20261130T000000000Z-fifofifo"]
    assert "not a regular file (a FIFO)" in out["unreadable"][0]["message"]
    status, text, _ = machine.run("search", "readable", cwd=machine.checkout)
    assert "1 note(s) in the store could not be read" in text
    status, _, err = machine.run("read", "20261130T000000000Z-fifofifo", cwd=machine.checkout)
    assert status == EXIT_REMOTE_ERROR and "a FIFO" in err and "Traceback" not in err


def test_a_device_and_a_huge_file_in_the_store_are_refused_without_reading_them(machine, tmp_path):
    # INV unreadable-skipped: a character device or a multi-GB file gave a MemoryError traceback
    device = machine.store / NOTES / "20261130T000000001Z-chardevi.md"
    device.parent.mkdir(parents=True)
    try:
        os.mknod(device, stat.S_IFCHR | 0o644, os.makedev(1, 5))  # /dev/zero: endless bytes
    except PermissionError:
        pytest.skip("cannot create a device node here")
    huge = machine.store / NOTES / "20261130T000000002Z-hugefile.md"
    with open(huge, "wb") as fh:
        fh.truncate(3 * 1024**3)  # sparse: 3 GiB to a reader, no disk used
    good, data = note_bytes("good", "a readable note beside a device")
    plant(machine.store, good, data)
    status, out, err = machine.json("search", "readable", cwd=machine.checkout)
    assert status == 0 and "Traceback" not in err
    assert [r["id"] for r in out["results"]] == [good]
    reasons = {u["id"]: u["message"] for u in out["unreadable"]}
    assert "a character device" in reasons["20261130T000000001Z-chardevi"]
    assert "too large" in reasons["20261130T000000002Z-hugefile"]
    status, _, err = machine.run("read", "20261130T000000002Z-hugefile", cwd=machine.checkout)
    assert status == EXIT_INVALID and "too large" in err and "Traceback" not in err


def test_one_note_this_user_may_not_read_is_skipped_and_newer_notes_still_arrive(tmp_path):
    # INV unreadable-skipped, run as an unprivileged user (root reads anything)
    if subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "true"]).returncode != 0:
        pytest.skip("setpriv cannot drop to nobody here")
    shared = Path(tempfile.mkdtemp(prefix="agentmem-perm-", dir="/tmp"))
    try:
        os.chmod(shared, 0o755)
        store = shared / "store"
        new_folder_store(store)
        closed, data = note_bytes("older", "an old note nobody may read")
        os.chmod(plant(store, "20261130T000000000Z-closedaa", data), 0o000)
        first, data = note_bytes("first", "the team decided on zebras")
        plant(store, first, data)
        for folder in (store, store / "projects", store / "projects" / "app", store / NOTES):
            os.chmod(folder, 0o755)
        home, checkout = shared / "home", shared / "app"
        home.mkdir()
        checkout.mkdir()
        (home / "config.toml").write_text(f'agent = "n"\n[store]\nkind = "folder"\nlocation = "{store}"\n'
                                          f'[projects]\n"{checkout}" = "app"\n')
        os.chown(home, 65534, 65534)
        os.chown(home / "config.toml", 65534, 65534)

        def search_as_nobody() -> dict:
            env = {"PATH": os.environ["PATH"], "HOME": str(shared), "AGENTMEM_HOME": str(home),
                   "PYTHONPATH": str(REPO)}
            done = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable,
                                   "-m", "agentmem", "search", "zebras", "--json"], cwd=checkout, env=env,
                                  capture_output=True, text=True, timeout=60)
            assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
            return json.loads(done.stdout)

        out = search_as_nobody()
        assert [r["id"] for r in out["results"]] == [first]
        assert [u["id"] for u in out["unreadable"]] == ["20261130T000000000Z-closedaa"]
        assert "Permission denied" in out["unreadable"][0]["message"]
        later, data = note_bytes("later", "more about zebras, saved afterwards")
        os.chmod(plant(store, later, data), 0o644)
        out = search_as_nobody()
        assert {r["id"] for r in out["results"]} == {first, later}
        assert out["stale"] is False and len(out["unreadable"]) == 1
    finally:
        subprocess.run(["rm", "-rf", str(shared)])


def test_a_damaged_cached_note_is_downloaded_again_at_the_next_listing(tmp_path, monkeypatch):
    # a truncated cached note used to be served for ever
    store = new_folder_store(tmp_path / "store")
    home = tmp_path / "home"
    ids = []
    for i in range(5):
        note_id, data = note_bytes(f"n{i}", f"note number {i} about the harbour")
        store.put(document.note_path("app", note_id), data)
        ids.append(note_id)
    cache.refresh(home, store.description, "app")
    damaged = Path(cache.notes_dir(home, store.description, "app")) / f"{ids[-1]}.md"
    damaged.write_bytes(damaged.read_bytes()[:20])
    extra_id, data = note_bytes("extra", "a change, so the next search lists")
    store.put(document.note_path("app", extra_id), data)
    status = cache.refresh(home, store.description, "app")
    assert ids[-1] in status.added and damaged.read_bytes() == store.get(document.note_path("app", ids[-1]))


def test_a_listing_without_sizes_asks_the_store_for_a_bounded_batch_of_them(tmp_path, monkeypatch):
    store = new_folder_store(tmp_path / "store")
    home = tmp_path / "home"
    for i in range(6):
        note_id, data = note_bytes(f"n{i}", f"note {i}")
        store.put(document.note_path("app", note_id), data)
    cache.refresh(home, store.description, "app")
    monkeypatch.setattr(fetch_plan, "VERIFY_BATCH", 2)
    asked: list[int] = []
    real = FolderStore.sizes
    monkeypatch.setattr(FolderStore, "sizes", lambda self, paths: asked.append(len(paths)) or real(self, paths))
    extra_id, data = note_bytes("extra", "a change")
    store.put(document.note_path("app", extra_id), data)
    cache.refresh(home, store.description, "app")
    assert asked == [2]


def test_a_damaged_cached_note_is_replaced_from_a_bucket_listing(hub, alice_bucket, tmp_path):
    from agentmem.store.base import StoreDescription

    desc = StoreDescription("bucket", "alice/agent-memory")
    home = tmp_path / "home"
    note_id, data = note_bytes("kept", "what the bucket holds")
    hub.put_file("alice/agent-memory", document.note_path("app", note_id), data)
    cache.refresh(home, desc, "app", timeout=3)
    cached = Path(cache.notes_dir(home, desc, "app")) / f"{note_id}.md"
    cached.write_bytes(b"garbage")
    hub.feed = "404"  # listings carry every size: all cached notes are compared
    other_id, other = note_bytes("other", "a change")
    hub.put_file("alice/agent-memory", document.note_path("app", other_id), other)
    status = cache.refresh(home, desc, "app", timeout=3)
    assert note_id in status.added and cached.read_bytes() == data


def test_a_network_drive_that_hangs_makes_a_search_stale_within_the_budget(tmp_path, monkeypatch):
    # INV bounded-network, for the folder store too: no real drive hangs on demand here, so the
    # one kernel call a refresh makes first (the folder's stat) is held
    store = new_folder_store(tmp_path / "store")
    home = tmp_path / "home"
    cache.refresh(home, store.description, "app")
    release = threading.Event()
    real = dirwatch.signature
    monkeypatch.setattr(dirwatch, "signature", lambda folder: release.wait() or real(folder))
    started = time.monotonic()
    try:
        status = cache.refresh(home, store.description, "app", timeout=0.5)
    finally:
        release.set()
    assert time.monotonic() - started < 2.5
    assert status.stale and status.error == "offline" and "did not answer within 0.5 s" in status.reason


def test_stale_temp_files_are_swept_from_the_store_and_pending_but_a_live_writers_are_kept(machine, tmp_path):
    old = time.time() - STALE_TEMP_SECONDS - 600
    notes_dir = machine.store / NOTES
    notes_dir.mkdir(parents=True)
    crashed = notes_dir / ".tmp-20261130T000000000Z-aaaaaaaa.md.99999.deadbeef"
    writing = notes_dir / ".tmp-20261130T000000000Z-bbbbbbbb.md.99998.cafebabe"
    for path in (crashed, writing):
        path.write_bytes(b"half a note")
    os.utime(crashed, (old, old))
    pending = machine.home / "pending"
    pending.mkdir(parents=True)
    dead_pid = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True).stdout.strip()
    staged_dead = pending / f".tmp-20261130T000000000Z-cccccccc.{dead_pid}.0badf00d"
    staged_live = pending / f".tmp-20261130T000000000Z-dddddddd.{os.getpid()}.0badf00d"
    deleting = pending / ".tmp-del-20261130T000000000Z-eeeeeeee.0badf00d"
    fresh = pending / f".tmp-20261130T000000000Z-ffffffff.{dead_pid}.0badf00d"
    for folder in (staged_dead, staged_live, deleting, fresh):
        folder.mkdir()
        (folder / "note.md").write_bytes(b"x")
    for folder in (staged_dead, staged_live, deleting):
        os.utime(folder, (old, old))
    good, data = note_bytes("good", "a note")
    plant(machine.store, good, data)  # a change, so the search lists
    status, out, err = machine.json("search", cwd=machine.checkout)
    assert status == 0, err
    assert not crashed.exists() and writing.exists()  # a fresh temp file may belong to a writer elsewhere
    assert not staged_dead.exists() and not deleting.exists()
    assert staged_live.exists() and fresh.exists()  # a live process's, or too recent


def test_a_folder_store_read_never_follows_a_link_to_a_file(tmp_path):
    from agentmem.errors import NotFound, Unreadable

    store = new_folder_store(tmp_path / "store")
    secret = tmp_path / "secret.md"
    secret.write_text("private")
    folder = Path(store.root) / NOTES
    folder.mkdir(parents=True)
    inside_id, data = note_bytes("inside", "a note in the store")
    plant(Path(store.root), inside_id, data)
    os.symlink(secret, folder / "20261130T000000000Z-outsidea.md")
    os.symlink(folder / f"{inside_id}.md", folder / "20261130T000000000Z-insideaa.md")
    with pytest.raises(NotFound):  # leads outside the store
        store.get(str(NOTES / "20261130T000000000Z-outsidea.md"))
    with pytest.raises(Unreadable, match="not read"):  # a link, even to a note (O_NOFOLLOW)
        store.get(str(NOTES / "20261130T000000000Z-insideaa.md"))
