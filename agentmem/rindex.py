"""The ranked-search index of one project's cached notes: a derived SQLite file.

Layout: `<project cache>/index/ranked.sqlite`. The notes stay the source of
truth; the index holds, per note, its stemmed terms and term counts, and
optional sentence vectors. It is kept current incrementally (`apply`), checked
against the notes folder on every open (`sync`: one stat, and a listing only
when the folder changed), and rebuilt from scratch when missing, corrupt or
written by another version. Everything stored is integers and strings, so
scores computed from an updated index equal those from a rebuilt one.
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from collections import Counter
from pathlib import Path

from agentmem import notes, textproc
from agentmem.fsutil import TMP_PREFIX, temp_path_for

INDEX_DIR = "index"
INDEX_FILE = "ranked.sqlite"
SCHEMA = "3"
# A title word counts as this many body words (2026-11-30: titles and tags name the topic).
TITLE_WEIGHT = 2
# A folder mtime younger than this may hide a change made in the same clock tick;
# it is not trusted, so the next open lists the folder again (as git does for racy files).
_RACY_NS = 2_000_000_000
_NOTE_FILE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_-]{0,127})\.md$")
_BUSY_MS = 10_000
_MAX_NOTE_READ = 1024 * 1024

_DDL = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE docs(num INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, created TEXT NOT NULL,
                  dl INTEGER NOT NULL, terms TEXT NOT NULL);
CREATE TABLE postings(term TEXT NOT NULL, num INTEGER NOT NULL, tf INTEGER NOT NULL, dl INTEGER NOT NULL,
                      PRIMARY KEY(term, num)) WITHOUT ROWID;
CREATE TABLE vectors(num INTEGER PRIMARY KEY, model TEXT NOT NULL, vec BLOB NOT NULL);
"""


def index_path(pdir: Path) -> Path:
    return Path(pdir) / INDEX_DIR / INDEX_FILE


def list_note_ids(ndir: Path) -> list[str]:
    try:
        names = os.listdir(ndir)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [m.group(1) for n in names if (m := _NOTE_FILE.match(n))]


class Doc:
    """What the index keeps of one note."""

    __slots__ = ("id", "created", "dl", "terms", "tf", "text")

    def __init__(self, note_id: str, data: bytes):
        parsed = notes.parse(data)
        title, body = textproc.note_fields(parsed)
        title_terms, body_terms = textproc.terms(title), textproc.terms(body)
        self.id = note_id
        self.created = parsed.created
        self.terms = title_terms + body_terms
        self.dl = TITLE_WEIGHT * len(title_terms) + len(body_terms)
        tf: Counter = Counter(body_terms)
        for t in title_terms:
            tf[t] += TITLE_WEIGHT
        self.tf = tf
        # Short text for optional sentence vectors: the title, then the body.
        self.text = f"{parsed.title}\n{parsed.body}"[:2000]


def read_doc(ndir: Path, note_id: str) -> Doc | None:
    try:
        with open(Path(ndir) / f"{note_id}.md", "rb") as fh:
            data = fh.read(_MAX_NOTE_READ)
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        return None
    return Doc(note_id, data)


