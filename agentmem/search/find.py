"""Find notes in a project's memory: the cached notes plus this machine's pending notes (and, where the
cache could not be written, what the store answered in memory: replica/freshness.py).

`find` is what `agentmem search` runs, in any mode. Literal mode (here):
case-insensitive substring matching, newest first, bounded. Ranked and hybrid
modes ask the engine (`search/ranked.py`) and turn its hits into results with
excerpts. An empty query lists the most recent notes, setup's verification notes aside (a query that
matches them finds them). In every mode a note that a later
note corrects is marked and listed below its correction (`search/corrections.py`).

Records (note/records.py) shape every mode: a purged note is never a result, a retracted one
only when asked for (`include_retracted`, then marked `retracted`); a note past its review date
is marked `review_due` and, ranked, loses to an equal match that is not due (REVIEW_DEMOTION).
"""

from __future__ import annotations

import os

from agentmem.fsutil import read_bytes
from agentmem.note import document, ids
from agentmem.replica import cache
from agentmem.replica.freshness import Uncached
from agentmem.search.results import Result
from agentmem.store.base import StoreDescription
from agentmem.uploads import pending

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from agentmem.note.records import States

MAX_MATCHES_PER_NOTE = 5
MAX_LINE = 300
# A note past its review date scores this share of its match, so it ranks below an equal match that is
# not due and above a clearly weaker one. 2026-12-01: a tenth is well within the spread of real matches
# (scores of the top five LoCoMo hits differ by more), so a due note drops a place or two, never out of
# sight; it is a hint that the note may be stale, not a verdict.
REVIEW_DEMOTION = 0.9
# Hits asked of the engine beyond `limit`, so that a demoted note can be passed by one just below the cut.
REVIEW_SLACK = 10


class Candidate:
    __slots__ = ("id", "data", "pending")

    def __init__(self, id: str, data: bytes, pending: bool):
        self.id, self.data, self.pending = id, data, pending


def candidates(machine: str | os.PathLike, store: StoreDescription, project: str,
               waiting: dict[str, bytes] | None = None, uncached: Uncached | None = None) -> list[Candidate]:
    """Cached notes of the project, and pending notes of this machine for it (cache wins on overlap);
    with `uncached`, the notes it holds too (in place of their cached copies)."""
    out: dict[str, Candidate] = {}
    ndir = cache.notes_dir(machine, store, project)
    if uncached is not None:
        out.update((i, Candidate(i, data, False)) for i, data in uncached.notes.items())
    for note_id in cache.cached_ids(machine, store, project):
        if note_id in out:
            continue
        try:
            out[note_id] = Candidate(note_id, read_bytes(os.path.join(ndir, ids.note_file(note_id))), False)
        except OSError:
            continue
    for note_id, data in (pending.project_notes(machine, store, project) if waiting is None else waiting).items():
        if note_id not in out:
            out[note_id] = Candidate(note_id, data, True)
    return list(out.values())


def _result(c: Candidate, parsed: document.Parsed, matches: list[dict]) -> Result:
    corrects = parsed.meta.get("corrects")
    result = Result(
        id=c.id,
        title=parsed.title or c.id,
        created=parsed.created,
        kind=parsed.kind,
        pending=c.pending,
        matches=matches,
        corrects=corrects if isinstance(corrects, str) else None,
    )
    result.meta = parsed.meta
    return result


def literal(cands: list[Candidate], query: str, limit: int) -> list[Result]:
    """Case-insensitive literal search; newest first; at most `limit` results."""
    needle = query.strip().casefold()
    found: list[Result] = []
    for c in cands:
        text = c.data.decode("utf-8", errors="replace")
        if needle and needle not in text.casefold():
            continue
        parsed = document.parse(c.data)
        matches = []
        if needle:
            if needle in parsed.title.casefold():
                matches.append({"line": 0, "text": f"title: {parsed.title}"[:MAX_LINE]})
            for i, line in enumerate(parsed.body.splitlines(), start=_body_start(text, parsed)):
                if needle in line.casefold():
                    matches.append({"line": i, "text": line.strip()[:MAX_LINE]})
                    if len(matches) >= MAX_MATCHES_PER_NOTE:
                        break
            if not matches:
                extra = [v for key in ("tags", "sources") for v in (parsed.meta.get(key) or [])
                         if isinstance(v, str) and needle in v.casefold()]
                if not extra:
                    continue  # matched only frontmatter keys or dates, not the note's words
                matches.append({"line": 0, "text": ("tags/sources: " + ", ".join(extra))[:MAX_LINE]})
        found.append(_result(c, parsed, matches))
    found.sort(key=lambda r: (r.created, r.id), reverse=True)
    return found[:limit]


