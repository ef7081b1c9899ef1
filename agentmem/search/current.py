"""The ranked index kept current with its notes folder: the check each open makes, and the shortcut a
witnessed write leaves.

Each open (`index.open_index`) compares the notes folder's time with the one the index recorded when it last
matched the folder: equal, the index is current (one stat). Otherwise the folder's names (the kept ones,
replica/kept_names.py, while they are true for the folder; else a listing) are compared with the index's as sets
and the difference applied; the folder's time is recorded only once no later change can share it (settled:
store/dirwatch.py). A process whose own writes were the folder's only change (replica/kept_names.py) records the
folder's new time with them (`Index.apply`, `settled`), so the next open is one stat again, not a listing of
every note (issue W, item 1).
"""

from __future__ import annotations

import os
import sqlite3
import time

from agentmem.note import ids
from agentmem.store import dirwatch

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Protocol

    class Index(Protocol):
        """What this module needs of search/index.py's `Index` (which calls it): said here, so the two
        modules do not import each other even for their types."""

        conn: sqlite3.Connection
        pdir: str
        ndir: str

        def meta(self, key: str, default: str = "") -> str: ...

        def _set_meta(self, key: str, value: object) -> None: ...

        def apply(self, added: Iterable[str], removed: Iterable[str]) -> object: ...

# A folder mtime younger than this may hide a change made in the same clock tick;
# it is not trusted, so the next open lists the folder again (as git does for racy files).
RACY_NS = 2_000_000_000
# Seconds for which this process's own listing of a notes folder stands for the folder while its time is
# unchanged, though too young to record (RACY_NS): the parts of one search (its ranking, its corrections)
# share one listing instead of each making it. The recorded shortcut stays unset, so the next search lists.
SHARED_LISTING = 1.0
_listed: dict[str, tuple[int, str]] = {}  # notes folder -> (its mtime, the index's note count) when listed
_listed_at: dict[str, float] = {}  # notes folder -> time.monotonic() of that listing


def follow_folder(idx: Index) -> bool:
    """Make the index match its notes folder if the folder changed. True if it did anything."""
    began = time.time_ns()  # before the stat: see store/dirwatch.py
    try:
        sig = dirwatch.signature(idx.ndir)
    except NotADirectoryError:
        sig = None
    mtime = sig[2] if sig is not None else -1
    if idx.meta("dir_mtime") == str(mtime) and mtime != 0:
        return False
    if _listed.get(idx.ndir) == (mtime, idx.meta("n")) \
            and time.monotonic() - _listed_at.get(idx.ndir, 0.0) < SHARED_LISTING:
        return False  # this process listed the folder as it is a moment ago: one search's parts share it
    from agentmem.replica import kept_names

    kept = kept_names.read(idx.pdir, sig)  # the folder's names as its last writer recorded them (replica/kept_names.py)
    if kept is not None:
        on_disk, trusted = set(kept[0]), mtime  # recorded by the folder's last writer: settled
    else:
        pause = dirwatch.settle_wait(began / 1e9, mtime, dirwatch.filesystem_type(idx.ndir)) if mtime > 0 else 0.0
        if pause:  # the cache changed a moment ago (this search's refresh): settle it, not list it again later
            time.sleep(pause)
            began = time.time_ns()
            try:
                mtime = os.stat(idx.ndir).st_mtime_ns
            except FileNotFoundError:
                mtime = -1
        try:
            on_disk = set(os.listdir(idx.ndir))
        except (FileNotFoundError, NotADirectoryError):
            on_disk = set()
        trusted = dirwatch.trusted_mtime(began, mtime, idx.ndir, RACY_NS)
    # As sets of file names, the index's joined by SQLite into one string: only the names that differ are
    # parsed, so a change at 100k notes costs a listing (or a read of the kept names) and a read of the
    # index's IDs in C, not a Python step per note (issue 26, item 8).
    joined = idx.conn.execute("SELECT group_concat(id || '.md', '/') FROM docs").fetchone()[0]
    indexed = set(joined.split("/")) if joined else set()
    added = sorted(ids.note_ids(on_disk - indexed))
    removed = sorted(name[:-3] for name in indexed - on_disk)
    if added or removed:
        idx.apply(added, removed)
    try:
        with idx.conn:
            idx.conn.execute("BEGIN IMMEDIATE")
            idx._set_meta("dir_mtime", trusted)
    except sqlite3.OperationalError:
        # Read-only (an agent's sandbox): the index matches the folder, only the shortcut for the next
        # open is not recorded. Anything it had to apply was written above, or raised there.
        pass
    _listed[idx.ndir], _listed_at[idx.ndir] = (mtime, idx.meta("n")), time.monotonic()
    return bool(added or removed)