class Index:
    """An open index. Use `open_index`; every method may raise sqlite3.DatabaseError."""

    def __init__(self, conn: sqlite3.Connection, pdir: Path):
        self.conn = conn
        self.pdir = Path(pdir)
        self.ndir = self.pdir / "notes"

    def close(self) -> None:
        self.conn.close()

    def meta(self, key: str, default: str = "") -> str:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else default

    def _set_meta(self, key: str, value) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", (key, str(value)))

    def stats(self) -> tuple[int, int]:
        """(number of notes, total weighted length)."""
        return int(self.meta("n", "0")), int(self.meta("total", "0"))

    # --- changes -----------------------------------------------------------

    def _add(self, doc: Doc) -> int | None:
        """Insert a note; its weighted length, or None if it was already indexed."""
        if self.conn.execute("SELECT 1 FROM docs WHERE id=?", (doc.id,)).fetchone():
            return None
        cur = self.conn.execute(
            "INSERT INTO docs(id, created, dl, terms) VALUES(?, ?, ?, ?)",
            (doc.id, doc.created, doc.dl, " ".join(doc.terms)),
        )
        num = cur.lastrowid
        self.conn.executemany(
            # The note's length rides along in each posting (notes never change once indexed), so
            # scoring a term reads one contiguous run of postings and never the docs table:
            # half the scan time for common terms at 10k notes (2026-11-30).
            "INSERT INTO postings(term, num, tf, dl) VALUES(?, ?, ?, ?)",
            [(t, num, c, doc.dl) for t, c in doc.tf.items()],
        )
        return doc.dl

    def _remove(self, note_id: str) -> int | None:
        row = self.conn.execute("SELECT num, dl, terms FROM docs WHERE id=?", (note_id,)).fetchone()
        if not row:
            return None
        num, dl, terms = row
        self.conn.executemany("DELETE FROM postings WHERE term=? AND num=?", [(t, num) for t in set(terms.split())])
        self.conn.execute("DELETE FROM vectors WHERE num=?", (num,))
        self.conn.execute("DELETE FROM docs WHERE num=?", (num,))
        return dl

    def apply(self, added, removed) -> None:
        """Add the notes `added` (read from the cache) and drop `removed`, in one transaction."""
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            n, total = self.stats()
            for note_id in removed:
                dl = self._remove(note_id)
                if dl is not None:
                    n, total = n - 1, total - dl
            for note_id in added:
                doc = read_doc(self.ndir, note_id)
                dl = self._add(doc) if doc is not None else None
                if dl is not None:
                    n, total = n + 1, total + dl
            self._set_meta("n", n)
            self._set_meta("total", total)

    def sync(self) -> bool:
        """Make the index match the notes folder if the folder changed. True if it did anything."""
        try:
            mtime = os.stat(self.ndir).st_mtime_ns
        except FileNotFoundError:
            mtime = -1
        if self.meta("dir_mtime") == str(mtime) and mtime != 0:
            return False
        on_disk = set(list_note_ids(self.ndir))
        indexed = {r[0] for r in self.conn.execute("SELECT id FROM docs")}
        added, removed = sorted(on_disk - indexed), sorted(indexed - on_disk)
        if added or removed:
            self.apply(added, removed)
        trusted = mtime if time.time_ns() - mtime > _RACY_NS else 0
        with self.conn:
            self._set_meta("dir_mtime", trusted)
        return bool(added or removed)


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=_BUSY_MS / 1000, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout={_BUSY_MS}")
    return conn


def _valid(conn: sqlite3.Connection) -> bool:
    row = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
    ver = conn.execute("SELECT value FROM meta WHERE key='textproc'").fetchone()
    return bool(row and row[0] == SCHEMA and ver and ver[0] == textproc.VERSION)


def rebuild(pdir: Path) -> None:
    """Build the index from the cached notes into a temp file, then rename it into place."""
    pdir = Path(pdir)
    target = index_path(pdir)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(temp_path_for(target))
    try:
        conn = _connect(tmp)
        try:
            conn.execute("PRAGMA journal_mode=OFF")
            conn.execute("PRAGMA synchronous=OFF")
            conn.executescript(_DDL)
            idx = Index(conn, pdir)
            before = os.stat(idx.ndir).st_mtime_ns if idx.ndir.is_dir() else -1
            with conn:
                conn.execute("BEGIN")
                idx._set_meta("schema", SCHEMA)
                idx._set_meta("textproc", textproc.VERSION)
                n = total = 0
                for note_id in sorted(list_note_ids(idx.ndir)):
                    doc = read_doc(idx.ndir, note_id)
                    if doc is None:
                        continue
                    idx._add(doc)
                    n, total = n + 1, total + doc.dl
                idx._set_meta("n", n)
                idx._set_meta("total", total)
                trusted = before if time.time_ns() - before > _RACY_NS else 0
                idx._set_meta("dir_mtime", trusted)
        finally:
            conn.close()
        os.replace(tmp, target)
    finally:
        for leftover in (tmp, Path(str(tmp) + "-journal")):
            try:
                leftover.unlink()
            except FileNotFoundError:
                pass


def discard(pdir: Path) -> None:
    target = index_path(pdir)
    for path in (target, Path(str(target) + "-journal"), Path(str(target) + "-wal"), Path(str(target) + "-shm")):
        try:
            path.unlink()
        except FileNotFoundError:
            pass


def open_index(pdir: Path, *, sync: bool = True) -> Index:
    """Open the project's index, rebuilt if missing or unreadable; with `sync`, current with its notes folder."""
    pdir = Path(pdir)
    path = index_path(pdir)
    for attempt in range(2):
        if not path.exists():
            rebuild(pdir)
        conn = _connect(path)
        try:
            if not _valid(conn):
                raise sqlite3.DatabaseError("index written by another version")
            idx = Index(conn, pdir)
            if sync:
                idx.sync()
            return idx
        except sqlite3.DatabaseError:
            conn.close()
            if attempt:
                raise
            discard(pdir)
    raise AssertionError("unreachable")


def sweep_temp(pdir: Path) -> None:
    """Remove temp index files a crashed rebuild left behind."""
    folder = Path(pdir) / INDEX_DIR
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return
    for name in names:
        if name.startswith(TMP_PREFIX):
            try:
                if time.time() - (folder / name).stat().st_mtime > 3600:
                    (folder / name).unlink()
            except OSError:
                pass