def find(machine: str | os.PathLike, store: StoreDescription, project: str, query: str, limit: int,
         mode: str = "ranked", notices: list[str] | None = None, *, include_retracted: bool = False,
         review_after: float | None = None, states: States | None = None,
         held: dict[str, list[dict]] | None = None, uncached: Uncached | None = None,
         embed_budget: float | None = None, embedding: dict[str, int] | None = None) -> list[Result]:
    """The project's notes that match `query` in `mode`, at most `limit`; an empty query lists recent notes.

    If the index could not be used (the notes were scanned instead), why is appended to `notices`.
    Hybrid: `embed_budget` seconds of embedding notes first (None: all), and `embedding` (a dict, if
    given) receives how many notes had vectors (`done`) of all (`total`) (search/ranked.py).
    `states` (replica/states.py) is read here when not given; `review_after` is [memory] review_after.
    Pending notes are searched as shown (`redacted_copies.clean`); what each withheld goes into `held`.
    `uncached`: what a refresh read from the store but could not cache (searched as if cached).
    """
    from agentmem.replica.states import project_states

    if states is None:
        states = project_states(machine, store, project)
    hidden, waiting = _hidden_and_waiting(machine, store, project, states, include_retracted, held, uncached)
    if not query.strip():
        return _recent(machine, store, project, limit, mode, hidden, waiting, states, review_after, uncached)[0]
    if mode == "literal":
        cands = [c for c in candidates(machine, store, project, waiting, uncached) if c.id not in hidden]
        found = literal(cands, query, limit)
    else:
        wide = limit + REVIEW_SLACK + len(hidden)
        found = [r for r in _ranked(machine, store, project, query, wide, mode, notices, waiting, uncached,
                                    embed_budget, embedding) if r.id not in hidden]
    _mark_states(found, states, review_after, ranked=mode != "literal")
    return _corrections_pass(machine, store, project, found[:limit], limit, waiting, hidden, states, review_after,
                             uncached)


def recent(machine: str | os.PathLike, store: StoreDescription, project: str, limit: int, mode: str = "ranked", *,
           include_retracted: bool = False, review_after: float | None = None, states: States | None = None,
           held: dict[str, list[dict]] | None = None, uncached: Uncached | None = None) -> tuple[list[Result], int]:
    """The `limit` newest notes (cached and pending, newest first, as `find` with an empty query lists
    them) and how many notes there are in all, hidden ones left out. Arguments as for `find`.

    Served from the index's docs table (their creation times, in order), so only the notes listed are read;
    a scan of every note when there is no usable index (literal mode builds none for this) or `uncached`.
    """
    from agentmem.replica.states import project_states

    if states is None:
        states = project_states(machine, store, project)
    hidden, waiting = _hidden_and_waiting(machine, store, project, states, include_retracted, held, uncached)
    return _recent(machine, store, project, limit, mode, hidden, waiting, states, review_after, uncached)


def _hidden_and_waiting(machine: str | os.PathLike, store: StoreDescription, project: str, states: States,
                        include_retracted: bool, held: dict | None,
                        uncached: Uncached | None) -> tuple[set[str], dict[str, bytes]]:
    """The IDs never shown, and this machine's pending notes of the project as shown, less those."""
    from agentmem.replica import redacted_copies

    hidden = set(states.purged) | (set() if include_retracted else set(states.retracted))
    if uncached is not None:  # a read-only sandbox: new purges, and cached notes the store no longer holds
        hidden |= uncached.gone
    # read once, for the search and its corrections pass
    waiting, cleaned = redacted_copies.clean_all(pending.project_notes(machine, store, project))
    if held is not None:
        held.update(cleaned)
    return hidden, ({k: v for k, v in waiting.items() if k not in hidden} if hidden else waiting)


