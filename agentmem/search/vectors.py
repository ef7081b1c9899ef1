"""Sentence vectors in the ranked index, for the hybrid mode (needs the `semantic` extra).

Each note is cut into passages (`search/passages.py`) and each passage embedded;
a note's similarity to a query is that of its best passage. Vectors are
computed for the notes that lack them and stored in the index (`vectors`: per
note, its passages' line spans, scales and int8 components). Each note is
encoded on its own, so its vectors do not depend on which other notes were
encoded with it: an updated index and a rebuilt one hold the same bytes.

Embedding is slow beside a search (docs/benchmarks.md, "Hybrid search
embedding within a budget"), so a hybrid search embeds within a budget of
seconds (`[search] embed_budget`): this machine's pending notes first, then
the index's notes without vectors, newest first, committed a few at a time, so
the next search goes on where this one stopped. A note still without vectors is
scored by its words alone (see ranked.py) and counted in `Similarity.done`/
`total`. `fill` with no budget (`agentmem sync --embed`, setup) embeds every
note, telling a progress callback.

Scores are exact whatever the order of the rows: components and the query are
both stored as integers (int8, with a float scale per vector), so every dot
product is a sum of integers below 2**24, which float32 holds exactly in any
summation order; the scales are applied element by element afterwards.

int8 rounding moves a cosine by up to ~0.005, enough to swap notes at the edge
of the results, so the few best candidates of the int8 scan are scored again at
full precision (`rescore`): beside each passage's int8 components the index
keeps a second int8 plane, the rounding residual x 254, and the two together
are a 15-bit integer vector. Its products with a 16-bit query are sums of
integers below 2**53, exact in float64 in any order; and the candidates come
from the exact int8 scores, so an updated and a rebuilt index rescore the same
notes to the same bits.

Reading every note's vectors out of SQLite costs ~5 ms per MB of int8 (10k
checkpoints: ~40 MB), so a search reads them from a snapshot file beside the
index (`vectors.bin`, memory-mapped), written whenever the vectors changed. The
snapshot names the index state it was made from (meta `vgen`, a fresh random
token on every change), and one that does not match is ignored and rewritten.
"""

from __future__ import annotations

import json
import mmap
import os
import time

from agentmem.fsutil import write_atomic
from agentmem.paths import VECTORS_FILE, index_folder
from agentmem.search import encoder, index, passages

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    Array = Any  # a numpy array (numpy is optional: typed loosely)
    Key = int | str  # an indexed note's num, or "x:<id>" for a note not indexed yet (ranked.py)
    Progress = Callable[[int, int], None]

SNAPSHOT = VECTORS_FILE
_MAGIC = "agentmem-vectors-1"
_HEADER = 256  # bytes: one JSON line, padded with spaces
_FILL_NOTES = 32  # notes encoded per transaction: a killed first search keeps what it finished
# int8 rows converted to float32 at a time, into one reused 6 MB buffer: about half the time of larger
# blocks or a fresh array per block (figures: docs/benchmarks.md, "Figures behind choices").
_ROWS_PER_PRODUCT = 4096
_LEVELS = 127  # int8 components: -127..127; 384 * 127 * 127 < 2**24 keeps dot products exact in float32
# The residual plane: a component is (coarse * _FINE + residual) / _FINE in units of the int8 scale, |residual| <= 127.
_FINE = 254
_QUERY_FINE = 32767  # the query at 16 bits for rescoring: 384 * (127 * 254 + 127) * 32767 < 2**53, exact in float64


def require() -> None:
    if not encoder.available():
        raise encoder.missing_extra()


def note_passages(title: str, body: str) -> list[passages.Passage]:
    return passages.split(title, body, encoder.count_pieces, encoder.MAX_TOKENS)


def _quantize(vecs: Array, levels: int = _LEVELS) -> tuple[Array, Array]:
    """(integer components, float32 scale per row) of unit vectors: int8 for `_LEVELS`, else int64."""
    import numpy as np

    peak = np.abs(vecs).max(axis=1)
    scales = (np.maximum(peak, 1e-12) / levels).astype(np.float32)
    comps = np.rint(vecs / scales[:, None])
    return comps.astype(np.int8 if levels == _LEVELS else np.int64), scales


