"""The ranked index under damage: a corrupt block, an unusable index folder, killed rebuilds."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from agentmem.search import build, ranked
from agentmem.search import index as rindex
from tests.test_ranked import _project, painting_machine, write_note


def _scores(pdir, query: str) -> list[tuple[str, str]]:
    return [(h.id, h.score.hex()) for h in ranked.rank(pdir, query, 50)]


def test_a_damaged_posting_block_is_detected_and_the_index_rebuilt(tmp_path):
    # INV index-derived
    pdir = _project(tmp_path, "live")
    for i in range(40):
        write_note(pdir, f"deploy note {i} " + "rollback " * (i % 5), minutes=i)
    expected = _scores(pdir, "deploy rollback")
    conn = sqlite3.connect(rindex.index_path(pdir))
    (blob,) = conn.execute("SELECT post FROM blocks WHERE term='rollback'").fetchone()
    damaged = bytearray(blob)
    damaged[4] ^= 0x7F  # the first posting's term count: a valid SQLite row with wrong numbers inside
    conn.execute("UPDATE blocks SET post=? WHERE term='rollback'", (bytes(damaged),))
    conn.commit()
    conn.close()
    assert _scores(pdir, "deploy rollback") == expected
    conn = sqlite3.connect(rindex.index_path(pdir))
    assert conn.execute("SELECT post FROM blocks WHERE term='rollback'").fetchone()[0] == blob  # rebuilt
    conn.close()


def _scan_machine(machines, tmp_path):
    m, checkout = painting_machine(machines, tmp_path)
    status, out, _ = m.json("search", "what did Melanie paint", cwd=checkout)
    assert status == 0 and out["scan"] is False and out["scan_reason"] is None
    [pdir] = [p for p in (m.home / "cache").glob("*/projects/app")]
    return m, checkout, pdir


def _answers_by_scan(m, checkout) -> None:
    status, out, err = m.json("search", "what did Melanie paint", cwd=checkout)
    assert status == 0 and "Traceback" not in err
    assert [r["title"] for r in out["results"]] == ["Painting class"]
    assert out["scan"] is True and "ranked.sqlite" in out["scan_reason"]
    assert out["stale"] is False  # the store was checked: the notes are current, only the index is missing
    status, text, _ = m.run("search", "what did Melanie paint", cwd=checkout)
    assert status == 0 and "note: searched without the index - the index at" in text
    assert "Painting class" in text


def test_search_answers_by_a_scan_and_says_so_when_the_index_file_is_a_directory(machines, tmp_path):
    # INV search-without-index
    m, checkout, pdir = _scan_machine(machines, tmp_path)
    os.unlink(pdir / "index" / "ranked.sqlite")
    (pdir / "index" / "ranked.sqlite").mkdir()
    _answers_by_scan(m, checkout)
    m.run("save", input="Melanie also painted a portrait.", cwd=checkout, check_status=0)  # saves go on
    status, out, _ = m.json("search", "Melanie painted", cwd=checkout)
    assert status == 0 and len(out["results"]) == 2 and out["scan"] is True


def test_search_answers_by_a_scan_when_the_index_folder_cannot_be_made(machines, tmp_path):
    # INV search-without-index
    import shutil

    m, checkout, pdir = _scan_machine(machines, tmp_path)
    shutil.rmtree(pdir / "index")
    (pdir / "index").write_text("not a folder")
    _answers_by_scan(m, checkout)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes to a read-only folder")
def test_search_answers_by_a_scan_when_the_index_folder_is_read_only(machines, tmp_path):
    # INV search-without-index
    m, checkout, pdir = _scan_machine(machines, tmp_path)
    os.unlink(pdir / "index" / "ranked.sqlite")
    os.chmod(pdir / "index", 0o555)
    try:
        _answers_by_scan(m, checkout)
    finally:
        os.chmod(pdir / "index", 0o755)


def test_a_hybrid_search_without_its_index_falls_back_to_words_and_says_so(machines, tmp_path):
    # INV search-without-index
    m, checkout, pdir = _scan_machine(machines, tmp_path)
    os.unlink(pdir / "index" / "ranked.sqlite")
    (pdir / "index" / "ranked.sqlite").mkdir()
    status, text, _ = m.run("search", "what did Melanie paint", "--mode", "hybrid", cwd=checkout)
    assert status == 0 and "note: searched without the index, ranked by words only - the index at" in text


def _temp_files(folder) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.startswith(".tmp-"))


HOLDER = """
import fcntl, os, sys, time
folder = sys.argv[1]
fd = os.open(os.path.join(folder, "rebuild.lock"), os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_SH)
open(os.path.join(folder, ".tmp-ranked.sqlite.live"), "wb").write(b"a live rebuild's partial file")
print("holding", flush=True)
sys.stdin.read()
"""


@pytest.mark.skipif(sys.platform == "win32", reason="advisory locks (fcntl) are POSIX")
def test_killed_rebuilds_cannot_pile_up_and_a_live_rebuilds_temp_file_is_kept(tmp_path):
    # INV temp-swept
    pdir = _project(tmp_path, "live")
    write_note(pdir, "the build uses ninja", minutes=1)
    folder = pdir / "index"
    folder.mkdir()
    for i in range(5):  # what killed rebuilds leave: young partial files (the age rule alone keeps them an hour)
        (folder / f".tmp-ranked.sqlite.{1000 + i}.dead").write_bytes(os.urandom(4096))
    old = folder / ".tmp-ranked.sqlite.999.old"
    old.write_bytes(b"x")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        ranked.rebuild(pdir)  # another rebuild is live: only files past the age limit can be a dead one's
        assert _temp_files(folder) == [".tmp-ranked.sqlite.1000.dead", ".tmp-ranked.sqlite.1001.dead",
                                       ".tmp-ranked.sqlite.1002.dead", ".tmp-ranked.sqlite.1003.dead",
                                       ".tmp-ranked.sqlite.1004.dead", ".tmp-ranked.sqlite.live"]
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    os.unlink(folder / ".tmp-ranked.sqlite.live")  # what the live rebuild does when it finishes
    ranked.rebuild(pdir)  # no rebuild is live now: every temp file is a dead one's, whatever its age
    assert _temp_files(folder) == []
    assert [h.id for h in ranked.rank(pdir, "ninja", 5)]


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_rebuilds_killed_mid_way_leave_no_partial_index_after_the_next_one(tmp_path):
    # INV temp-swept
    from tests.fixtures_core import REPO

    pdir = _project(tmp_path, "live")
    for i in range(3000):
        write_note(pdir, f"note {i} about deploys, rollbacks and the release train " * 3, minutes=i)
    code = "import sys; from agentmem.search import ranked; ranked.rebuild(sys.argv[1])"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    killed = 0
    for delay in (0.01, 0.02, 0.03, 0.05, 0.08):
        proc = subprocess.Popen([sys.executable, "-c", code, str(pdir)], env=env)
        deadline = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < deadline:
            if (pdir / "index").is_dir() and any(f".{proc.pid}." in n for n in _temp_files(pdir / "index")):
                break  # its own partial file is there (temp names carry the writer's pid)
            time.sleep(0.005)
        time.sleep(delay)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            killed += 1
        proc.wait(timeout=30)
        assert len(_temp_files(pdir / "index")) <= 1  # each rebuild swept the partial files of those killed before
    assert killed >= 3
    ranked.rebuild(pdir)
    assert _temp_files(pdir / "index") == []
    assert len(ranked.rank(pdir, "release train", 5)) == 5


def test_an_in_memory_index_answers_exactly_like_the_one_on_disk(tmp_path):
    # INV index-derived: the scan a search falls back to is the same index, built in memory
    pdir = _project(tmp_path, "live")
    for i in range(60):
        write_note(pdir, f"deploy note {i} " + "rollback staging " * (i % 4), title=f"t{i % 7}", minutes=i)
    for query in ("deploy rollback", "staging", '"rollback staging"', "t3 deploy"):
        idx = build.in_memory(pdir)
        try:
            mem = [(h.id, h.score.hex()) for h in ranked._search(idx, query, 50, "ranked", [])]
        finally:
            idx.close()
        assert mem == _scores(pdir, query), query


@pytest.mark.skipif(sys.platform == "win32", reason="advisory locks (fcntl) are POSIX")
def test_a_folder_without_advisory_locks_still_rebuilds_and_sweeps_by_age(tmp_path, monkeypatch):
    # INV temp-swept: where flock is refused (some network filesystems), only old temp files can be a dead one's
    import errno
    import fcntl

    pdir = _project(tmp_path, "live")
    write_note(pdir, "the build uses ninja", minutes=1)
    folder = pdir / "index"
    folder.mkdir()
    young, old = folder / ".tmp-ranked.sqlite.1.young", folder / ".tmp-ranked.sqlite.999999999.old"
    young.write_bytes(b"x")
    old.write_bytes(b"x")
    os.utime(old, (time.time() - 7200, time.time() - 7200))

    def no_locks(fd, op):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_locks)
    ranked.rebuild(pdir)
    assert _temp_files(folder) == [young.name]
    assert [h.id for h in ranked.rank(pdir, "ninja", 5)]