def _recent(machine: str | os.PathLike, store: StoreDescription, project: str, limit: int, mode: str, hidden: set[str],
            waiting: dict[str, bytes], states: States, review_after: float | None,
            uncached: Uncached | None) -> tuple[list[Result], int]:
    served = None if uncached is not None else _newest_from_index(machine, store, project, waiting, hidden, limit,
                                                                  build=mode != "literal")
    if served is None:
        cands = [c for c in candidates(machine, store, project, waiting, uncached)
                 if c.id not in hidden and not c.id.startswith(ids.SETUP_PREFIX)]
        found, total = literal(cands, "", limit), len(cands)
    else:
        found, total = served
    _mark_states(found, states, review_after, ranked=False)
    return _corrections_pass(machine, store, project, found, limit, waiting, hidden, states, review_after,
                             uncached), total


def _newest_from_index(machine: str | os.PathLike, store: StoreDescription, project: str, waiting: dict[str, bytes],
                       hidden: set[str], limit: int, *, build: bool) -> tuple[list[Result], int] | None:
    """`recent`'s answer from the index (None when it cannot be used): the index's rows in order, merged with
    the pending notes the cache lacks; each note listed is read and parsed, and only those."""
    import heapq
    import sqlite3

    from agentmem.search import index, ranked

    pdir = cache.project_dir(machine, store, project)
    if not build and not os.path.exists(index.index_path(pdir)):
        return None
    try:
        idx = index.open_index(pdir, ranked.rebuild)
    except (sqlite3.Error, OSError):
        return None
    try:
        # Setup's verification notes are plumbing, not memory: they stay out of the list (and its count).
        hidden = hidden | idx.starting(ids.SETUP_PREFIX) | {i for i in waiting if i.startswith(ids.SETUP_PREFIX)}
        cached = idx.holding(waiting)
        extra = sorted(((document.parse(data).created, note_id) for note_id, data in waiting.items()
                        if note_id not in cached and note_id not in hidden), reverse=True)
        total = idx.stats()[0] - len(idx.holding(hidden)) + len(extra)
        found: list[Result] = []
        rows = ((created, note_id) for created, note_id in idx.newest() if note_id not in hidden)
        for _, note_id in heapq.merge(rows, extra, reverse=True):
            is_pending = note_id in waiting and note_id not in cached
            data = waiting[note_id] if is_pending else cache.read_cached(machine, store, project, note_id)
            if data is None:
                continue  # removed since the index last saw it
            found.append(_result(Candidate(note_id, data, is_pending), document.parse(data), []))
            if len(found) >= limit:
                break
        return found, total
    except (sqlite3.Error, OSError):
        return None
    finally:
        idx.close()


def _cached(machine: str | os.PathLike, store: StoreDescription, project: str, note_id: str,
            uncached: Uncached | None) -> bytes | None:
    """A note as the store has it: what the refresh kept in memory, else the cache."""
    if uncached is not None and note_id in uncached.notes:
        return uncached.notes[note_id]
    return cache.read_cached(machine, store, project, note_id)


def _mark_states(found: list[Result], states: States, review_after: float | None, *, ranked: bool) -> None:
    """Mark retracted, pinned and due results; ranked, a due note's score is demoted and the list re-sorted."""
    today, pinned = document.today(), states.pinned()
    for r in found:
        r.retracted = states.retracted.get(r.id)
        r.pinned = r.id in pinned
        r.review_due = document.is_due(r.meta, today, review_after)
        if ranked and r.review_due and r.score is not None:
            r.score *= REVIEW_DEMOTION
    if ranked and any(r.review_due for r in found):
        found.sort(key=lambda r: r.score if r.score is not None else 0.0, reverse=True)  # stable: ties keep order


