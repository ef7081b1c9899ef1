"""Corrections among a project's notes, for marking and ordering search results.

A note saved with `--corrects X` names X in its frontmatter. Search then marks X with
the notes that correct it (`corrected_by`) and lists it right below its newest
correction, pulling that correction into the results if it ranked outside them
(`mark`; INV corrections-visible). Both stay listed: nothing is hidden.

A correction may rank anywhere, so any note of the project may correct a result, but
reading every cached note on each search would cost about 10 ms per 1,000 notes.
The ranked index keeps each note's `corrects` with its row (search/index.py), indexed
by the note corrected, so where there is an index a search asks it for the notes
correcting its results (`corrections_of`: one indexed query per link of a chain, kept
current by the same folder check as the ranking; issue W, item 2: a query over every
pair cost 8.5 ms at 100k notes even with none). Without a usable index (literal search
alone, a sandbox's read-only copy) the pairs are kept in two small derived files in the
project's cache folder: `corrections.json` (the pairs and the notes folder's mtime
when they were found: one stat tells a search they are current) and
`corrections-seen.json` (the note IDs already looked at, read only after the folder
changed, so that only new notes are opened). Both are rebuilt from the notes if
missing or unreadable. `cached_pairs` gives every pair (the review queue, the view).
This machine's pending notes are looked at on every search (there are few).
"""

from __future__ import annotations

import json
import os
import time

from agentmem.fsutil import read_bytes, write_atomic
from agentmem.note import document, ids
from agentmem.paths import CORRECTIONS_FILE, CORRECTIONS_SEEN_FILE, notes_folder

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from agentmem.search.index import Index
    from agentmem.search.results import Result

PAIRS_FILE = CORRECTIONS_FILE
SEEN_FILE = CORRECTIONS_SEEN_FILE
_HEAD = document.MAX_FRONTMATTER_BYTES + 64  # the frontmatter is all that is needed of a note
# A folder mtime younger than this may hide a change made in the same clock tick; it is
# not trusted, so the next search lists the folder again (as the ranked index does).
_RACY_NS = 2_000_000_000


def _corrects(data: bytes) -> str | None:
    value = document.parse(data).meta.get("corrects")
    return value if isinstance(value, str) and ids.ID.match(value) else None


def _load(path: str) -> object:
    try:
        return json.loads(read_bytes(path))
    except (OSError, ValueError):
        return None


def cached_pairs(pdir: str) -> dict[str, str]:
    """{correcting note ID: corrected note ID} over the project's cached notes: from the index if there is
    one it can use, else from the derived files."""
    from agentmem.search.index import index_path

    if os.path.exists(index_path(pdir)):
        pairs = _indexed_pairs(pdir)
        if pairs is not None:
            return pairs
    return _kept_pairs(pdir)


def _indexed_pairs(pdir: str) -> dict[str, str] | None:
    """The pairs the index holds once current with the notes folder; None if it cannot be used."""
    import sqlite3

    idx = _current_index(pdir)
    if idx is None:
        return None
    try:
        return idx.corrections()
    except sqlite3.Error:
        return None
    finally:
        idx.close()


def corrections_of(pdir: str, note_ids: Iterable[str], extra: dict[str, str] | None = None,
                   hidden: set[str] | frozenset[str] = frozenset()) -> dict[str, list[str]]:
    """{note ID: the IDs correcting it, newest first} for `note_ids` and, in turn, for the notes correcting
    them (a chain: A corrected by B, B by C), as `mark` needs them. `extra`: {correcting ID: corrected ID} of
    notes the cache does not hold (this machine's pending ones); a note in `hidden` corrects nothing.

    Looked up by ID in the index where there is one it can use (one indexed query per link of a chain, so a
    search pays for its results' corrections, not for every note's); else from the derived files' pairs."""
    import sqlite3

    from agentmem.search.index import index_path

    idx = _current_index(pdir) if os.path.exists(index_path(pdir)) else None
    try:
        if idx is not None:
            try:
                return _closure(idx.correcting, note_ids, extra or {}, hidden)
            except sqlite3.Error:
                pass  # the derived files answer
        pairs = _kept_pairs(pdir)
        return _closure(lambda targets: [(k, v) for k, v in pairs.items() if v in targets], note_ids, extra or {},
                        hidden)
    finally:
        if idx is not None:
            idx.close()


