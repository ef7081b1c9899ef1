"""Find notes in a project's memory: the cached notes plus this machine's pending notes.

`find` is what `agentmem search` runs, in any mode. Literal mode (here):
case-insensitive substring matching, newest first, bounded. Ranked and hybrid
modes ask the engine (`search/ranked.py`) and turn its hits into results with
excerpts. An empty query lists the most recent notes. In every mode a note that a later
note corrects is marked and listed below its correction (`search/corrections.py`).
"""

from __future__ import annotations

import os

from agentmem.fsutil import read_bytes
from agentmem.memory import cache, ids, notes, pending
from agentmem.store.base import StoreDescription

MAX_MATCHES_PER_NOTE = 5
MAX_LINE = 300


class Candidate:
    __slots__ = ("id", "data", "pending")

    def __init__(self, id: str, data: bytes, pending: bool):
        self.id, self.data, self.pending = id, data, pending


class Result:
    def __init__(self, id: str, title: str, created: str, kind: str, pending: bool,
                 matches: list[dict] | None = None, corrects: str | None = None, score: float | None = None):
        self.id, self.title, self.created, self.kind, self.pending = id, title, created, kind, pending
        self.matches = matches or []
        self.corrects = corrects
        self.score = score
        self.corrected_by: list[str] = []  # IDs of the notes correcting this one, newest first

    def to_json(self) -> dict:
        out = {
            "id": self.id,
            "title": self.title,
            "created": self.created,
            "kind": self.kind,
            "pending": self.pending,
            "matches": self.matches,
        }
        if self.corrects:
            out["corrects"] = self.corrects
        if self.corrected_by:
            out["corrected_by"] = self.corrected_by
        if self.score is not None:
            out["score"] = round(self.score, 4)
        return out


def candidates(machine: str | os.PathLike, store: StoreDescription, project: str,
               waiting: dict[str, bytes] | None = None) -> list[Candidate]:
    """Cached notes of the project, and pending notes of this machine for it (cache wins on overlap)."""
    out: dict[str, Candidate] = {}
    ndir = cache.notes_dir(machine, store, project)
    for note_id in cache.cached_ids(machine, store, project):
        try:
            out[note_id] = Candidate(note_id, read_bytes(os.path.join(ndir, ids.note_file(note_id))), False)
        except OSError:
            continue
    for note_id, data in (pending.project_notes(machine, project) if waiting is None else waiting).items():
        if note_id not in out:
            out[note_id] = Candidate(note_id, data, True)
    return list(out.values())


def _result(c: Candidate, parsed: notes.Parsed, matches: list[dict]) -> Result:
    corrects = parsed.meta.get("corrects")
    return Result(
        id=c.id,
        title=parsed.title or c.id,
        created=parsed.created,
        kind=parsed.kind,
        pending=c.pending,
        matches=matches,
        corrects=corrects if isinstance(corrects, str) else None,
    )


def literal(cands: list[Candidate], query: str, limit: int) -> list[Result]:
    """Case-insensitive literal search; newest first; at most `limit` results."""
    needle = query.strip().casefold()
    found: list[Result] = []
    for c in cands:
        text = c.data.decode("utf-8", errors="replace")
        if needle and needle not in text.casefold():
            continue
        parsed = notes.parse(c.data)
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
         mode: str = "ranked", notices: list[str] | None = None,
         held: dict[str, list[dict]] | None = None) -> list[Result]:
    """The project's notes that match `query` in `mode`, at most `limit`; an empty query lists recent notes.

    If the index could not be used (the notes were scanned instead), why is appended to `notices`.
    Pending notes are searched as shown (`withheld.clean`); what each withheld goes into `held`.
    """
    from agentmem.memory import withheld

    # read once, for the search and its corrections pass
    waiting, cleaned = withheld.clean_all(pending.project_notes(machine, project))
    if held is not None:
        held.update(cleaned)
    if mode == "literal":
        found = literal(candidates(machine, store, project, waiting), query, limit)
    else:
        found = _ranked(machine, store, project, query, limit, mode, notices, waiting)
    return _corrections_pass(machine, store, project, found, limit, waiting)


def _corrections_pass(machine: str | os.PathLike, store: StoreDescription, project: str, found: list[Result],
                      limit: int, waiting: dict[str, bytes]) -> list[Result]:
    """Mark corrected notes and list each below its correction (INV corrections-visible)."""
    from agentmem.search import corrections

    if not found:
        return found
    pairs = dict(corrections.cached_pairs(cache.project_dir(machine, store, project)))
    for note_id, data in waiting.items():
        fixed = notes.parse(data).meta.get("corrects")
        if isinstance(fixed, str):
            pairs[note_id] = fixed

    def fetch(note_id: str) -> Result | None:
        data = cache.read_cached(machine, store, project, note_id)
        is_pending = data is None
        data = waiting.get(note_id) if data is None else data
        if data is None:
            return None
        return _result(Candidate(note_id, data, is_pending), notes.parse(data), [])

    return corrections.mark(found, corrections.corrected_by(pairs), fetch, limit)


def _ranked(machine: str | os.PathLike, store: StoreDescription, project: str, query: str, limit: int,
            mode: str, notices: list[str] | None, waiting: dict[str, bytes]) -> list[Result]:
    """Ranked or hybrid: best first (scoring in search/ranked.py)."""
    from agentmem.search import ranked, words

    if not query.strip():
        return literal(candidates(machine, store, project, waiting), "", limit)
    pdir = cache.project_dir(machine, store, project)
    hits = ranked.rank(pdir, query, limit, mode=mode, extra=list(waiting.items()), notices=notices)
    wanted = set(words.split_query(query)[1])
    out = []
    for hit in hits:
        is_pending = hit.id in waiting and cache.read_cached(machine, store, project, hit.id) is None
        data = waiting.get(hit.id) if is_pending else cache.read_cached(machine, store, project, hit.id)
        if data is None:
            continue  # removed since the index last saw it
        parsed = notes.parse(data)
        start = _body_start(data.decode("utf-8", errors="replace"), parsed)
        result = _result(Candidate(hit.id, data, is_pending), parsed, _excerpts(parsed, wanted, start, hit.passage))
        result.score = hit.score
        out.append(result)
    return out


def _body_start(text: str, parsed: notes.Parsed) -> int:
    """The line number, in the note's file, of its body's first line (match lines cite file lines)."""
    return text.count("\n") - parsed.body.count("\n") + 1


def _excerpts(parsed: notes.Parsed, wanted: set[str], start: int, passage=None) -> list[dict]:
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
