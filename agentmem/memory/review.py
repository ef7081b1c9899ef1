"""The review queue (`agentmem review`): what in a project's memory may no longer be true, each item
with the commands that resolve it. Deterministic: no model, the same notes give the same queue.

Items, in this order (each kind sorted by note ID):
- review-due: a note whose review date passed (`review_by`, or created + `[memory] review_after` days),
  neither retracted nor corrected since;
- near-duplicate: two notes of the project with nearly the same text, or the same title words;
- corrected-repeatedly: a note corrected by more than one note;
- retracted: the project's retractions (a person may purge a note that must not exist).

Near-duplicates come from the ranked index's terms (search/index.py), in one pass rather than a
search per note: each note's rarest terms name its candidates, and a candidate pair is kept when
the idf-weighted cosine of their term counts reaches NEAR_TEXT; two notes with the same title words
need NEAR_TITLE_TEXT. Where the index holds hybrid vectors (hybrid searches made them; review never
embeds), a candidate pair whose best passages reach NEAR_MEANING is one too.
Commands are argument lists (`argv`); the front ends render them.
"""

from __future__ import annotations

import math
import os
import time

from agentmem.note import document, ids
from agentmem.paths import REVIEW_FILE, notes_folder
from agentmem.replica import cache
from agentmem.uploads import pending

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from agentmem.config import Config
    from agentmem.note.records import States

KIND_ORDER = ("review-due", "near-duplicate", "corrected-repeatedly", "retracted")
# Idf-weighted cosine of two notes' stemmed term counts from which they are near-duplicates.
# 0.9 keeps a note saved twice with a word or two changed and is far above two different findings about
# the same component, which share its name and a few verbs (bench/review.py; docs/benchmarks.md).
NEAR_TEXT = 0.9
# Candidates per note: its rarest terms held by another note too, and only terms held by at most
# SIGNATURE_DF notes (a term in more is no signature). Near-duplicates share nearly every term, so they
# share their rarest shared ones.
SIGNATURE_TERMS = 4
SIGNATURE_DF = 64
MIN_TITLE_TERMS = 2  # same-title pairs need at least this many title words ("Checkpoint" alone is not one)
# Two notes with the same title words are near-duplicates only when their texts are at least this alike too.
# Random titles of a few common words collide by chance, their texts far below this; a note saved again
# under its title, reworded, is above it (bench/review.py; docs/benchmarks.md).
NEAR_TITLE_TEXT = 0.5
# Hybrid (where the index holds sentence vectors): a candidate pair whose best passages (title and body, as
# stored) reach this cosine is a near-duplicate however its words differ. On pairs of our own, a fact
# reworded under another title and one fact stated twice with another number (a contradiction worth
# reviewing) reach it; related but different facts stay well below; a loose rewording can fall just short
# (all-MiniLM-L6-v2; docs/benchmarks.md).
NEAR_MEANING = 0.75
MAX_ITEMS_PER_KIND = 200  # a queue longer than this is cut, and says so
_HEAD = document.MAX_FRONTMATTER_BYTES + 64  # the frontmatter is all that is needed of a note here
SEEN_FILE = REVIEW_FILE  # a purge deletes it where it names the note (replica/states.py)
_RACY_NS = 2_000_000_000  # a folder mtime this young may hide a change in the same tick (as corrections.py)


class _Note:
    __slots__ = ("id", "meta", "title_key")

    def __init__(self, note_id: str, meta: dict, title_key: tuple):
        self.id, self.meta, self.title_key = note_id, meta, title_key


