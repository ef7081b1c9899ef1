"""What the review queue (memory/review.py) and promotion (memory/promotion.py) read of a project's notes:
a few frontmatter fields each, kept in `review.json` beside the cache (derived, like corrections.json) so
that only notes that arrived since it was written are opened."""

from __future__ import annotations

import os
import time

from agentmem.note import document, ids
from agentmem.paths import REVIEW_FILE, notes_folder

_HEAD = document.MAX_FRONTMATTER_BYTES + 64  # the frontmatter is all that is needed of a note here
SEEN_FILE = REVIEW_FILE  # a purge deletes it where it names the note (replica/states.py)
_RACY_NS = 2_000_000_000  # a folder mtime this young may hide a change in the same tick (as corrections.py)


class Head:
    """What the review queue and promotion use of one note: its ID, a few frontmatter fields, its title words."""

    __slots__ = ("id", "meta", "title_key")

    def __init__(self, note_id: str, meta: dict, title_key: tuple):
        self.id, self.meta, self.title_key = note_id, meta, title_key


def notes_of(pdir: str, waiting: dict[str, bytes], purged: set[str]) -> dict[str, Head]:
    """Every note of the project this machine holds (cache, then pending), by ID, without purged ones.

    What is needed of each note (`_FIELDS`) is kept in `review.json` beside the cache (derived, like
    corrections.json): only notes that arrived since it was written are opened.
    """
    import json

    from agentmem.fsutil import read_bytes, write_atomic

    ndir = notes_folder(pdir)
    try:
        mtime = os.stat(ndir).st_mtime_ns
        present = set(ids.note_ids(os.listdir(ndir)))
    except FileNotFoundError:
        mtime, present = 0, set()
    try:
        kept = json.loads(read_bytes(os.path.join(pdir, SEEN_FILE)))
        seen = kept["notes"] if isinstance(kept, dict) and isinstance(kept.get("notes"), dict) else {}
    except (OSError, ValueError):
        kept, seen = None, {}
    written = len(seen)
    # an entry of an older layout (fewer fields) is read again
    seen = {k: v for k, v in seen.items() if isinstance(v, list) and len(v) == len(_FIELDS)}
    fresh = isinstance(kept, dict) and kept.get("dir_mtime") == mtime and mtime and len(seen) == written
    known = {k: v for k, v in seen.items() if k in present} if not fresh else seen
    for note_id in sorted(present - set(known)):
        try:
            known[note_id] = _fields(read_bytes(os.path.join(ndir, ids.note_file(note_id)), _HEAD))
        except OSError:
            continue
    if not fresh or len(known) != len(seen):
        trusted = mtime if time.time_ns() - mtime > _RACY_NS else 0
        try:
            write_atomic(os.path.join(pdir, SEEN_FILE),
                         json.dumps({"dir_mtime": trusted, "notes": known}).encode(), durable=False)
        except OSError:
            pass  # derived: found again next time
    for note_id, data in waiting.items():
        known.setdefault(note_id, _fields(data))
    return {i: Head(i, {"title": f[0], "created": f[1], **{k: v for k, v in zip(_FIELDS[4:], f[4:]) if v},
                         **({"review_by": f[2]} if f[2] else {})},
                     tuple(f[3].split()))
            for i, f in sorted(known.items()) if i not in purged}


# What the queue keeps of each note in review.json, in this order (an entry of another length is read again).
_FIELDS = ("title", "created", "review_by", "title terms", "propose", "promoted_from")


def _fields(data: bytes) -> list[str]:
    """[title, created, review_by, the title's distinct terms sorted and joined, propose, promoted_from]
    ("" for what the note lacks): what the queue uses (proposals for the team: memory/promotion.py)."""
    from agentmem.search import words

    parsed = document.parse(data)
    review_by, propose, origin = (parsed.meta.get(k) for k in ("review_by", "propose", "promoted_from"))
    return [parsed.title, parsed.created, review_by if isinstance(review_by, str) else "",
            " ".join(sorted(set(words.terms(parsed.title)))), propose if propose == document.PROPOSE_TEAM else "",
            origin if isinstance(origin, str) and ids.ID.match(origin) else ""]