def _corrections_pass(machine: str | os.PathLike, store: StoreDescription, project: str, found: list[Result],
                      limit: int, waiting: dict[str, bytes], hidden: set[str], states: States,
                      review_after: float | None, uncached: Uncached | None = None) -> list[Result]:
    """Mark corrected notes and list each below its correction (INV corrections-visible)."""
    from agentmem.search import corrections

    if not found:
        return found
    extra = {}  # notes the cache does not hold: this machine's pending ones, what a refresh could not cache
    for note_id, data in [*waiting.items(), *(uncached.notes.items() if uncached is not None else ())]:
        fixed = document.parse(data).meta.get("corrects")
        if isinstance(fixed, str):
            extra[note_id] = fixed
    # a hidden (retracted, purged) correction neither marks nor is pulled in
    by = corrections.corrections_of(cache.project_dir(machine, store, project), [r.id for r in found], extra, hidden)

    def fetch(note_id: str) -> Result | None:
        data = _cached(machine, store, project, note_id, uncached)
        is_pending = data is None
        data = waiting.get(note_id) if data is None else data
        if data is None:
            return None
        fresh = _result(Candidate(note_id, data, is_pending), document.parse(data), [])
        _mark_states([fresh], states, review_after, ranked=False)
        return fresh

    return corrections.mark(found, by, fetch, limit)


def _ranked(machine: str | os.PathLike, store: StoreDescription, project: str, query: str, limit: int,
            mode: str, notices: list[str] | None, waiting: dict[str, bytes],
            uncached: Uncached | None = None, embed_budget: float | None = None,
            embedding: dict[str, int] | None = None) -> list[Result]:
    """Ranked or hybrid: best first (scoring in search/ranked.py)."""
    from agentmem.search import ranked, words

    pdir = cache.project_dir(machine, store, project)
    extra = [*(uncached.notes.items() if uncached is not None else ()), *waiting.items()]
    hits = ranked.rank(pdir, query, limit, mode=mode, extra=extra, notices=notices, embed_budget=embed_budget,
                       embedding=embedding)
    wanted = set(words.split_query(query)[1])
    out = []
    for hit in hits:
        stored = _cached(machine, store, project, hit.id, uncached)
        is_pending = stored is None and hit.id in waiting
        data = waiting.get(hit.id) if is_pending else stored
        if data is None:
            continue  # removed since the index last saw it
        parsed = document.parse(data)
        start = _body_start(data.decode("utf-8", errors="replace"), parsed)
        result = _result(Candidate(hit.id, data, is_pending), parsed, _excerpts(parsed, wanted, start, hit.passage))
        result.score = hit.score
        out.append(result)
    return out


def _body_start(text: str, parsed: document.Parsed) -> int:
    """The line number, in the note's file, of its body's first line (match lines cite file lines)."""
    return text.count("\n") - parsed.body.count("\n") + 1


def _excerpts(parsed: document.Parsed, wanted: set[str], start: int,
              passage: tuple[int, int] | None = None) -> list[dict]:
    """Body lines that share a stemmed word with the query, in order, at most a few.

    With `passage` (hybrid: the (first, last) body lines most like the query), only its lines, and
    its first lines if none shares a word: the excerpt shows what matched.
    """
    from agentmem.search import words

    if passage is not None:
        first, last = passage
        lines = [(start + i, line) for i, line in enumerate(parsed.body.split("\n")) if first <= i <= last]
        lines = [(i, line) for i, line in lines if line.strip()]
        sharing = [(i, line) for i, line in lines if words.has_any_term(line, wanted)]
        return [{"line": i, "text": line.strip()[:MAX_LINE]} for i, line in (sharing or lines)[:MAX_MATCHES_PER_NOTE]]
    out = []
    for i, line in enumerate(parsed.body.splitlines(), start=start):
        if words.has_any_term(line, wanted):
            out.append({"line": i, "text": line.strip()[:MAX_LINE]})
            if len(out) >= MAX_MATCHES_PER_NOTE:
                break
    return out