def _residuals(vecs: Array, comps: Array, scales: Array) -> Array:
    """The second plane: what int8 rounding left of each component, x _FINE, as int8."""
    import numpy as np

    return np.rint((vecs / scales[:, None] - comps) * _FINE).astype(np.int8)


def _fine(comps: Array, residuals: Array) -> Array:
    """The full-precision integer components (float64, exact) of the two planes."""
    import numpy as np

    return comps.astype(np.float64) * _FINE + residuals


def _encode_doc(doc: index.Doc) -> tuple[list[passages.Passage], Array, Array, Array]:
    """(passages, int8 components, scales, int8 residuals) of one note."""
    found = note_passages(doc.title, doc.body)
    vecs = encoder.encode_note([p.text for p in found])
    comps, scales = _quantize(vecs)
    return found, comps, scales, _residuals(vecs, comps, scales)


class _Clock:
    """A search's embedding budget: `budget` seconds from the first note (None: no limit; 0 or less: none).

    `more(started)` says whether to encode another note, `started` being how many this phase began: a
    positive budget always allows the first, so every search makes progress however slow its notes are.
    """

    __slots__ = ("budget", "deadline")

    def __init__(self, budget: float | None):
        self.budget = budget
        self.deadline: float | None = None

    def more(self, started: int) -> bool:
        if self.budget is None:
            return True
        if self.budget <= 0:
            return False
        now = time.monotonic()
        if self.deadline is None:
            self.deadline = now + self.budget
        return started == 0 or now < self.deadline


