"""What one refresh must fetch and drop: the store's answer (`Store.changes`) compared with the cache.

`memory/cache.py` carries the plan out. A listing is compared with the cached file names as sets, so
that after a change the work follows what changed, not the store's size (issue 26, item 8); a names-only
listing (a folder store) has a random batch of sizes checked per listing instead of all.
"""

from __future__ import annotations

import os

from agentmem import errors
from agentmem.fsutil import TMP_PREFIX
from agentmem.memory import ids, withheld
from agentmem.store.base import Changes, Listed

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see paths.py)
if TYPE_CHECKING:
    from collections.abc import KeysView

    from agentmem.store.base import Store

# Objects larger than this are not notes we wrote (notes are <= 64 KiB); never downloaded.
MAX_CACHED_OBJECT = 1024 * 1024
# Cached notes, picked at random, whose size is compared with the store's per listing that
# carries no sizes (a folder store's names-only listing): a few ms a listing, and a damaged
# cached note is found within about (notes / 256) listings (docs/benchmarks.md).
VERIFY_BATCH = 256


class Plan:
    """What one refresh does to the cache: fetch these objects, drop these notes."""

    def __init__(self) -> None:
        self.fetch: dict[str, Listed] = {}  # note id -> object
        self.drop: set[str] = set()
        self.damaged: set[str] = set()  # cached but differing from the store: fetched again
        self.count: int | None = None  # notes in the store, when a full listing told
        self.temps: list[str] = []  # temp files seen in the notes cache (swept if stale)
        self.recorded: set[str] = set()  # cached notes with something withheld (their store size is recorded)
        self.records: dict[str, Listed] = {}  # record file name -> object, to fetch before the notes
        self.left = 0  # downloads not made: the refresh's catch-up budget ran out
        self.new_purges: set[str] = set()  # notes named by purge records this refresh brought
        # The listed names the notes cache does not hold, when every record the store lists is among them
        # (names alone, and no record-like name in the notes cache): records.to_fetch looks at these only.
        self.unmatched: set[str] | None = None


def make_plan(changes: Changes, prefix: str, ndir: str, started: float, store: Store, unreadable: dict) -> Plan:
    plan = Plan()
    plan.recorded = withheld.recorded_ids(os.path.dirname(ndir))
    if changes.kind == Changes.SAME:
        if store.description.kind == "folder":  # cheap to ask again: a fixed permission shows at once
            plan.fetch = {i: Listed(f"{prefix}/{ids.note_file(i)}", None) for i in unreadable}
        return plan
    if changes.kind == Changes.DELTA:
        for obj in changes.added:
            note_id = _note_id(obj.path, prefix)
            if note_id is not None and (obj.size is None or obj.size <= MAX_CACHED_OBJECT):
                size = cached_size(ndir, note_id, plan.recorded)
                if size is None or (obj.size is not None and size != obj.size):
                    plan.fetch[note_id] = obj
                    if size is not None:
                        plan.damaged.add(note_id)
            elif note_id is not None:
                unreadable[note_id] = too_large(obj)
        gone = {i for i in (_note_id(p, prefix) for p in changes.removed) if i is not None}
        plan.drop = {i for i in gone if cached_size(ndir, i) is not None}
        for note_id in gone:
            unreadable.pop(note_id, None)
        for note_id in set(unreadable) - set(plan.fetch) - gone:
            plan.fetch[note_id] = Listed(f"{prefix}/{ids.note_file(note_id)}", None)
        return plan
    # FULL: compare file names (they carry the IDs) as sets; only the names that differ are parsed
    names = _cached_names(ndir)
    if changes.names is not None:  # names alone (a folder store): Listed objects only for the new ones
        listed: set[str] | KeysView[str] = changes.names
        sized = None
        fresh = listed - names
        if ".json" not in "\n".join(names):  # one scan in C: no record is hidden among the cached names
            plan.unmatched = set(fresh)
        if fresh and changes.regular is not None:
            fresh = changes.regular(fresh)
        new = {name: Listed(f"{prefix}/{name}", None) for name in fresh}
    else:
        head = prefix + "/"
        sized = {o.path[len(head):]: o for o in changes.listing if o.path.startswith(head)}
        listed = sized.keys()
        new = {name: sized[name] for name in listed - names}
    both = names & listed
    plan.temps = [name for name in names - listed if name.startswith(TMP_PREFIX)]  # no listing holds a temp
    # The store's notes: those cached (only notes are cached) and the new names that are notes.
    plan.count = len(both) + sum(1 for name in new if ids.NOTE_FILE.match(name))
    for note_id in list(unreadable):
        if ids.note_file(note_id) not in listed:
            unreadable.pop(note_id)  # gone from the store
    for name, obj in new.items():
        note_id = _name_id(name)
        if note_id is None:
            continue  # not a note of this project: never follow it out of the cache folder
        if obj.size is not None and obj.size > MAX_CACHED_OBJECT:
            unreadable[note_id] = too_large(obj)
        else:
            plan.fetch[note_id] = obj
    for name in names - listed:
        note_id = _name_id(name)
        if note_id is not None and _older_than(ndir, note_id, started):
            plan.drop.add(note_id)
    _check_sizes(plan, prefix, sized, both, ndir, store)
    return plan


