"""The ranked-search index of one project's cached notes: a derived SQLite file.

Layout: `<project cache>/index/ranked.sqlite`. The notes stay the source of
truth; the index holds, per note, its stemmed terms and term counts, and
optional sentence vectors. Each term's postings live in one blob (`blocks`,
written by a rebuild) plus the rows added since (`postings`, the delta), which
are folded into the term's blob once they grow past a share of it. It is kept
current incrementally (`apply`), checked against the notes folder on every open
(`sync`, search/current.py: one stat, and the folder's names only when it changed), and rebuilt from
scratch when missing, corrupt or written by another version. Everything stored
is integers and strings, so scores computed from an updated index equal those
from a rebuilt one (INV index-derived). Each term block is stored with its CRC-32 and
count; a block that fails the check, like a vector snapshot that does not match
(search/vectors.py), is rebuilt, never ranked from.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import zlib
from array import array
from collections import Counter

from agentmem.fsutil import read_bytes
from agentmem.note import document, ids
from agentmem.paths import INDEX_FILE, VECTORS_FILE, index_folder, notes_folder
from agentmem.search import words

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

# 5 (2026-12-01): a CRC-32 per term block; vectors per passage (int8, with their line spans).
# 6 (2026-12-01): each passage's int8 rounding residual beside its components (search/vectors.py rescore).
# 7 (2026-12-03): which note each note corrects (`corrects`), kept with its row (search/corrections.py).
SCHEMA = "7"
# Blocks are native machine integers: an index is only read where it was written (it is a
# per-machine cache), and one copied to another kind of machine is rebuilt, not misread.
_LAYOUT = f"{sys.byteorder}-{array('i').itemsize}"
# A title word counts as this many body words (2026-11-30: titles and tags name the topic).
TITLE_WEIGHT = 2
# A term's delta rows are folded into its block once there are FOLD_MIN of them and at least
# 1/FOLD_SHARE of the block's postings: a small delta costs searches little and saves nothing
# measurable (2026-11-30, 10k notes; figures: docs/benchmarks.md, "Figures behind choices").
FOLD_MIN = 64
FOLD_SHARE = 16
_BUSY_MS = 10_000
_MAX_NOTE_READ = 1024 * 1024
# The newest notes first, for a search with no words (`search ""`): with this index SQLite reads them in
# order instead of sorting every row, which took most of such an answer at 100k notes (docs/benchmarks.md). An
# index written before it gains it on first use; a read-only one is sorted instead.
_NEWEST = "CREATE INDEX IF NOT EXISTS docs_newest ON docs(created, id)"
# The notes correcting given notes, for a search's results (search/corrections.py): looked up by the corrected
# ID rather than read whole, so a search pays for its results' corrections, not the project's. An index
# written before it gains it on first use; a read-only one scans the corrections table instead.
_BY_TARGET = "CREATE INDEX IF NOT EXISTS corrects_target ON corrects(target)"
_CHUNK = 500  # SQL variables per IN (...) list: SQLite allows 999 in older builds
_TRIPLE = 3 * array("i").itemsize  # bytes per posting in a block
# A rebuild holds at most this many postings in memory (~18 bytes each with their arrays) before
# spilling them to a temp table, so a big store's rebuild stays bounded in memory; spilling costs no
# measurable time (docs/benchmarks.md).
SPILL_POSTINGS = 1 << 20

_DDL = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE docs(num INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, created TEXT NOT NULL,
                  dl INTEGER NOT NULL, terms TEXT NOT NULL);
CREATE TABLE blocks(term TEXT PRIMARY KEY, df INTEGER NOT NULL, crc INTEGER NOT NULL, post BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE postings(term TEXT NOT NULL, num INTEGER NOT NULL, tf INTEGER NOT NULL, dl INTEGER NOT NULL,
                      PRIMARY KEY(term, num)) WITHOUT ROWID;
CREATE TABLE vectors(num INTEGER PRIMARY KEY, model TEXT NOT NULL, spans TEXT NOT NULL, scales BLOB NOT NULL,
                      vec BLOB NOT NULL, fine BLOB NOT NULL);
CREATE TABLE corrects(num INTEGER PRIMARY KEY, target TEXT NOT NULL);
""" + _NEWEST + ";\n" + _BY_TARGET + ";\n"