class Similarity:
    """The query's similarity to each note: the cosine of the note's best passage.

    Keys as in ranked.py: an indexed note's num, or "x:<id>" for a note not indexed yet. With a `budget`
    (seconds, see _Clock) only what it allows is embedded first; the notes left without vectors have no
    similarity here (`of`, `above` and `rescore` leave them out). `done` of `total` notes have vectors
    (this search's notes not indexed yet included).
    """

    def __init__(self, idx: index.Index, query: str, extra_docs: list[index.Doc], budget: float | None = None):
        require()  # before numpy: without the extra, the error that says how to install it
        import numpy as np

        qfloat = encoder.encode_note([query])
        q8, qscale = _quantize(qfloat)
        qvec, self._qscale = q8[0].astype(np.float32), qscale[0]
        q16, q16scale = _quantize(qfloat, _QUERY_FINE)
        self._qfine, self._qfine_scale = q16[0].astype(np.float64), float(q16scale[0]) / _FINE
        self._rescored: dict[Key, tuple[float, int]] = {}  # key -> (full-precision cosine, its best passage)
        self._idx = idx
        clock = _Clock(budget)
        # This machine's notes not indexed yet (pending uploads) are encoded on every search, first: the
        # newest first, as the index's notes below.
        self._extra: dict[str, tuple[float, tuple[int, int], tuple[Array, Array, Array, list[tuple[int, int]]]]] = {}
        for d in sorted(extra_docs, key=lambda d: (d.created, d.id), reverse=True):
            if not clock.more(len(self._extra)):
                break
            found, comps_x, scales_x, resid_x = _encode_doc(d)
            cos = (comps_x.astype(np.float32) @ qvec) * scales_x * self._qscale
            at = int(cos.argmax())
            spans = [(p.first, p.last) for p in found]
            self._extra["x:" + d.id] = (float(cos[at]), spans[at], (comps_x, scales_x, resid_x, spans))
        self.nums, counts, scales, comps = _load(idx)
        indexed = idx.stats()[0]
        # Notes without vectors (vectors only ever belong to indexed notes): looking for them is a join over
        # every note, ~20 ms at 10k checkpoints, so only when the counts say some lack them.
        if len(self.nums) < indexed and fill(idx, clock=clock):
            self.nums, counts, scales, comps = _load(idx)
        self.done = len(self.nums) + len(self._extra)
        self.total = max(indexed, len(self.nums)) + len(extra_docs)
        dots = np.empty(len(scales), dtype=np.float32)
        buf = np.empty((min(_ROWS_PER_PRODUCT, len(scales)), encoder.DIM), dtype=np.float32)
        for start in range(0, len(scales), _ROWS_PER_PRODUCT):
            block = comps[start : start + _ROWS_PER_PRODUCT]
            rows = buf[: len(block)]
            np.copyto(rows, block, casting="unsafe")  # int8 to float32 into a buffer that stays in cache
            np.matmul(rows, qvec, out=dots[start : start + len(block)])
        self._cos = dots * scales * self._qscale  # every passage
        self._starts = np.zeros(len(counts), dtype=np.int64)
        if len(counts):
            np.cumsum(counts[:-1], out=self._starts[1:])
        self.best = np.maximum.reduceat(self._cos, self._starts) if len(counts) else self._cos[:0]

    def of(self, keys: Iterable[Key]) -> dict[Key, float]:
        """key -> similarity of each of `keys` that has vectors."""
        import numpy as np

        keys = list(keys)
        out: dict[Key, float] = {}
        nums = [k for k in keys if not isinstance(k, str)]
        if nums and len(self.nums):
            wanted = np.array(nums, dtype=np.int64)
            at = np.minimum(np.searchsorted(self.nums, wanted), len(self.nums) - 1)
            found = self.nums[at] == wanted
            out = dict(zip(wanted[found].tolist(), self.best[at[found]].tolist()))
        out.update((k, self._extra[k][0]) for k in keys if isinstance(k, str) and k in self._extra)
        return out

    def above(self, floor: float, depth: int, allowed: set[Key] | None = None) -> dict[Key, float]:
        """key -> similarity of the notes at `floor` or above (those in `allowed` only, if given): the
        `depth` best and any tied with the last, so the cut never depends on storage order. Selected in
        numpy: a dict of every note's similarity cost more than the rescoring it pays for
        (docs/benchmarks.md, "Closing the gap on short notes")."""
        import numpy as np

        keep = self.best.astype(np.float64) >= floor  # compared as the Python floats they become
        if allowed is not None:
            keep &= np.isin(self.nums, np.array([k for k in allowed if not isinstance(k, str)], dtype=np.int64))
        at = np.flatnonzero(keep)
        values = self.best[at].astype(np.float64)
        extra = {k: v[0] for k, v in self._extra.items() if v[0] >= floor and (allowed is None or k in allowed)}
        total = len(at) + len(extra)
        if total > depth:
            every = np.concatenate([values, np.array(list(extra.values()), dtype=np.float64)])
            cut = float(np.partition(every, total - depth)[total - depth])  # the depth-th largest
            at, values = at[values >= cut], values[values >= cut]
            extra = {k: v for k, v in extra.items() if v >= cut}
        out: dict[Key, float] = dict(zip(self.nums[at].tolist(), values.tolist()))
        out.update(extra)
        return out

    def rescore(self, keys: Iterable[Key]) -> dict[Key, float]:
        """key -> the cosine of the key's best passage at full precision, for `keys` (notes without
        vectors are left out). Exact: the same for the same note and query, whatever the index's history."""
        import numpy as np

        keys = list(keys)
        nums = sorted(k for k in keys if not isinstance(k, str))
        planes: dict[Key, tuple[Array, Array, Array]] = {}
        for chunk, marks in index.chunks(nums):
            rows = self._idx.conn.execute(
                f"SELECT num, scales, vec, fine FROM vectors WHERE model=? AND num IN ({marks})",
                (encoder.MODEL_NAME, *chunk),
            )
            for num, scales, vec, fine in rows:
                comps = np.frombuffer(vec, dtype=np.int8).reshape(-1, encoder.DIM)
                planes[num] = (comps, np.frombuffer(scales, dtype=np.float32),
                               np.frombuffer(fine, dtype=np.int8).reshape(-1, encoder.DIM))
        for k in keys:
            if isinstance(k, str) and k in self._extra:
                comps_x, scales_x, resid_x, _ = self._extra[k][2]
                planes[k] = (comps_x, scales_x, resid_x)
        out: dict[Key, float] = {}
        for k, (comps, scales, resid) in planes.items():
            if len(comps) != len(scales) or resid.shape != comps.shape:
                continue  # not what fill() writes: left at its int8 score
            # An integer matrix-vector product below 2**53: exact in float64, whatever BLAS's order;
            # the scales are applied element by element afterwards.
            cos = (_fine(comps, resid) @ self._qfine) * scales.astype(np.float64) * self._qfine_scale
            at = int(cos.argmax())
            self._rescored[k] = (float(cos[at]), at)
            out[k] = float(cos[at])
        return out

    def passage(self, key: Key) -> tuple[int, int] | None:
        """(first, last) body line of the key's best passage (at full precision if it was rescored)."""
        if isinstance(key, str):
            if key not in self._extra:
                return None
            spans = self._extra[key][2][3]
            return spans[self._rescored[key][1]] if key in self._rescored else self._extra[key][1]
        import numpy as np

        at = int(np.searchsorted(self.nums, key))
        if at >= len(self.nums) or self.nums[at] != key:
            return None
        start = int(self._starts[at])
        end = int(self._starts[at + 1]) if at + 1 < len(self._starts) else len(self._cos)
        best = self._rescored[key][1] if key in self._rescored else int(self._cos[start:end].argmax())
        row = self._idx.conn.execute("SELECT spans FROM vectors WHERE num=?", (key,)).fetchone()
        found = row[0].split() if row else []
        if best >= len(found):
            return None
        first, last = found[best].split("-")
        return int(first), int(last)


