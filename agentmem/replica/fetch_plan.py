"""What one refresh must fetch and drop: the store's answer (`Store.changes`) compared with the cache.

`replica/cache.py` carries the plan out. A listing is compared with the cached file names as sets, so
that after a change the work follows what changed, not the store's size (issue 26, item 8); a names-only
listing (a folder store) has a random batch of sizes checked per listing instead of all.
INV cache-kept-on-failure: a cached note a listing lacks is dropped only if that listing could have
seen it (it was cached before the listing began).
"""

from __future__ import annotations

import os
from itertools import filterfalse

from agentmem import errors
from agentmem.fsutil import TMP_PREFIX
from agentmem.note import ids
from agentmem.replica import redacted_copies
from agentmem.store.base import Changes, Listed

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see paths.py)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, KeysView

    from agentmem.replica.kept_names import Cached
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
        self.beyond = 0  # new notes not planned this time (make_plan's limit): the catch-up goes on next time
        self.unplanned = 0  # new names not planned, notes or not
        self.new_purges: set[str] = set()  # notes named by purge records this refresh brought
        # The listed names the notes cache does not hold, when every record the store lists is among them
        # (names alone, and no record-like name in the notes cache): records.to_fetch looks at these only.
        self.unmatched: set[str] | None = None
        # Those of some fetched names that are regular files (not links or folders), when the listing did
        # not say (a folder store's names): asked as the fetch reaches them.
        self.regular: Callable[[Iterable[str]], set[str]] | None = None


def make_plan(changes: Changes, prefix: str, ndir: str, started: float, store: Store, unreadable: dict,
              cached: Cached | None = None, limit: int | None = None) -> Plan:
    """What to fetch and drop. `cached`: the cache folder's names (replica/kept_names.py), else listed here.
    `limit`: of a names-only listing's new names, the newest this many are planned, the rest counted in
    `beyond` (a catch-up that will stop long before them need not look at each)."""
    plan = Plan()
    plan.recorded = redacted_copies.recorded_ids(os.path.dirname(ndir))
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
    # FULL: compare file names (they carry the IDs) as sets; only the names that differ are parsed. The
    # cache's names are walked, not made a set: a set of 100k fresh strings costs as much again (issue W).
    names: Iterable[str] = cached.names if cached is not None else _cached_names(ndir)
    if changes.names is not None:  # names alone (a folder store): Listed objects only for the new ones
        listed: set[str] | KeysView[str] = changes.names
        sized = None
        fresh = changes.names.difference(names)
        if not (cached.json if cached is not None else ".json" in "\n".join(names)):  # cached.names read above
            # No record is hidden among the cached names: the new names hold them all. Those that could be
            # records (a scan in C first: a catch-up's 100k new names are rarely any).
            plan.unmatched = {n for n in fresh if n.endswith(".json")} if ".json" in "\n".join(fresh) else set()
        # Links and folders among the new names are told apart as they are fetched, newest first, so a
        # catch-up search looks only at the names it gets to (issue W, item 3: 1.5 s a search at 100k).
        plan.regular = changes.regular
        chosen: Iterable[str] = fresh
        if limit is not None and len(fresh) > limit:
            chosen = sorted(fresh, reverse=True)[:limit]  # names start with the note's UTC time: the newest
            if sum(1 for name in chosen if ids.NOTE_FILE.match(name)) >= limit // 2:
                # The notes among the rest, about (their names end in .md; counted in C): "N of M", and
                # whether the catch-up goes on (it does: most of the newest names are notes)
                md = sum(1 for name in chosen if name.endswith(".md"))
                plan.beyond = max(0, ("\n".join(fresh) + "\n").count(".md\n") - md)
            else:  # mostly names that are no notes: the notes alone, counted exactly, so a catch-up ends
                notes_only = [name for name in fresh if ids.NOTE_FILE.match(name)]
                chosen = sorted(notes_only, reverse=True)[:limit]
                plan.beyond = len(notes_only) - len(chosen)
            plan.unplanned = len(fresh) - len(chosen)
        new = {name: Listed(f"{prefix}/{name}", None) for name in chosen}
    else:
        head = prefix + "/"
        sized = {o.path[len(head):]: o for o in changes.listing if o.path.startswith(head)}
        listed = sized.keys()
        fresh = listed - set(names)
        new = {name: sized[name] for name in fresh}
    unlisted = list(filterfalse(listed.__contains__, names))  # cached, not listed
    plan.temps = [name for name in unlisted if name.startswith(TMP_PREFIX)]  # no listing holds a temp
    # The store's notes: those cached (only notes are cached), the new names that are notes, those not planned.
    plan.count = (len(listed) - len(new) - plan.unplanned + sum(1 for name in new if ids.NOTE_FILE.match(name))
                  + plan.beyond)
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
    for name in unlisted:
        note_id = _name_id(name)
        if note_id is not None and _older_than(ndir, note_id, started):
            plan.drop.add(note_id)
    _check_sizes(plan, prefix, sized, listed, fresh, ndir, store)
    return plan


def _check_sizes(plan: Plan, prefix: str, sized: dict[str, Listed] | None, listed: Iterable[str],
                 new: set[str], ndir: str, store: Store) -> None:
    """Find cached notes whose size differs from the store's (damaged), among the `listed` names not `new`
    (so cached): all of them when the listing carries sizes (`sized`), else a random batch of VERIFY_BATCH
    whose sizes the store is asked for."""
    if sized is None or not sized or next(iter(sized.values())).size is None:
        if not hasattr(store, "sizes"):
            return
        import random

        pool = list(listed)  # while catching up, most are new: they are passed over, not checked
        pick = [n for n in random.sample(pool, min(2 * VERIFY_BATCH, len(pool))) if n not in new][:VERIFY_BATCH]
        if not pick:
            return
        try:
            known = store.sizes([f"{prefix}/{name}" for name in pick])
        except errors.AgentmemError:
            return
        sizes = {name: known.get(f"{prefix}/{name}") for name in pick}
    else:
        pick = [n for n in listed if n not in new]
        sizes = {name: sized[name].size for name in pick}
    for name in pick:
        size, found = sizes[name], ids.NOTE_FILE.match(name)
        if found is None or size is None or size > MAX_CACHED_OBJECT:
            continue
        note_id = found.group(1)  # the credential check of its name (several patterns) only for a difference
        if cached_size(ndir, note_id, plan.recorded) != size and _name_id(name) is not None:
            plan.fetch[note_id] = Listed(f"{prefix}/{name}", size)
            plan.damaged.add(note_id)


def _note_id(path: str, prefix: str) -> str | None:
    head, _, name = path.rpartition("/")
    return _name_id(name) if head == prefix else None


def _name_id(name: str) -> str | None:
    """The note ID a file name carries; None for one named by a credential (never cached, named or
    recorded anywhere here; `agentmem audit` reports it)."""
    m = ids.NOTE_FILE.match(name)
    return m.group(1) if m and not redacted_copies.names_a_credential(m.group(1)) else None


def _cached_names(ndir: str) -> set[str]:
    """The file names in the notes cache, temp files' included."""
    try:
        return set(os.listdir(ndir))
    except FileNotFoundError:
        return set()


def cached_size(ndir: str, note_id: str, recorded: set[str] | None = None) -> int | None:
    """The size of the store's copy of a cached note, as the cache knows it (None: not cached); `recorded`:
    the notes whose record holds it (withheld.py: the cached copy is redacted, so shorter)."""
    return redacted_copies.store_size(ndir, note_id, recorded or set())


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
