"""Ranked search over a project's cached notes.

Scoring is BM25 over stemmed terms (title and tags count `index.TITLE_WEIGHT`
times), plus a bonus for query word pairs that stand side by side in the note;
newer notes win ties. A quoted phrase must appear literally (case-insensitive)
in the note's title, tags, body or sources. With the optional `semantic` extra,
the `hybrid` mode blends in sentence-vector similarity.

Public API: `rank(pdir, query, limit, mode=..., extra=...)`, `update(pdir,
added_ids, removed_ids)`, `rebuild(pdir)`, `embed(pdir)`. `pdir` is the project's
cache folder (`cache.project_dir(...)`); `extra` are notes not in the cache yet
(this machine's pending uploads), given as (id, bytes) and scored as if indexed.
"""

from __future__ import annotations

import math
import os
import sqlite3
from bisect import bisect_left

from agentmem.errors import InvalidInput
from agentmem.fsutil import read_bytes
from agentmem.note import ids
from agentmem.search import index, words

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from agentmem.search.vectors import Key, Similarity

    PathLike = str | os.PathLike[str]
    Extra = Iterable[tuple[str, bytes]]  # (note id, the note's bytes) of notes not in the cache yet

MODES = ("ranked", "hybrid")

# Tuned on LoCoMo dev observations (bench/locomo.py, 2026-11-30). k1 barely
# matters for one-sentence notes; a low b stops short notes winning on length
# alone; a word pair seen side by side is worth about one rare word.
K1 = 1.2
B = 0.3
PAIR_BONUS = 1.0
# Hybrid: weight of the (max-normalised) BM25 score against cosine similarity;
# 0.3 was best of 0.2-0.6 on the same split (2026-11-30).
LEXICAL_WEIGHT = 0.3
# Notes rescored with the pair bonus and, in hybrid mode, candidates per side.
RERANK_DEPTH = 200
# Hybrid: is the query related to anything? It is when a note holding a query word has a best passage
# at RELATED_COSINE or above; then a note without a query word comes in from RELATED_FLOOR. Otherwise
# such a note must reach SEMANTIC_FLOOR on its own. Set on LoCoMo dev and on nonsense and unrelated
# technical queries of our own asked in each of its projects: every real question shares a word with a
# note, and its answer may hold none of the query's words; nonsense sharing no word comes within a few
# hundredths of a loose paraphrase, so the margins on both sides of SEMANTIC_FLOOR are thin: cosine alone
# does not tell nonsense from a loose paraphrase (docs/benchmarks.md, "Closing the gap on short notes").
RELATED_COSINE = 0.30
RELATED_FLOOR = 0.21
SEMANTIC_FLOOR = 0.37
# Hybrid: the best candidates by the int8 blend, beyond the results asked for, rescored at full precision
# (search/vectors.py): int8 rounding swaps notes at the edge of the results asked for, and rescoring wins
# them back; a wider margin changed nothing more (docs/benchmarks.md, "Closing the gap on short notes").
RESCORE_MARGIN = 10
# Distinct query terms used; the rest of a pasted wall of text is ignored.
MAX_QUERY_TERMS = 64


class Hit:
    __slots__ = ("id", "score", "created", "passage")

    def __init__(self, id: str, score: float, created: str, passage: tuple[int, int] | None = None):
        self.id, self.score, self.created = id, score, created
        self.passage = passage  # hybrid: (first, last) body line of the passage most like the query

    def __repr__(self) -> str:
        return f"Hit({self.id!r}, {self.score!r}, {self.created!r})"


class _Pool:
    """Lexical scores and metadata of the candidates: index rows plus extra notes."""

    __slots__ = ("scores", "ids", "created", "terms")

    def __init__(self, scores: dict[Key, float], ids: dict[Key, str], created: dict[Key, str],
                 terms: dict[Key, str]):
        self.scores = scores  # key -> BM25 score (keys: index num, or "x:<id>" for extra notes)
        self.ids, self.created, self.terms = ids, created, terms


def rebuild(pdir: PathLike, progress: Callable[[int, int], object] | None = None) -> None:
    """Build the index from the cached notes into a temp file, then rename it into place (search/build.py);
    `progress(done, total)` hears the notes indexed."""
    from agentmem.search import build

    build.rebuild(pdir, progress)