def coverage(idx: index.Index) -> tuple[int, int]:
    """(indexed notes with vectors for the current model, indexed notes)."""
    row = idx.conn.execute("SELECT COUNT(*) FROM vectors WHERE model=?", (encoder.MODEL_NAME,)).fetchone()
    return int(row[0]), idx.stats()[0]


def fill(idx: index.Index, budget: float | None = None, *, progress: Progress | None = None,
         clock: _Clock | None = None) -> int:
    """Encode and store the vectors of indexed notes that have none for the current model, newest first;
    how many were stored.

    Within `budget` seconds (None: every note; see _Clock), committed _FILL_NOTES at a time, so what was
    done stays however the process ends. `progress(done, total)` hears the notes with vectors of all the
    indexed notes, after each note.
    """
    clock = clock if clock is not None else _Clock(budget)
    if not clock.more(0):
        return 0
    # Newest first: a note that just arrived is embedded by the next search, ahead of an older backlog.
    missing = idx.conn.execute(
        "SELECT d.num, d.id FROM docs d LEFT JOIN vectors v ON v.num = d.num AND v.model = ? "
        "WHERE v.num IS NULL ORDER BY d.created DESC, d.id DESC",
        (encoder.MODEL_NAME,),
    ).fetchall()
    total = idx.stats()[0]
    had = total - len(missing)
    started = stored = 0
    while started < len(missing) and clock.more(started):
        rows = []
        for num, note_id in missing[started : started + _FILL_NOTES]:
            if not clock.more(started):
                break
            started += 1
            doc = index.read_doc(idx.ndir, note_id)
            if doc is not None:  # a note deleted meanwhile is dropped by the next sync
                found, comps, scales, resid = _encode_doc(doc)
                spans = " ".join(f"{p.first}-{p.last}" for p in found)
                rows.append((num, encoder.MODEL_NAME, spans, scales.tobytes(), comps.tobytes(), resid.tobytes(),
                             num, note_id))
            if progress is not None:
                progress(had + started, total)
        if not rows:
            continue
        with idx.conn:
            idx.conn.execute("BEGIN IMMEDIATE")
            # Only while the num still names the same note: another process may have removed it
            # meanwhile, and a num freed at the top can be given to the next note saved.
            idx.conn.executemany(
                "INSERT OR IGNORE INTO vectors(num, model, spans, scales, vec, fine) SELECT ?, ?, ?, ?, ?, ? "
                "WHERE EXISTS (SELECT 1 FROM docs WHERE num=? AND id=?)",
                rows,
            )
            idx.changed_vectors()
        stored += len(rows)
    return stored