def queue(machine: str, cfg: Config, project: str, *, timeout: float | None = None) -> dict:
    """The review queue of `project`, after bringing the cache up to date (INV read-your-writes)."""
    from agentmem.replica.states import project_states
    from agentmem.search import corrections, follow

    status = cache.ensure_fresh(machine, cfg.store, project, max_age=cfg.cache_max_age, timeout=timeout,
                                index=follow.update)
    pdir = cache.project_dir(machine, cfg.store, project)
    states = project_states(machine, cfg.store, project)
    waiting = pending.project_notes(machine, cfg.store, project)
    hidden = set(states.retracted) | set(states.purged)
    known = _notes(pdir, waiting, set(states.purged))
    pairs = dict(corrections.cached_pairs(pdir))
    for note_id, data in waiting.items():
        fixed = document.parse(data).meta.get("corrects")
        if isinstance(fixed, str):
            pairs[note_id] = fixed
    pairs = {k: v for k, v in pairs.items() if k not in hidden}
    fixed_by = corrections.corrected_by(pairs)
    items = (_due(project, known, hidden, fixed_by, cfg.review_after)
             + _duplicates(project, pdir, known, hidden, pairs, waiting)
             + _corrected_repeatedly(project, known, fixed_by)
             + _retracted(project, known, states))
    cut: dict[str, int] = {}
    out: list[dict] = []
    for kind in KIND_ORDER:
        of_kind = [i for i in items if i["kind"] == kind]
        if len(of_kind) > MAX_ITEMS_PER_KIND:
            cut[kind] = len(of_kind) - MAX_ITEMS_PER_KIND
        out += of_kind[:MAX_ITEMS_PER_KIND]
    freshness = status.to_json()
    freshness.pop("unreadable", None)
    return {"project": project, "items": out, "left_out": cut, "notes": len(known), **freshness}