def update(pdir: PathLike, added_ids: Iterable[str] = (), removed_ids: Iterable[str] = (), *,
           scrub: bool = False, settled: tuple[int, int] | None = None) -> None:
    """Follow the cache: index the notes that arrived, drop those that left.

    With `scrub` (a purge), the removal overwrites what it frees and the file is then compacted, so
    none of the removed notes' words stay in it, and the vector snapshot is removed (rewritten later).
    `settled`: these were the notes folder's only changes (index.Index.apply).
    Never fails the caller (a refresh): the index is derived, so if it cannot
    be updated it is discarded and rebuilt from the notes by the next search.
    """
    if not os.path.exists(index.index_path(pdir)):
        return  # built on the first search; nothing to keep current yet
    try:
        # No folder check here: a save would pay a listing of the whole folder. The next search checks
        # the folder and picks up anything this did not say (or, `settled`, stats it).
        idx = index.open_index(os.fspath(pdir), rebuild, sync=False)
        try:
            idx.apply(list(added_ids), list(removed_ids), scrub=scrub, settled=settled)
        finally:
            idx.close()
    except (sqlite3.Error, OSError):
        try:
            index.discard(pdir)
        except OSError:
            pass  # an unusable index folder: searches answer by a scan and say so


def rank(pdir: PathLike, query: str, limit: int = 10, *, mode: str = "ranked", extra: Extra = (),
         notices: list[str] | None = None, embed_budget: float | None = None,
         embedding: dict[str, int] | None = None) -> list[Hit]:
    """The `limit` best notes for `query`, best first.

    If the index cannot be opened, built or written (an unwritable folder, `ranked.sqlite` not a
    file), the notes are indexed in memory for this search alone, by words only (hybrid needs the
    stored vectors), and why is appended to `notices` (a list, if given).

    Hybrid: notes without sentence vectors are embedded first, for at most `embed_budget` seconds
    (None: all of them; search/vectors.py), and those still without are scored by their words alone.
    `embedding` (a dict, if given) receives `done` and `total`: the notes that had vectors, of all.
    """
    if mode not in MODES:
        raise InvalidInput(f"unknown search mode {mode!r}: use literal, {', '.join(MODES)}")
    extra = list(extra)
    try:
        for attempt in range(2):
            idx = index.open_index(os.fspath(pdir), rebuild)
            try:
                return _search(idx, query, limit, mode, extra, embed_budget, embedding)
            except sqlite3.DatabaseError:
                if attempt:
                    raise
                index.discard(pdir)  # corrupt beyond what open_index noticed (a damaged block): rebuild once
            finally:
                idx.close()
    except (sqlite3.Error, OSError) as exc:
        return _scan(pdir, query, limit, extra, exc, notices)
    raise AssertionError("unreachable")


def embed(pdir: PathLike, *, progress: Callable[[int, int], None] | None = None) -> dict[str, int]:
    """Give every note of the project's index its sentence vectors (building the index first if there is
    none), committed a few at a time (search/vectors.py). `progress(done, total)` hears the notes with
    vectors of all the indexed notes. Returns {done, total, embedded}: embedded is how many this call did.

    Raises the extra's NotConfigured without it, and AgentmemError for an index that cannot be used."""
    from agentmem.errors import AgentmemError
    from agentmem.search import vectors

    vectors.require()
    try:
        for attempt in range(2):
            idx = index.open_index(os.fspath(pdir), rebuild)
            try:
                stored = vectors.fill(idx, progress=progress)
                done, total = vectors.coverage(idx)
                return {"done": done, "total": total, "embedded": stored}
            except sqlite3.DatabaseError:
                if attempt:
                    raise
                index.discard(pdir)  # corrupt beyond what open_index noticed: rebuilt once, as rank does
            finally:
                idx.close()
    except sqlite3.Error as exc:
        raise AgentmemError(f"the index at {index.index_path(pdir)} cannot be used ({exc})") from None
    raise AssertionError("unreachable")