def _snapshot_path(idx: index.Index) -> str:
    return os.path.join(index_folder(idx.pdir), SNAPSHOT)


def _load(idx: index.Index) -> tuple[Array, Array, Array, Array]:
    """(nums, passage counts, scales, int8 components) of every note with vectors, nums ascending."""
    import numpy as np

    with idx.conn:
        idx.conn.execute("BEGIN")  # the generation and the rows it names, read as one state
        vgen = idx.meta("vgen")
        found = _read_snapshot(_snapshot_path(idx), vgen) if vgen and idx.on_disk else None
        if found is not None:
            return found
        rows = idx.conn.execute(
            "SELECT num, scales, vec FROM vectors WHERE model=? ORDER BY num", (encoder.MODEL_NAME,)
        ).fetchall()
    nums = np.array([r[0] for r in rows], dtype=np.int64)
    counts = np.array([len(r[1]) // 4 for r in rows], dtype=np.int32)
    scales = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
    comps = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.int8).reshape(-1, encoder.DIM)
    if vgen and idx.on_disk:
        _write_snapshot(_snapshot_path(idx), vgen, nums, counts, scales, comps)
    return nums, counts, scales, comps


def _layout(notes: int, rows: int) -> list[tuple[str, int, int]]:
    """(dtype, offset, count) of each array after the header, each 8-byte aligned."""
    out, at = [], _HEADER
    for dtype, count, size in (("<i8", notes, 8), ("<i4", notes, 4), ("<f4", rows, 4), ("i1", rows * encoder.DIM, 1)):
        out.append((dtype, at, count))
        at += -(-count * size // 8) * 8
    return out


def _write_snapshot(path: str, vgen: str, nums: Array, counts: Array, scales: Array, comps: Array) -> None:
    header = json.dumps({"magic": _MAGIC, "vgen": vgen, "model": encoder.MODEL_NAME, "dim": encoder.DIM,
                         "notes": len(nums), "rows": len(scales)}).encode()
    parts = [header.ljust(_HEADER - 1) + b"\n"]
    for (dtype, _, _), arr in zip(_layout(len(nums), len(scales)), (nums, counts, scales, comps)):
        data = arr.astype(dtype).tobytes()  # in _layout's order, each padded as _layout says
        parts.append(data + b"\0" * (-len(data) % 8))
    from agentmem.search import build

    try:
        lock = build.hold_lock(os.path.dirname(path))  # its temp file is swept by no one while it lives
        try:
            write_atomic(path, b"".join(parts))
        finally:
            build.release(lock)
    except OSError:
        pass  # only a cache of the index's rows: the next search reads them from the index again


def _read_snapshot(path: str, vgen: str) -> tuple[Array, Array, Array, Array] | None:
    """The arrays of the snapshot at `path` if it is whole and made from generation `vgen`, else None."""
    import numpy as np

    try:
        with open(path, "rb") as fh:
            head = json.loads(fh.read(_HEADER))
            if head.get("magic") != _MAGIC or head.get("vgen") != vgen or head.get("model") != encoder.MODEL_NAME:
                return None
            layout = _layout(int(head["notes"]), int(head["rows"]))
            dtype, offset, count = layout[-1]
            if os.fstat(fh.fileno()).st_size != offset + -(-count // 8) * 8:
                return None
            mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    nums, counts, scales, comps = (np.frombuffer(mapped, dtype=dt, count=n, offset=off) for dt, off, n in layout)
    # Cheap checks of its shape (its content is trusted: it was written whole, then renamed into place).
    if len(nums) and (int(counts.min()) < 1 or int(counts.sum()) != len(scales) or bool((np.diff(nums) <= 0).any())):
        return None
    return nums, counts, scales, comps.reshape(-1, encoder.DIM)
