"""Building a project's ranked index from scratch: into a temp file renamed into place, or in memory.

INV temp-swept: a rebuild (and the vector snapshot's writer, search/vectors.py) holds the index
folder's rebuild lock (`rebuild.lock`, shared) from before it creates its temp file until it has
renamed or removed it. Before starting, a rebuild that can take the lock exclusively knows that no
other writer is live, so every temp file in the folder is a dead one's (a killed rebuild leaves its
partial file) and is removed whatever its age; one that cannot removes only temp files older than
`fsutil.STALE_TEMP_SECONDS`. Killed rebuilds therefore cannot pile up, and a live writer's file is
never removed. Where there are no advisory locks (Windows), the age rule alone applies.

`in_memory` builds the same index in memory, for one search where the index folder cannot be used
(unwritable, or `ranked.sqlite` is not a file). INV search-without-index: that search still answers
from every note and says so (`scan`, `scan_reason`: memory/recall.py), and is not `stale`, which
means only that the store could not be checked.
"""

from __future__ import annotations

import os
import sqlite3
import time
from array import array

from agentmem.fsutil import sweep_temp, temp_path_for
from agentmem.paths import REBUILD_LOCK
from agentmem.search import current, index, words

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Callable

LOCK_FILE = REBUILD_LOCK
PROGRESS_EVERY = 250  # notes indexed between two reports of a build's progress


class _BlockWriter:
    """A rebuild's postings, written as one blob per term. Past index.SPILL_POSTINGS held in memory they
    are spilled to a temp table as parts, joined per term at the end: memory stays bounded."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        self.held: dict[str, array] = {}
        self.size = self.parts = 0

    def add(self, num: int, doc: index.Doc) -> None:
        held = self.held
        for t, c in doc.tf.items():
            post = held.get(t)
            if post is None:
                post = held[t] = array("i")
            post.extend((num, c, doc.dl))
        self.size += len(doc.tf)
        if self.size >= index.SPILL_POSTINGS:
            self._spill()

    def _spill(self) -> None:
        if not self.parts:
            self.conn.execute(
                "CREATE TEMP TABLE parts(term TEXT NOT NULL, part INTEGER NOT NULL, post BLOB NOT NULL,"
                " PRIMARY KEY(term, part)) WITHOUT ROWID"
            )
        self.conn.executemany(
            "INSERT INTO parts(term, part, post) VALUES(?, ?, ?)",
            ((t, self.parts, p.tobytes()) for t, p in sorted(self.held.items())),
        )
        self.held, self.size, self.parts = {}, 0, self.parts + 1

    def finish(self) -> None:
        insert = "INSERT INTO blocks(term, df, crc, post) VALUES(?, ?, ?, ?)"
        if not self.parts:
            self.conn.executemany(insert, (index._block_row(t, p) for t, p in sorted(self.held.items())))
            return
        self._spill()
        term: str | None = None
        chunks: list[bytes] = []
        # Notes were numbered in the order read, so a term's parts in order are its postings by num.
        for t, post in self.conn.execute("SELECT term, post FROM parts ORDER BY term, part"):
            if t != term and chunks:
                self.conn.execute(insert, index._block_row(str(term), b"".join(chunks)))
                chunks = []
            term = t
            chunks.append(post)
        if chunks:
            self.conn.execute(insert, index._block_row(str(term), b"".join(chunks)))
        self.conn.execute("DROP TABLE parts")


def _build(conn: sqlite3.Connection, pdir: str | os.PathLike[str], on_disk: bool,
           progress: Callable[[int, int], object] | None = None) -> index.Index:
    """Create the tables in `conn` and index every note of the project's notes folder. `progress(done,
    total)` hears the notes indexed of the notes there."""
    from agentmem.note import ids
    from agentmem.replica import kept_names
    from agentmem.store import dirwatch

    conn.executescript(index._DDL)
    idx = index.Index(conn, pdir, on_disk=on_disk)
    sig = dirwatch.signature(idx.ndir) if os.path.isdir(idx.ndir) else None
    before = sig[2] if sig is not None else -1
    kept = kept_names.read(os.fspath(pdir), sig)  # the folder's names as its last writer recorded them
    with conn:
        conn.execute("BEGIN")
        idx._set_meta("schema", index.SCHEMA)
        idx._set_meta("textproc", words.VERSION)
        idx._set_meta("layout", index._LAYOUT)
        n = total = 0
        blocks = _BlockWriter(conn)
        listed = sorted(ids.note_ids(kept[0]) if kept is not None else index.list_note_ids(idx.ndir))
        for done, note_id in enumerate(listed, start=1):
            doc = index.read_doc(idx.ndir, note_id)
            if progress is not None and (done % PROGRESS_EVERY == 0 or done == len(listed)):
                progress(done, len(listed))
            if doc is None:
                continue
            num = idx._insert_doc(doc)
            if num is None:  # an ID listed twice: cannot happen in one folder listing
                continue
            blocks.add(num, doc)
            n, total = n + 1, total + doc.dl
        blocks.finish()
        idx._set_meta("n", n)
        idx._set_meta("total", total)
        # The folder's time once settled, or recorded with its names by the writer that left it (replica/kept_names.py).
        trusted = before if kept is not None or time.time_ns() - before > current.RACY_NS else 0
        idx._set_meta("dir_mtime", trusted)
    return idx


def in_memory(pdir: str | os.PathLike[str]) -> index.Index:
    """The project's index built in memory (nothing written to disk); close it when done."""
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    try:
        return _build(conn, pdir, on_disk=False)
    except BaseException:
        conn.close()
        raise


def rebuild(pdir: str | os.PathLike[str], progress: Callable[[int, int], object] | None = None) -> None:
    """Build the index from the cached notes into a temp file, then rename it into place. `progress(done,
    total)`: the notes indexed of the notes there (a long build: `agentmem sync`, setup)."""
    target = index.index_path(pdir)
    folder = os.path.dirname(target)
    os.makedirs(folder, exist_ok=True)
    lock = hold_lock(folder)
    try:
        tmp = temp_path_for(target)
        try:
            conn = index._connect(tmp)
            try:
                conn.execute("PRAGMA journal_mode=OFF")
                conn.execute("PRAGMA synchronous=OFF")
                _build(conn, pdir, on_disk=True, progress=progress)
            finally:
                conn.close()
            os.replace(tmp, target)
        finally:
            for leftover in (tmp, tmp + "-journal"):
                try:
                    os.unlink(leftover)
                except FileNotFoundError:
                    pass
    finally:
        release(lock)


def hold_lock(folder: str) -> int | None:
    """Sweep the dead writers' temp files from the index folder, then hold its lock shared (see above).

    Returns the lock's file descriptor for `release`, or None where there are no advisory locks.
    Every writer of a temp file in the folder holds it, from before creating the file until it is gone.
    """
    try:
        import fcntl
    except ImportError:  # Windows
        sweep_temp(folder)
        return None
    fd = os.open(os.path.join(folder, LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            sweep_temp(folder)  # another writer is live: its file is young, older ones are dead
        except OSError:  # a filesystem without locks: the age rule alone, as on Windows
            sweep_temp(folder)
            os.close(fd)
            return None
        else:
            sweep_temp(folder, older_than=0)  # no writer is live: every temp file here is a dead one's
        fcntl.flock(fd, fcntl.LOCK_SH)  # no temp file of ours exists yet, so the gap of this change is harmless
    except BaseException:
        os.close(fd)
        raise
    return fd


def release(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)  # closing the descriptor drops the lock