def _scan(pdir: PathLike, query: str, limit: int, extra: list[tuple[str, bytes]], exc: Exception,
          notices: list[str] | None) -> list[Hit]:
    from agentmem.search import build

    idx = build.in_memory(pdir)
    try:
        hits = _search(idx, query, limit, "ranked", extra)
    finally:
        idx.close()
    if notices is not None:
        why = f"{exc.strerror}: {exc.filename}" if isinstance(exc, OSError) and exc.strerror else str(exc)
        notices.append(f"the index at {index.index_path(pdir)} cannot be used ({why})")
    return hits


def _search(idx: index.Index, query: str, limit: int, mode: str, extra: list[tuple[str, bytes]],
            embed_budget: float | None = None, embedding: dict[str, int] | None = None) -> list[Hit]:
    phrases, qterms = words.split_query(query)
    extra_docs = _extra_docs(idx, extra)
    n, total = idx.stats()
    n += len(extra_docs)
    total += sum(d.dl for d in extra_docs)
    if n == 0:
        return []
    avgdl = total / n if total else 1.0
    allowed = _phrase_filter(idx, phrases, qterms, extra_docs) if phrases else None
    if allowed is not None and not allowed:
        return []
    pool = _lexical(idx, qterms, n, avgdl, extra_docs, allowed)
    _pair_bonus(pool, _pairs(qterms))
    final = dict(pool.scores)
    sim = None
    if mode == "hybrid":
        final, sim = _blend(idx, query, pool, extra_docs, allowed, limit, embed_budget)
        if embedding is not None:
            embedding.update(done=sim.done, total=sim.total)
    # Best score first, then newest, then highest ID: stable sorts, least significant key first
    # (a single sort with a descending-string key was measurably slower; docs/benchmarks.md).
    order = sorted(final, key=lambda k: pool.ids[k], reverse=True)
    order.sort(key=lambda k: pool.created.get(k, ""), reverse=True)
    order.sort(key=lambda k: final[k], reverse=True)
    return [Hit(pool.ids[k], final[k], pool.created.get(k, ""), sim.passage(k) if sim else None)
            for k in order[:limit]]


def _extra_docs(idx: index.Index, extra: list[tuple[str, bytes]]) -> list[index.Doc]:
    out: list[index.Doc] = []
    seen: set[str] = set()
    for note_id, data in extra:
        if note_id in seen or idx.conn.execute("SELECT 1 FROM docs WHERE id=?", (note_id,)).fetchone():
            continue
        seen.add(note_id)
        out.append(index.Doc(note_id, data))
    return out


def _bm25(tf: int, dl: int, avgdl: float) -> float:
    return tf * (K1 + 1) / (tf + K1 * (1 - B + B * dl / avgdl))


def _lexical(idx: index.Index, qterms: list[str], n: int, avgdl: float, extra_docs: list[index.Doc],
             allowed: set[Key] | None) -> _Pool:
    """BM25 of every note holding a query term; idf from each term's posting count, read in the same scan."""
    pool = _Pool({}, {}, {}, {})
    scores = pool.scores
    held: dict[str, Sequence[int]] = {}  # term -> the ascending nums of the indexed notes holding it
    for term in list(dict.fromkeys(qterms))[:MAX_QUERY_TERMS]:
        post = idx.postings(term)
        nums = held[term] = post[0::3]
        df = len(nums) + sum(1 for d in extra_docs if term in d.tf)
        if not df:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        # The hot loop. Many postings share a (tf, dl) pair, so each pair's term weight (`_bm25`
        # written out, the same arithmetic) is computed once; a note's first term sets its score
        # (0.0 + w is w exactly). Faster than one expression per posting (docs/benchmarks.md).
        pairs = list(zip(post[1::3], post[2::3]))
        weight: dict[tuple[int, int], float] = {}
        for pair in set(pairs):
            tf, dl = pair
            weight[pair] = idf * (tf * (K1 + 1) / (tf + K1 * (1 - B + B * dl / avgdl)))
        found: Iterable[tuple[Key, float]] = zip(nums, map(weight.__getitem__, pairs))
        if allowed is not None:
            found = [(num, w) for num, w in found if num in allowed]
        if not scores:
            scores.update(found)
        else:
            get = scores.get
            for num, w in found:
                scores[num] = get(num, 0.0) + w
        for d in extra_docs:
            key = "x:" + d.id
            if term not in d.tf or (allowed is not None and key not in allowed):
                continue
            scores[key] = scores.get(key, 0.0) + idf * _bm25(d.tf[term], d.dl, avgdl)
    if allowed is not None:
        for chosen in allowed:  # a phrase of stopwords alone still selects its notes
            scores.setdefault(chosen, 0.0)
    top = _top(scores, RERANK_DEPTH)
    _describe(idx, pool, top, extra_docs, _bonus_candidates(top, _pairs(qterms), held, extra_docs))
    return pool