def _closure(lookup: Callable[[set[str]], list[tuple[str, str]]], note_ids: Iterable[str], extra: dict[str, str],
             hidden: set[str] | frozenset[str]) -> dict[str, list[str]]:
    """{corrected ID: its correcting IDs, newest first} from `note_ids` along every chain of corrections."""
    by: dict[str, list[str]] = {}
    frontier, seen = set(note_ids), set()
    while frontier:
        seen |= frontier
        found = lookup(frontier) + [(k, v) for k, v in extra.items() if v in frontier]
        frontier = set()
        for fixer, target in found:
            if fixer in hidden or fixer in by.get(target, ()):
                continue
            by.setdefault(target, []).append(fixer)
            if fixer not in seen:
                frontier.add(fixer)
    for fixers in by.values():
        fixers.sort(reverse=True)  # IDs sort by creation time
    return by


def _current_index(pdir: str) -> Index | None:
    """The project's index, current with the notes folder; None if it cannot be used."""
    import sqlite3

    from agentmem.search import index

    try:
        return index.open_index(pdir, _rebuild)
    except (sqlite3.Error, OSError):
        return None  # read-only and behind the folder, or unusable: the derived files answer


def _rebuild(pdir: str) -> None:
    """search/build.py's rebuild, imported only when an index must be built: a search whose index is there
    does without it (1 M instructions with search/current.py, which it imports; docs/benchmarks.md)."""
    from agentmem.search import build

    build.rebuild(pdir)


def _kept_pairs(pdir: str) -> dict[str, str]:
    ndir = notes_folder(pdir)
    began = time.time_ns()  # before the stat: see store/dirwatch.py
    try:
        mtime = os.stat(ndir).st_mtime_ns
    except OSError:
        return {}
    state = _load(os.path.join(pdir, PAIRS_FILE))
    if isinstance(state, dict) and state.get("dir_mtime") == mtime and mtime and isinstance(state.get("pairs"), dict):
        return state["pairs"]
    try:
        present = set(ids.note_ids(os.listdir(ndir)))
    except OSError:
        return {}
    seen = _load(os.path.join(pdir, SEEN_FILE))
    old_pairs = state.get("pairs") if isinstance(state, dict) and isinstance(state.get("pairs"), dict) else None
    if not isinstance(seen, list) or old_pairs is None:
        seen, old_pairs = [], {}
    known = set(seen) & present
    pairs = {k: v for k, v in old_pairs.items() if k in known}
    for note_id in present - known:
        try:
            corrected = _corrects(read_bytes(os.path.join(ndir, ids.note_file(note_id)), _HEAD))
        except OSError:
            present.discard(note_id)  # gone meanwhile, or unreadable: look again next time
            continue
        if corrected:
            pairs[note_id] = corrected
    from agentmem.store import dirwatch

    trusted = dirwatch.trusted_mtime(began, mtime, ndir, _RACY_NS)
    try:
        write_atomic(os.path.join(pdir, SEEN_FILE), json.dumps(sorted(present)).encode())
        write_atomic(os.path.join(pdir, PAIRS_FILE), json.dumps({"dir_mtime": trusted, "pairs": pairs}).encode())
    except OSError:
        pass  # derived: found again next time
    return pairs


def corrected_by(pairs: dict[str, str]) -> dict[str, list[str]]:
    """{corrected note ID: the IDs correcting it, newest first}."""
    out: dict[str, list[str]] = {}
    for fixer, target in pairs.items():
        out.setdefault(target, []).append(fixer)
    for fixers in out.values():
        fixers.sort(reverse=True)  # IDs sort by creation time
    return out


def mark(results: list, by: dict[str, list[str]], fetch: Callable[[str], Result | None], limit: int) -> list:
    """Mark corrected results and list each right below its newest correction.

    `results` are search results (objects with `id` and `corrected_by`), best first;
    `fetch(id)` makes the result for a correction that is not among them (None if it
    cannot be read). The list keeps at most `limit` results, but never drops a
    correction of a note it shows, nor a corrected note.
    """
    if not by or not any(r.id in by for r in results):
        return results
    out = list(results)
    present = {r.id: r for r in out}
    pinned: set[str] = set()
    for _ in range(len(out) + 8):  # chains (A corrected by B, B by C) settle in a few passes
        moved = False
        for r in list(out):
            fixers = by.get(r.id)
            if not fixers:
                continue
            r.corrected_by = list(fixers)
            newest = fixers[0]
            if newest not in present:
                fresh = fetch(newest)
                if fresh is None:
                    continue
                present[newest] = fresh
                out.insert(out.index(r), fresh)
                moved = True
            pinned.update((r.id, newest))
            if out.index(r) < out.index(present[newest]):
                out.remove(r)
                out.insert(out.index(present[newest]) + 1, r)
                moved = True
        if not moved:
            break
    while len(out) > limit:
        drop = next((r for r in reversed(out) if r.id not in pinned), None)
        if drop is None:
            break
        out.remove(drop)
    return out
