"""Corrections among a project's notes, for marking and ordering search results.

A note saved with `--corrects X` names X in its frontmatter. Search then marks X with
the notes that correct it (`corrected_by`) and lists it right below its newest
correction, pulling that correction into the results if it ranked outside them
(`mark`; INV corrections-visible). Both stay listed: nothing is hidden.

A correction may rank anywhere, so the pairs of the whole project are needed, but
reading every cached note on each search would cost about 10 ms per 1,000 notes.
The ranked index keeps each note's `corrects` with its row (search/index.py), so
where there is an index the pairs are one query of it, kept current by the same
folder check as the ranking (after a change at 100k notes, no second listing and
no Python step per note: issue 26, item 8). Without a usable index (literal search
alone, a sandbox's read-only copy) they are kept in two small derived files in the
project's cache folder: `corrections.json` (the pairs and the notes folder's mtime
when they were found: one stat tells a search they are current) and
`corrections-seen.json` (the note IDs already looked at, read only after the folder
changed, so that only new notes are opened). Both are rebuilt from the notes if
missing or unreadable. This machine's pending notes are looked at on every search
(there are few).
"""

from __future__ import annotations

import json
import os
import time

from agentmem.fsutil import read_bytes, write_atomic
from agentmem.memory import ids, notes

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Callable

    from agentmem.search.find import Result

PAIRS_FILE = "corrections.json"
SEEN_FILE = "corrections-seen.json"
_HEAD = notes.MAX_FRONTMATTER_BYTES + 64  # the frontmatter is all that is needed of a note
# A folder mtime younger than this may hide a change made in the same clock tick; it is
# not trusted, so the next search lists the folder again (as the ranked index does).
_RACY_NS = 2_000_000_000


def _corrects(data: bytes) -> str | None:
    value = notes.parse(data).meta.get("corrects")
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

    from agentmem.search import build, index

    try:
        idx = index.open_index(pdir, build.rebuild)
    except (sqlite3.Error, OSError):
        return None  # read-only and behind the folder, or unusable: the derived files answer
    try:
        return idx.corrections()
    except sqlite3.Error:
        return None
    finally:
        idx.close()


def _kept_pairs(pdir: str) -> dict[str, str]:
    ndir = os.path.join(pdir, "notes")
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