def chunks(values: list) -> Iterator[tuple[list, str]]:
    """`values` in slices of at most _CHUNK, each with its `?,?,...` placeholders for an IN (...) list."""
    for start in range(0, len(values), _CHUNK):
        chunk = values[start : start + _CHUNK]
        yield chunk, ",".join("?" * len(chunk))


def index_path(pdir: str | os.PathLike[str]) -> str:
    return os.path.join(index_folder(os.fspath(pdir)), INDEX_FILE)


def list_note_ids(ndir: str | os.PathLike[str]) -> list[str]:
    try:
        names = os.listdir(ndir)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return ids.note_ids(names)


class Doc:
    """What the index keeps of one note."""

    __slots__ = ("id", "created", "dl", "terms", "tf", "text", "title", "body", "corrects")

    def __init__(self, note_id: str, data: bytes):
        parsed = document.parse(data)
        title, body = words.note_fields(parsed)
        title_terms, body_terms = words.terms(title), words.terms(body)
        self.id = note_id
        self.created = parsed.created
        self.terms = title_terms + body_terms
        self.dl = TITLE_WEIGHT * len(title_terms) + len(body_terms)
        tf: Counter = Counter(body_terms)
        for t in title_terms:
            tf[t] += TITLE_WEIGHT
        self.tf = tf
        # What sentence vectors are made of (search/passages.py), and a short text for phrase checks.
        self.title, self.body = parsed.title, parsed.body
        self.text = f"{parsed.title}\n{parsed.body}"[:2000]
        fixed = parsed.meta.get("corrects")  # the note it corrects (`save --corrects`)
        self.corrects = fixed if isinstance(fixed, str) and ids.ID.match(fixed) else None


def read_doc(ndir: str | os.PathLike[str], note_id: str) -> Doc | None:
    try:
        data = read_bytes(os.path.join(ndir, ids.note_file(note_id)), _MAX_NOTE_READ)
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        return None
    return Doc(note_id, data)


class CorruptBlock(sqlite3.DatabaseError):
    """A term block whose bytes are not the ones written: the index is rebuilt (search/ranked.py)."""


def _triples(blob: bytes) -> array:
    post = array("i")
    post.frombytes(blob)
    return post


def _checked(term: str, df: int, crc: int, blob: bytes) -> array:
    """The block's postings, after checking its bytes against the CRC-32 and count written with it.

    SQLite checks its own pages' structure but not the bytes inside a blob, so a damaged block
    would rank with wrong counts, silently. Checking costs about a hundredth of scoring the
    block (docs/benchmarks.md).
    """
    if zlib.crc32(blob) != crc or len(blob) != df * _TRIPLE:
        raise CorruptBlock(f"the index block of {term!r} is damaged")
    return _triples(blob)


def _block_row(term: str, post: array | bytes) -> tuple:
    """(term, df, crc, post) as stored for the postings `post` (an array or its bytes)."""
    blob = post if isinstance(post, bytes) else post.tobytes()
    return term, len(blob) // _TRIPLE, zlib.crc32(blob), blob


def _by_num(post: array) -> array:
    """The (num, tf, dl) triples of `post` in ascending num order."""
    out = array("i")
    for triple in sorted(zip(post[0::3], post[1::3], post[2::3])):
        out.extend(triple)
    return out