def _check_sizes(plan: Plan, prefix: str, sized: dict[str, Listed] | None, both: set[str], ndir: str,
                 store: Store) -> None:
    """Find cached notes whose size differs from the store's (damaged): all of them when the listing
    carries sizes (`sized`), else a random batch of VERIFY_BATCH whose sizes the store is asked for."""
    if not both:
        return
    if sized is None or next(iter(sized.values())).size is None:
        if not hasattr(store, "sizes"):
            return
        import random

        pick = random.sample(list(both), min(VERIFY_BATCH, len(both)))
        try:
            known = store.sizes([f"{prefix}/{name}" for name in pick])
        except errors.AgentmemError:
            return
        sizes = {name: known.get(f"{prefix}/{name}") for name in pick}
    else:
        pick = list(both)
        sizes = {name: sized[name].size for name in pick}
    for name in pick:
        note_id, size = _name_id(name), sizes[name]
        if note_id is not None and size is not None and size <= MAX_CACHED_OBJECT \
                and cached_size(ndir, note_id, plan.recorded) != size:
            plan.fetch[note_id] = Listed(f"{prefix}/{name}", size)
            plan.damaged.add(note_id)


def _note_id(path: str, prefix: str) -> str | None:
    head, _, name = path.rpartition("/")
    return _name_id(name) if head == prefix else None


def _name_id(name: str) -> str | None:
    """The note ID a file name carries; None for one named by a credential (never cached, named or
    recorded anywhere here; `agentmem audit` reports it)."""
    m = ids.NOTE_FILE.match(name)
    return m.group(1) if m and not withheld.names_a_credential(m.group(1)) else None


def _cached_names(ndir: str) -> set[str]:
    """The file names in the notes cache, temp files' included."""
    try:
        return set(os.listdir(ndir))
    except FileNotFoundError:
        return set()


def cached_size(ndir: str, note_id: str, recorded: set[str] | None = None) -> int | None:
    """The size of the store's copy of a cached note, as the cache knows it (None: not cached); `recorded`:
    the notes whose record holds it (withheld.py: the cached copy is redacted, so shorter)."""
    return withheld.store_size(ndir, note_id, recorded or set())


def _older_than(ndir: str, note_id: str, moment: float) -> bool:
    """A cached note written before `moment`: one another process just placed is not pruned by an
    older listing that could not have seen it."""
    try:
        return os.stat(os.path.join(ndir, ids.note_file(note_id))).st_mtime < moment
    except OSError:
        return False


def too_large(obj: Listed) -> dict:
    return {"error": errors.Unreadable.kind,
            "message": f"{obj.path} is too large ({obj.size} bytes, over 1 MiB); not downloaded"}