def _notes(pdir: str, waiting: dict[str, bytes], purged: set[str]) -> dict[str, _Note]:
    """Every note of the project this machine holds (cache, then pending), by ID, without purged ones.

    What the queue needs of each note (title, created, review_by) is kept in `review.json` beside the
    cache (derived, like corrections.json): only notes that arrived since it was written are opened.
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
    fresh = isinstance(kept, dict) and kept.get("dir_mtime") == mtime and mtime
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
    return {i: _Note(i, {"title": f[0], "created": f[1], **({"review_by": f[2]} if f[2] else {})},
                     tuple(f[3].split()))
            for i, f in sorted(known.items()) if i not in purged}


def _fields(data: bytes) -> list[str]:
    """[title, created, review_by or "", the title's distinct terms sorted and joined]: what the queue uses."""
    from agentmem.search import words

    parsed = document.parse(data)
    review_by = parsed.meta.get("review_by")
    return [parsed.title, parsed.created, review_by if isinstance(review_by, str) else "",
            " ".join(sorted(set(words.terms(parsed.title))))]


def _title(known: dict[str, _Note], note_id: str) -> dict[str, str]:
    note = known.get(note_id)
    title = note.meta.get("title") if note is not None else None
    return {note_id: title} if isinstance(title, str) else {}


def _titles(known: dict[str, _Note], *note_ids: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for note_id in note_ids:
        out |= _title(known, note_id)
    return out


def _cmd(*argv: str, note: str | None = None) -> dict:
    return {"argv": list(argv)} | ({"note": note} if note else {})


def _due(project: str, known: dict[str, _Note], hidden: set[str], fixed_by: dict,
         review_after: float | None) -> list[dict]:
    today = document.today()
    out = []
    for note_id, note in known.items():
        if note_id in hidden or note_id in fixed_by:
            continue
        when = document.review_date(note.meta, review_after)
        if when is None or when > today:
            continue
        out.append({
            "kind": "review-due", "notes": [note_id], "review_by": when, "titles": _title(known, note_id),
            "summary": f"{note_id} was due for review on {when}",
            "commands": [
                _cmd("save", "--project", project, "--corrects", note_id, "--review-by", "DATE", "--text", "MARKDOWN",
                     note="still true, or true with changes: save what holds now, with the next review date"),
                _cmd("retract", note_id, "--project", project, "--reason", "REASON", note="no longer true"),
            ],
        })
    return out


def _corrected_repeatedly(project: str, known: dict[str, _Note], fixed_by: dict) -> list[dict]:
    out = []
    for note_id in sorted(fixed_by):
        fixers = fixed_by[note_id]  # newest first
        if len(fixers) < 2 or note_id not in known:
            continue
        newest, older = fixers[0], sorted(fixers[1:])
        out.append({
            "kind": "corrected-repeatedly", "notes": [note_id, *sorted(fixers)],
            "titles": _titles(known, note_id, *fixers),
            "summary": f"{note_id} is corrected by {len(fixers)} notes; the newest is {newest}",
            "commands": [_cmd("retract", old, "--project", project, "--reason", f"superseded by {newest}",
                              note="an older correction") for old in older],
        })
    return out


def _retracted(project: str, known: dict[str, _Note], states: States) -> list[dict]:
    out = []
    for note_id in sorted(states.retracted):
        gone = states.retracted[note_id]
        out.append({
            "kind": "retracted", "notes": [note_id], "record": gone, "titles": _title(known, note_id),
            "summary": f"{note_id} was retracted on {gone['created'][:10]} by {gone['agent']}",
            "commands": [
                _cmd("read", note_id, "--project", project, note="what it said, and why it was retracted"),
                _cmd("purge", note_id, "--project", project,
                     note="for a person only, if the note must not exist at all (a credential, personal data)"),
            ],
        })
    return out


# -- near-duplicates ----------------------------------------------------------------------------------

def _duplicates(project: str, pdir: str, known: dict[str, _Note], hidden: set[str], pairs: dict[str, str],
                waiting: dict[str, bytes]) -> list[dict]:
    """Pairs of live notes with the same title words, or nearly the same text (see NEAR_TEXT)."""
    related = {frozenset(p) for p in pairs.items()}  # a note and its correction are meant to be alike
    found: dict[tuple[str, str], str] = {}
    by_title: dict[tuple, list[str]] = {}
    for note_id, note in known.items():
        if note_id not in hidden and len(note.title_key) >= MIN_TITLE_TERMS:
            by_title.setdefault(note.title_key, []).append(note_id)
    texts = _Texts(pdir, known, hidden, waiting)
    for group in by_title.values():
        first = group[0]  # oldest (IDs sort by time)
        for other in group[1:]:
            cosine = texts.cosine(first, other)
            if cosine >= NEAR_TITLE_TEXT:
                found[(first, other)] = f"the same title words, and alike texts (similarity {cosine:.2f})"
    near, others = texts.near()
    for (a, b), cosine in near.items():
        found.setdefault((a, b), f"nearly the same text (similarity {cosine:.2f}, from {NEAR_TEXT})")
    unsure = sorted(set(others) | {(g[0], o) for g in by_title.values() for o in g[1:]} - set(found))
    for (a, b), cosine in _alike_meaning(pdir, unsure).items():
        found[(a, b)] = f"alike in meaning (sentence similarity {cosine:.2f}, from {NEAR_MEANING})"
    out = []
    for (older, newer), why in sorted(found.items()):
        if frozenset((older, newer)) in related:
            continue
        out.append({
            "kind": "near-duplicate", "notes": [older, newer], "titles": _titles(known, older, newer),
            "summary": f"{newer} nearly duplicates {older}: {why}",
            "commands": [_cmd("retract", newer, "--project", project, "--reason", f"duplicate of {older}",
                              note="if it adds nothing; else correct one of them")],
        })
    return out


class _Texts:
    """The live notes' stemmed terms (from the index) and document frequencies, for text similarity."""

    def __init__(self, pdir: str, known: dict[str, _Note], hidden: set[str], waiting: dict[str, bytes]):
        from collections import Counter

        from agentmem.search import build, index

        self.terms: dict[str, list[str]] = {}
        self.df: Counter = Counter()
        try:
            idx = index.open_index(pdir, build.rebuild)
        except Exception:  # noqa: BLE001 - no usable index: the text check is skipped, titles still count
            idx = None
        if idx is not None:
            try:
                for note_id, text in idx.conn.execute("SELECT id, terms FROM docs"):
                    if note_id in known and note_id not in hidden:
                        self.terms[note_id] = text.split()
                self.df.update(dict(idx.conn.execute("SELECT term, df FROM blocks")))
                self.df.update(dict(idx.conn.execute("SELECT term, count(*) FROM postings GROUP BY term")))
            finally:
                idx.close()
        for note_id, data in waiting.items():
            if note_id in known and note_id not in hidden and note_id not in self.terms:
                self.terms[note_id] = index.Doc(note_id, data).terms
                self.df.update(set(self.terms[note_id]))
        self.n = max(len(self.terms), 1)
        self._vectors: dict[str, tuple[dict, float]] = {}

    def _vector(self, note_id: str) -> tuple[dict, float]:
        from collections import Counter

        if note_id not in self._vectors:
            df, n = self.df, self.n
            w = {t: c * math.log((n + 1) / max(df[t], 1)) for t, c in Counter(self.terms[note_id]).items()}
            self._vectors[note_id] = (w, math.sqrt(sum(v * v for v in w.values())) or 1.0)
        return self._vectors[note_id]

    def cosine(self, a: str, b: str) -> float:
        """The idf-weighted cosine of two notes' term counts (0 for a note the index does not hold)."""
        if a not in self.terms or b not in self.terms:
            return 0.0
        (wa, na), (wb, nb) = self._vector(a), self._vector(b)
        small, large = (wa, wb) if len(wa) <= len(wb) else (wb, wa)
        return sum(v * large.get(t, 0.0) for t, v in small.items()) / (na * nb)

    def near(self) -> tuple[dict[tuple[str, str], float], list[tuple[str, str]]]:
        """({(older, newer): cosine} of the pairs whose texts reach NEAR_TEXT, the other candidate pairs).

        Each note's SIGNATURE_TERMS rarest terms name its candidates; a pair is scored only when it shares
        two of them (or all of the fewer one has), so the exact cosine is computed for a few pairs, not for
        every pair holding one rare word.
        """
        from collections import Counter

        df = self.df
        holders: dict[str, list[str]] = {}
        wanted: dict[str, int] = {}
        for note_id in sorted(self.terms):
            rare = [t for t in set(self.terms[note_id]) if 2 <= df[t] <= SIGNATURE_DF]  # a term of one note pairs none
            rare.sort(key=lambda t: (df[t], t))
            del rare[SIGNATURE_TERMS:]
            wanted[note_id] = min(2, len(rare))
            for t in rare:
                holders.setdefault(t, []).append(note_id)
        shared: Counter = Counter()
        for group in holders.values():
            for i, a in enumerate(group):
                for b in group[i + 1:]:
                    shared[(a, b)] += 1
        out: dict[tuple[str, str], float] = {}
        others: list[tuple[str, str]] = []
        for (a, b), count in sorted(shared.items()):
            if count >= min(wanted[a], wanted[b]):
                cosine = self.cosine(a, b)
                if cosine >= NEAR_TEXT:
                    out[(a, b)] = cosine
                else:
                    others.append((a, b))
        return out, others


def _alike_meaning(pdir: str, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], float]:
    """{pair: cosine} of the `pairs` whose notes' best passages reach NEAR_MEANING, from the sentence
    vectors the index already holds (none: {}); numpy is imported only when there are some."""
    if not pairs:
        return {}
    from agentmem.search import build, encoder, index

    if not encoder.available():
        return {}
    wanted = sorted({i for pair in pairs for i in pair})
    rows: list = []
    try:
        idx = index.open_index(pdir, build.rebuild)
    except Exception:  # noqa: BLE001 - no usable index: nothing to compare
        return {}
    try:
        if idx.conn.execute("SELECT 1 FROM vectors WHERE model=? LIMIT 1", (encoder.MODEL_NAME,)).fetchone() is None:
            return {}
        for chunk, marks in index.chunks(wanted):
            rows += idx.conn.execute(
                f"SELECT d.id, v.scales, v.vec FROM docs d JOIN vectors v ON v.num = d.num "
                f"WHERE v.model = ? AND d.id IN ({marks})", (encoder.MODEL_NAME, *chunk)).fetchall()
    finally:
        idx.close()
    import numpy as np

    unit = {}
    for note_id, scales, vec in rows:
        scale = np.frombuffer(scales, dtype=np.float32)
        comps = np.frombuffer(vec, dtype=np.int8).reshape(len(scale), encoder.DIM).astype(np.float32) * scale[:, None]
        unit[note_id] = comps / np.maximum(np.linalg.norm(comps, axis=1, keepdims=True), 1e-12)
    out = {}
    for a, b in pairs:
        if a in unit and b in unit:
            cosine = float((unit[a] @ unit[b].T).max())
            if cosine >= NEAR_MEANING:
                out[(a, b)] = round(cosine, 4)
    return out