class Index:
    """An open index. Use `open_index`; every method may raise sqlite3.DatabaseError."""

    def __init__(self, conn: sqlite3.Connection, pdir: str | os.PathLike[str], on_disk: bool = True) -> None:
        self.conn = conn
        self.pdir = os.fspath(pdir)
        self.ndir = notes_folder(self.pdir)
        self.on_disk = on_disk  # False: built in memory for one search (the index folder is unusable)

    def close(self) -> None:
        self.conn.close()

    def meta(self, key: str, default: str = "") -> str:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else default

    def _set_meta(self, key: str, value: object) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", (key, str(value)))

    def changed_vectors(self) -> None:
        """Name the new state of the vectors (inside the transaction that changed them): a snapshot
        of another state is no longer used (search/vectors.py)."""
        self._set_meta("vgen", os.urandom(8).hex())

    def stats(self) -> tuple[int, int]:
        """(number of notes, total weighted length)."""
        return int(self.meta("n", "0")), int(self.meta("total", "0"))

    # --- reading -----------------------------------------------------------

    def postings(self, term: str) -> array:
        """The term's postings as flat (num, tf, dl) triples in ascending num order: its block, then its delta."""
        # One statement, so one consistent read: a fold committed between reading the block and
        # the delta could otherwise show a posting twice or not at all. The block row sorts first.
        rows = self.conn.execute(
            "SELECT NULL, df, crc, post FROM blocks WHERE term=? UNION ALL "
            "SELECT num, tf, dl, NULL FROM postings WHERE term=? ORDER BY 1",
            (term, term),
        ).fetchall()
        if rows and rows[0][0] is None:
            post, delta = _checked(term, *rows[0][1:]), rows[1:]
        else:
            post, delta = array("i"), rows
        if delta:
            ordered = not post or delta[0][0] > post[-3]
            for num, tf, dl, _ in delta:
                post.extend((num, tf, dl))
            if not ordered:  # not expected (a new note's num is above every existing one), but cheap to keep true
                post = _by_num(post)
        return post

    def newest(self) -> sqlite3.Cursor:
        """(created, id) of every indexed note, newest first (ties: the higher ID first), read as consumed."""
        try:
            self.conn.execute(_NEWEST)
        except sqlite3.OperationalError:
            pass  # read-only (an agent's sandbox): the same rows, sorted by SQLite
        return self.conn.execute("SELECT created, id FROM docs ORDER BY created DESC, id DESC")

    def corrections(self) -> dict[str, str]:
        """{correcting note ID: the note ID it corrects} over the indexed notes (search/corrections.py).
        The corrections table is walked and each note found by its key: a plain join let SQLite walk every
        note instead (docs/benchmarks.md)."""
        return dict(self.conn.execute(
            "SELECT docs.id, corrects.target FROM corrects CROSS JOIN docs ON docs.num = corrects.num"))

    def correcting(self, targets: Iterable[str]) -> list[tuple[str, str]]:
        """(correcting note ID, the note ID it corrects) for each indexed note correcting one of `targets`."""
        try:
            self.conn.execute(_BY_TARGET)
        except sqlite3.OperationalError:
            pass  # read-only (an agent's sandbox): the same rows, found by a scan of the corrections
        out: list[tuple[str, str]] = []
        for chunk, marks in chunks(sorted(set(targets))):
            out += self.conn.execute(f"SELECT docs.id, corrects.target FROM corrects CROSS JOIN docs "
                                     f"ON docs.num = corrects.num WHERE corrects.target IN ({marks})", chunk)
        return out

    def starting(self, prefix: str) -> set[str]:
        """The indexed note IDs that start with `prefix` (a range of the ID's own index, not a scan)."""
        upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        return {r[0] for r in self.conn.execute("SELECT id FROM docs WHERE id >= ? AND id < ?", (prefix, upper))}

    def holding(self, note_ids: Iterable[str]) -> set[str]:
        """Those of `note_ids` that are indexed."""
        out: set[str] = set()
        for chunk, marks in chunks(sorted(note_ids)):
            out.update(r[0] for r in self.conn.execute(f"SELECT id FROM docs WHERE id IN ({marks})", chunk))
        return out

    # --- changes -----------------------------------------------------------

    def _insert_doc(self, doc: Doc) -> int | None:
        """Insert a note's row; its num, or None if it was already indexed."""
        if self.conn.execute("SELECT 1 FROM docs WHERE id=?", (doc.id,)).fetchone():
            return None
        cur = self.conn.execute(
            "INSERT INTO docs(id, created, dl, terms) VALUES(?, ?, ?, ?)",
            (doc.id, doc.created, doc.dl, " ".join(doc.terms)),
        )
        if doc.corrects:
            self.conn.execute("INSERT INTO corrects(num, target) VALUES(?, ?)", (cur.lastrowid, doc.corrects))
        return cur.lastrowid

    def _add(self, doc: Doc) -> int | None:
        """Insert a note, its postings into the delta; its weighted length, or None if it was already indexed."""
        num = self._insert_doc(doc)
        if num is None:
            return None
        self.conn.executemany(
            # The note's length rides along in each posting (notes never change once indexed), so
            # scoring a term never reads the docs table, which halved the scan (docs/benchmarks.md).
            "INSERT INTO postings(term, num, tf, dl) VALUES(?, ?, ?, ?)",
            [(t, num, c, doc.dl) for t, c in doc.tf.items()],
        )
        return doc.dl

    def _remove(self, note_ids: Iterable[str]) -> tuple[int, int]:
        """Drop notes; (how many were indexed, their total weighted length).

        Each block that held one of them is rewritten once, however many of its notes
        leave: a cleared cache folder takes one pass over the index, not one per note
        (which a big store cannot afford; docs/benchmarks.md).
        """
        gone: dict[str, set[int]] = {}
        count = total = 0
        for note_id in note_ids:
            row = self.conn.execute("SELECT num, dl, terms FROM docs WHERE id=?", (note_id,)).fetchone()
            if not row:
                continue
            num, dl, terms = row
            count, total = count + 1, total + dl
            for term in set(terms.split()):
                gone.setdefault(term, set()).add(num)
            if self.conn.execute("DELETE FROM vectors WHERE num=?", (num,)).rowcount:
                self.changed_vectors()
            self.conn.execute("DELETE FROM docs WHERE num=?", (num,))
            self.conn.execute("DELETE FROM corrects WHERE num=?", (num,))
        for term, nums in gone.items():
            self.conn.executemany("DELETE FROM postings WHERE term=? AND num=?", [(term, n) for n in nums])
            found = self.conn.execute("SELECT df, crc, post FROM blocks WHERE term=?", (term,)).fetchone()
            if found:
                self._rewrite_block(term, _checked(term, *found), nums)
        return count, total

    def _rewrite_block(self, term: str, post: array, nums: set[int]) -> None:
        """Write the term's block back without the postings of `nums` (if it held any)."""
        held = post[0::3]
        if len(nums) <= 8:  # the usual case, a note or two: find and cut in C
            cut = sorted((held.index(n) for n in nums if n in held), reverse=True)
            for i in cut:
                del post[3 * i : 3 * i + 3]
            changed = bool(cut)
        else:  # many: one pass over the block
            kept = array("i")
            for i, n in enumerate(held):
                if n not in nums:
                    kept.extend(post[3 * i : 3 * i + 3])
            changed, post = len(kept) < len(post), kept
        if not changed:
            return
        if post:
            _, df, crc, blob = _block_row(term, post)
            self.conn.execute("UPDATE blocks SET df=?, crc=?, post=? WHERE term=?", (df, crc, blob, term))
        else:
            self.conn.execute("DELETE FROM blocks WHERE term=?", (term,))

    def _fold(self, terms: Iterable[str]) -> None:
        """Fold the delta of each of `terms` into its block where it has grown past FOLD_MIN and 1/FOLD_SHARE of it."""
        terms = sorted(terms)
        due = []
        for chunk, marks in chunks(terms):
            due += self.conn.execute(
                # Counting first and reading df for the few due terms alone: a join here read the
                # blocks' blobs and made each save ten times slower (docs/benchmarks.md).
                f"SELECT term, count(*) FROM postings WHERE term IN ({marks}) GROUP BY term HAVING count(*) >= ?",
                (*chunk, FOLD_MIN),
            ).fetchall()
        for term, delta in due:
            row = self.conn.execute("SELECT df FROM blocks WHERE term=?", (term,)).fetchone()
            if row and delta * FOLD_SHARE < row[0]:
                continue
            self.conn.execute(
                "INSERT OR REPLACE INTO blocks(term, df, crc, post) VALUES(?, ?, ?, ?)",
                _block_row(term, self.postings(term)),
            )
            self.conn.execute("DELETE FROM postings WHERE term=?", (term,))

    def apply(self, added: Iterable[str], removed: Iterable[str], *, scrub: bool = False,
              settled: tuple[int, int] | None = None) -> None:
        """Add the notes `added` (read from the cache) and drop `removed`, in one transaction.

        `scrub` (a purge): freed space is zeroed (secure_delete) and the file rebuilt afterwards (VACUUM:
        no freed page or interior key keeps a removed note's words); the vector snapshot goes too.
        `settled` = (mtime before, mtime after): these were the notes folder's only changes, and no later
        one can share its time (replica/kept_names.py): if the index matched the folder at `before`, it records
        `after`, so its next open is one stat (search/current.py).
        """
        if scrub:
            self.conn.execute("PRAGMA secure_delete=ON")
        self._apply(added, removed, settled)
        if scrub:
            self.conn.execute("VACUUM")
            try:
                os.unlink(os.path.join(os.path.dirname(index_path(self.pdir)), VECTORS_FILE))
            except FileNotFoundError:
                pass

    def _apply(self, added: Iterable[str], removed: Iterable[str], settled: tuple[int, int] | None = None) -> None:
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            n, total = self.stats()
            dropped, dropped_len = self._remove(removed)
            n, total = n - dropped, total - dropped_len
            touched: set[str] = set()
            for note_id in added:
                doc = read_doc(self.ndir, note_id)
                dl = self._add(doc) if doc is not None else None
                if doc is not None and dl is not None:
                    n, total = n + 1, total + dl
                    touched.update(doc.tf)
            self._fold(touched)
            self._set_meta("n", n)
            self._set_meta("total", total)
            if settled is not None and settled[0] and self.meta("dir_mtime") == str(settled[0]):
                self._set_meta("dir_mtime", settled[1])

    def sync(self) -> bool:
        """Make the index match the notes folder if the folder changed (search/current.py). True if it did
        anything. A folder as the index last saw it costs one stat and no import."""
        try:
            mtime = os.stat(self.ndir).st_mtime_ns
        except FileNotFoundError:
            mtime = -1
        if self.meta("dir_mtime") == str(mtime) and mtime != 0:
            return False
        from agentmem.search import current

        return current.follow_folder(self)


def _connect(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=_BUSY_MS / 1000, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout={_BUSY_MS}")
    return conn


def _valid(conn: sqlite3.Connection) -> bool:
    got = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('schema', 'textproc', 'layout')"))
    return got == {"schema": SCHEMA, "textproc": words.VERSION, "layout": _LAYOUT}


def usable(conn: sqlite3.Connection) -> bool:
    """Whether an index file was written by this version (schema, text processing, machine layout)."""
    return _valid(conn)


def discard(pdir: str | os.PathLike[str]) -> None:
    target = index_path(pdir)
    for path in (target, target + "-journal", target + "-wal", target + "-shm"):
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def open_index(pdir: str, rebuild: Callable[[str], object], *, sync: bool = True) -> Index:
    """Open the project's index, rebuilt by `rebuild(pdir)` (build.rebuild: the caller passes it, so this
    module never imports the one that builds it) if missing or unreadable; with `sync`, current with its
    notes folder."""
    path = index_path(pdir)
    for attempt in range(2):
        if not os.path.exists(path):
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