def _pairs(qterms: list[str]) -> set[tuple[str, str]]:
    return set(zip(qterms, qterms[1:]))


def _bonus_candidates(keys: list[Key], pairs: set[tuple[str, str]], held: dict[str, Sequence[int]],
                      extra_docs: list[index.Doc]) -> set[Key] | None:
    """The keys that hold both words of some query pair (only they can get a pair bonus); None if unknown."""
    if any(a not in held or b not in held for a, b in pairs):
        return None  # a pair beyond MAX_QUERY_TERMS: describe every candidate in full
    extra = {"x:" + d.id: d.tf for d in extra_docs}
    holding: dict[str, set[Key]] = {}
    for term in {t for pair in pairs for t in pair}:
        nums, size = held[term], len(held[term])
        holding[term] = {
            k for k in keys
            if (term in extra[k] if isinstance(k, str) else (at := bisect_left(nums, k)) < size and nums[at] == k)
        }
    out: set[Key] = set()
    for a, b in pairs:
        out |= holding[a] & holding[b]
    return out


def _top(scores: dict[Key, float], depth: int) -> list[Key]:
    """The `depth` best keys, plus any tied with the last: the cut never depends on storage order."""
    if len(scores) <= depth:
        return list(scores)
    import heapq  # here: most searches never get this far (0.4 ms of import)

    # nlargest: about half the time of sorting every score (docs/benchmarks.md).
    floor = heapq.nlargest(depth, scores.values())[-1]
    return [k for k, v in scores.items() if v >= floor]


def _describe(idx: index.Index, pool: _Pool, keys: Iterable[Key], extra_docs: list[index.Doc],
              with_terms: Iterable[Key] | None = None) -> None:
    """Fetch id and created time of the given candidates into the pool, and the terms of those in
    `with_terms` (all if None). The term lists are the costly part, several times the rest
    (docs/benchmarks.md)."""
    extra = {"x:" + d.id: d for d in extra_docs}
    nums = [k for k in keys if not isinstance(k, str) and k not in pool.ids]
    wanted = nums if with_terms is None else [k for k in nums if k in with_terms]
    for chunk, marks in index.chunks(nums):
        rows = idx.conn.execute(f"SELECT num, id, created FROM docs WHERE num IN ({marks})", chunk)
        for num, note_id, created in rows:
            pool.ids[num], pool.created[num] = note_id, created
    for chunk, marks in index.chunks(wanted):
        for num, terms in idx.conn.execute(f"SELECT num, terms FROM docs WHERE num IN ({marks})", chunk):
            pool.terms[num] = f" {terms} "  # the note's terms in order, space-separated and padded
    for k in keys:
        if isinstance(k, str) and k in extra and k not in pool.ids:
            d = extra[k]
            pool.ids[k], pool.created[k] = d.id, d.created
            if with_terms is None or k in with_terms:
                pool.terms[k] = f" {' '.join(d.terms)} "


def _pair_bonus(pool: _Pool, pairs: set[tuple[str, str]]) -> None:
    """Add PAIR_BONUS per query word pair found side by side; keep only the described candidates."""
    # Keep only the described candidates (the rest are below the rerank depth and can never
    # be among the results); rebuilding beats deleting thousands of keys one by one.
    kept = {k: pool.scores[k] for k in pool.ids if k in pool.scores}
    pool.scores.clear()
    pool.scores.update(kept)
    if pairs:
        # A pair stands side by side exactly where " a b " occurs in the padded term string (terms hold no
        # spaces): a search in C instead of a set of every neighbouring pair, which cost several ms a query
        # over long notes (figures: docs/benchmarks.md, "Figures behind choices").
        needles = [f" {a} {b} " for a, b in pairs]
        for k, terms in pool.terms.items():  # those holding both words of a pair (see _bonus_candidates)
            if k in kept:
                pool.scores[k] += PAIR_BONUS * sum(1 for needle in needles if needle in terms)


