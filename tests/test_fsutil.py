"""Atomic writes: a reader sees the old file or the whole new one, never part of either."""

from __future__ import annotations

import os
import threading

import pytest

from agentmem import fsutil


def test_a_write_that_fails_before_its_rename_leaves_the_old_file_and_no_temp(tmp_path, monkeypatch):
    # INV atomic-write
    target = tmp_path / "config.toml"
    target.write_bytes(b"old = 1\n")

    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        fsutil.write_atomic(target, b"new = 2\n" * 1000)
    assert target.read_bytes() == b"old = 1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]


def test_readers_racing_a_writer_see_only_whole_versions(tmp_path):
    # INV atomic-write
    target = tmp_path / "state.json"
    versions = [bytes([65 + i]) * 200_000 for i in range(8)]
    fsutil.write_atomic(target, versions[0])
    seen, stop = set(), threading.Event()

    def read():
        while not stop.is_set():
            seen.add(target.read_bytes())

    reader = threading.Thread(target=read)
    reader.start()
    for data in versions * 5:
        fsutil.write_atomic(target, data)
    stop.set()
    reader.join()
    assert seen <= set(versions)


def test_exclusive_create_lets_exactly_one_of_two_writers_win(tmp_path):
    # INV atomic-write, INV append-only
    target = tmp_path / "notes" / "a.md"
    assert fsutil.create_exclusive_atomic(target, b"first") is True
    assert fsutil.create_exclusive_atomic(target, b"second") is False
    assert target.read_bytes() == b"first"


def test_stale_temp_files_are_swept_and_fresh_ones_and_notes_are_kept(tmp_path):
    # pid 999999999 is above any pid_max: its writer is surely gone (a live writer keeps its temp file)
    stale, fresh, note = tmp_path / ".tmp-a.md.999999999.ab", tmp_path / ".tmp-b.md.2.cd", tmp_path / "c.md"
    for p in (stale, fresh, note):
        p.write_bytes(b"x")
    old = os.stat(stale).st_mtime - fsutil.STALE_TEMP_SECONDS - 10
    os.utime(stale, (old, old))
    fsutil.sweep_temp(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [fresh.name, note.name]


def test_a_flush_of_many_files_is_one_syncfs_of_their_file_system_not_an_fsync_each(tmp_path, monkeypatch):
    # INV export-durable: past the threshold the files are made durable by syncfs of the file system they are
    # on (Linux), never by os.sync of every disk; below it, by an fsync each.
    import sys

    from agentmem import fsutil

    if not sys.platform.startswith("linux"):
        pytest.skip("syncfs is Linux's")
    fsyncs: list[str] = []
    monkeypatch.setattr(fsutil, "fsync_file", lambda path: fsyncs.append(path))
    monkeypatch.setattr(fsutil.os, "sync", lambda: pytest.fail("os.sync flushes every disk"))
    flush = fsutil.Flush()
    monkeypatch.setattr(flush, "WHOLE_FILE_SYSTEM", 3)
    for i in range(4):
        (tmp_path / f"n{i}.md").write_bytes(b"x")
        flush.wrote(str(tmp_path / f"n{i}.md"))
    flush.done()
    assert fsyncs == []  # one syncfs instead
    few = fsutil.Flush()
    few.wrote(str(tmp_path / "n0.md"))
    few.done()
    assert fsyncs == [str(tmp_path / "n0.md")]


def test_a_sync_round_of_thousands_flushes_the_caches_file_system_not_every_disk(tmp_path, monkeypatch):
    # INV atomic-cache: a sync's round of many notes is made durable by one syncfs of the cache's file
    # system (Linux), not os.sync, which waits on every disk of the machine.
    import sys

    from agentmem.replica import catching_up

    if not sys.platform.startswith("linux"):
        pytest.skip("syncfs is Linux's")
    flushed: list[list[str]] = []
    monkeypatch.setattr(fsutil, "sync_file_systems", lambda folders: flushed.append(list(folders)) or True)
    monkeypatch.setattr(catching_up.os, "sync", lambda: pytest.fail("os.sync flushes every disk"))
    names: list[str] = []
    with catching_up.durable(str(tmp_path), names):
        names.extend(f"20261205T000000{i:03d}Z-abcdefgh" for i in range(catching_up.FLUSH_ALL_FROM))
    assert flushed == [[str(tmp_path)]]