def _phrase_filter(idx: index.Index, phrases: list[str], qterms: list[str],
                   extra_docs: list[index.Doc]) -> set[Key]:
    """Keys of the notes (index nums, "x:<id>") containing every quoted phrase literally."""
    phrase_terms = sorted({t for p in phrases for t in words.terms(p)})
    if phrase_terms:
        holding = set(idx.postings(phrase_terms[0])[0::3])
        for term in phrase_terms[1:]:
            holding.intersection_update(idx.postings(term)[0::3])
        nums = sorted(holding)
    else:
        nums = [r[0] for r in idx.conn.execute("SELECT num FROM docs")]
    out: set[Key] = set()
    for start in range(0, len(nums), 500):
        chunk = nums[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for num, note_id in idx.conn.execute(f"SELECT num, id FROM docs WHERE num IN ({marks})", chunk):
            if _has_phrases(os.path.join(idx.ndir, ids.note_file(note_id)), phrases):
                out.add(num)
    for d in extra_docs:
        if all(p in d.text.casefold() for p in phrases):
            out.add("x:" + d.id)
    return out


def _has_phrases(path: str, phrases: list[str]) -> bool:
    from agentmem.note import document

    try:
        data = read_bytes(path)
    except OSError:
        return False
    text = words.searchable_text(document.parse(data))
    return all(p in text for p in phrases)


def _blend(idx: index.Index, query: str, pool: _Pool, extra_docs: list[index.Doc], allowed: set[Key] | None,
           limit: int, budget: float | None = None) -> tuple[dict[Key, float], Similarity]:
    """LEXICAL_WEIGHT * BM25 / max BM25 + (1 - LEXICAL_WEIGHT) * cosine of the best passage, over both
    sides' best. A note without a query word comes in from RELATED_FLOOR if the query is related (a note
    with one of its words reaches RELATED_COSINE), else from SEMANTIC_FLOOR. The best candidates are
    then rescored with full-precision cosines. A note without vectors yet (`budget`: search/vectors.py)
    scores BM25 / max BM25, its words alone. Returns (key -> score, the similarities)."""
    from agentmem.search import vectors

    sim = vectors.Similarity(idx, query, extra_docs, budget)
    sims = sim.of(pool.scores)  # key -> cosine (int8)
    related = max(sims.values(), default=-1.0) >= RELATED_COSINE
    best_sem = sim.above(RELATED_FLOOR if related else SEMANTIC_FLOOR, RERANK_DEPTH, allowed)
    sims.update(best_sem)
    _describe(idx, pool, best_sem, extra_docs, with_terms=())  # the pair bonus is already applied
    top = max(pool.scores.values(), default=0.0) or 1.0
    keys = set(pool.scores) | set(best_sem)

    def blend(k: Key, cosine: float) -> float:
        return LEXICAL_WEIGHT * pool.scores.get(k, 0.0) / top + (1 - LEXICAL_WEIGHT) * cosine

    # A note the budget left without vectors is ranked by its words alone, on the blend's scale: as if its
    # cosine matched its share of the best BM25: so a partly embedded index answers about as well as ranked
    # search. Its blend with a cosine of 0 let the embedded notes crowd out the rest, and with the embedded
    # candidates' mean cosine it did a little worse (docs/benchmarks.md, "Hybrid search embedding within a
    # budget"). An index with every vector never takes this branch: its scores are the same as before budgets.
    final = {k: blend(k, sims[k]) if k in sims else pool.scores.get(k, 0.0) / top for k in keys}
    # The candidates come from exact int8 scores (ties at the cut included), so they are the same notes
    # for an updated and a rebuilt index, and their rescoring is exact (INV index-derived).
    for k, cosine in sim.rescore(_top(final, limit + RESCORE_MARGIN)).items():
        final[k] = blend(k, cosine)
    return final, sim
