"""The per-store, per-project cache of notes, and its refresh.

INV read-your-writes: every search, and every read of an ID the cache lacks,
first asks the store what changed since this machine last looked and fetches
exactly that, so a note the store confirmed to any machine is in this machine's
next answer, or the answer says it is stale and why. (`[cache] max_age` > 0
trades this for speed, and the answer says so too.)
INV change-token: what lets the next refresh ask only for what changed (a
folder's signature, a bucket's feed cursor) is kept only once every change it
covers is in the cache; a refresh cut short keeps the previous token and
replays, so it loses nothing.
INV atomic-cache: a cached note is written to a temp file and renamed into
place, so an interrupted download never appears as a complete cached file.
INV cache-kept-on-failure: cached notes are pruned only after a complete
listing of the project or a delete the store's feed reported; on any error the
previous cache stays as it was and the result says the data may be stale, and why.
INV no-credentials: every note enters the cache through `redacted_copies.put`, so a credential
a note carries (however it reached the store) is cached as `[REDACTED:<kind>]`.
INV loud-unwritable: a cache that cannot be written still gets what changed, in memory
(`CacheStatus.uncached`, replica/freshness.py), cleaned the same way.
INV unreadable-skipped: one object the store holds but agentmem cannot read (a
FIFO, a device, an oversized or unreadable file) is skipped and reported; the
other notes still arrive.

Records (note/records.py) arrive through the same changes, before the notes: a note
a purge record names is never downloaded, and leaves this machine in that refresh.

Only the project asked for is listed and downloaded, never every project.
"""

from __future__ import annotations

import json
import os
import time

from agentmem import errors
from agentmem.fsutil import read_bytes, sweep_temp, write_atomic
from agentmem.note import ids
from agentmem.paths import STATE_FILE, notes_folder, project_cache
from agentmem.replica import redacted_copies
from agentmem.replica.freshness import CacheStatus, Uncached
from agentmem.store import layout
from agentmem.store.base import Changes, StoreDescription

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see paths.py)
if TYPE_CHECKING:
    from collections.abc import Callable

    from agentmem.replica import kept_names
    from agentmem.replica.fetch_plan import Plan
    from agentmem.store.base import Store
    from agentmem.store.witness import Watched

    Index = Callable[..., object]  # the caller's observer: search/follow.update
    Progress = Callable[[int, int], object]

# Seconds a search spends downloading before it answers: unbounded, a big store's catch-up cost every
# search of a new machine tens of seconds (issue 26). Indexing what arrived costs about twice its download,
# so a catch-up search stays within a few seconds (docs/benchmarks.md, "A new machine joining the 100k
# store"); `agentmem sync` fetches the rest at once.
# Here, not in memory/sync.py: a search that finds nothing new imports no sync (tests/test_imports.py).
SEARCH_CATCH_UP = 0.1
PROGRESS_MIN = 200  # notes: a sync at least this large reports its progress (a few seconds' work)
MAX_REPORTED = 20  # unreadable objects kept in the state and the JSON
# Notes asked of a store that reads many at once (a bucket: one hf_xet transfer, two requests
# whatever the count, instead of two per note): 100 keeps a long first sync's count moving about
# every second, and a batch cut short by the budget costs at most 100 downloads again (2026-12-01).
FETCH_BATCH = 100
# A search's catch-up (a budget under a second) reads in smaller batches: a batch begun is kept whole and
# indexed (about 1 ms a note), and the first always is, so this bounds what a catch-up search adds to its
# answer (issue W, item 3: a catch-up search within 10x a settled one).
SEARCH_BATCH = 32
# Notes planned per second of a refresh's catch-up budget, and at least: more than any refresh fetches in that
# time, so the budget ends a round, not the plan; a search that lacks 100k notes then sorts out the newest
# few thousand instead of making an entry for each (issue W, item 3).
PLAN_RATE = 5000
PLAN_MIN = 500
# New names of a folder store's listing checked at a time for links and folders (one lstat each), as the
# fetch reaches them: a catch-up search stops long before the last of 100k (issue W, item 3).
REGULAR_BATCH = 64


def project_dir(machine: str | os.PathLike, store: StoreDescription, project: str) -> str:
    return project_cache(machine, store.key, project)


def notes_dir(machine: str | os.PathLike, store: StoreDescription, project: str) -> str:
    return notes_folder(project_dir(machine, store, project))


def cached_ids(machine: str | os.PathLike, store: StoreDescription, project: str) -> list[str]:
    try:
        names = os.listdir(notes_dir(machine, store, project))
    except FileNotFoundError:
        return []
    return ids.note_ids(names)


def read_cached(machine: str | os.PathLike, store: StoreDescription, project: str, note_id: str) -> bytes | None:
    try:
        return read_bytes(os.path.join(notes_dir(machine, store, project), ids.note_file(note_id)))
    except (FileNotFoundError, IsADirectoryError):
        return None


def _read_state(pdir: str) -> dict:
    try:
        state = json.loads(read_bytes(os.path.join(pdir, STATE_FILE)))
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def _safe_state(pdir: str, state: dict) -> None:
    try:
        write_atomic(os.path.join(pdir, STATE_FILE), (json.dumps(state, sort_keys=True) + "\n").encode(),
                     durable=False)  # derived: after a power cut a lost state only costs one full listing
    except OSError:
        pass


def add_confirmed(machine: str | os.PathLike, store: StoreDescription, project: str, note_id: str, data: bytes, *,
                  index: Index | None = None, watched: Watched | None = None) -> None:
    """Place a note this machine just saved (and the store confirmed), or read from the store, into the cache
    (`index` told). What this knew of the cache folder (its kept names, the index's folder time) follows the
    write when a witness proves it was the folder's only change (replica/kept_names.py). `watched`: the store's
    folder watched from before this machine's own upload of the note (FolderStore.watch); when that upload
    was the store's only change since the last refresh, the change token moves past it, so the next search
    is one stat, not a listing (issue W, item 1)."""
    pdir = project_dir(machine, store, project)
    name = ids.note_file(note_id)
    if not os.path.exists(os.path.join(notes_folder(pdir), name)):
        from agentmem.replica import kept_names

        session = kept_names.Session(pdir)
        try:
            redacted_copies.put(pdir, note_id, data)
            if not _told(session, index, pdir, [note_id], [], {name}, set()) and index is not None:
                index(pdir, [note_id], [])  # search/follow.update
        finally:
            session.close()
    if watched is not None:  # INV change-token: only now is the note in the cache
        token = watched.seal({name})
        state = _read_state(pdir)
        if token is not None and state.get("token") == watched.token:
            state["token"] = token
            _safe_state(pdir, state)


def _told(session: kept_names.Session | kept_names.Cached, index: Index | None, pdir: str, added: list[str],
          removed: list[str], added_names: set[str], removed_names: set[str]) -> bool:
    """End the session of the cache writes that added and removed these notes (their file names too):
    when they were the notes folder's only change, the kept names follow them and the index (`index`) is
    told of them with the folder's new time, in one transaction, so its next open is one stat. True if
    the index was told."""
    told = []

    def record(after: list) -> None:
        if index is not None and session.before is not None and (added or removed):
            index(pdir, added, removed, settled=(session.before[2], after[2]))
            told.append(True)

    session.end(added_names, removed_names, record)
    return bool(told)


def change_token(machine: str | os.PathLike, store: StoreDescription, project: str) -> dict | None:
    """The change token the project's last complete refresh kept (INV change-token), or None."""
    token = _read_state(project_dir(machine, store, project)).get("token")
    return token if isinstance(token, dict) else None


def last_checked(machine: str | os.PathLike, store: StoreDescription, project: str) -> float | None:
    value = _read_state(project_dir(machine, store, project)).get("refreshed_at")
    return float(value) if isinstance(value, (int, float)) else None


def refresh(machine: str | os.PathLike, store_desc: StoreDescription, project: str, *,
            timeout: float | None = None, store: Store | None = None, progress: Progress | None = None,
            check_timeout: float | None = None, catch_up: float | None = None,
            index: Index | None = None) -> CacheStatus:
    """Ask the store what changed in the project since the last refresh, and bring the cache up to date.

    `progress(done, total)` is called while a large sync downloads (PROGRESS_MIN notes or more).
    `check_timeout`: a search's wait for the store's answer (replica/backoff.py); `catch_up` (memory/sync.py).
    `index(pdir, added, removed, scrub=False, settled=None)`: told what the cache gained and lost, and, once
    a witness proved those the folder's only changes, `settled` (search/follow.update).
    """
    from agentmem.replica import backoff
    from agentmem.store import identity

    pdir = project_dir(machine, store_desc, project)
    prefix = layout.notes_prefix(project)
    state = _read_state(pdir)
    last_ok = state.get("refreshed_at") if isinstance(state.get("refreshed_at"), (int, float)) else None
    unreadable: dict = state["unreadable"] if isinstance(state.get("unreadable"), dict) else {}
    started = time.time()
    try:
        store = store or identity.open_known(machine, store_desc, timeout=timeout)
        token = state.get("token") if isinstance(state.get("token"), dict) else None
        changes = store.changes(prefix, token) if check_timeout is None else store.changes(prefix, token,
                                                                                          wait=check_timeout)
    except errors.AgentmemError as exc:
        _record_failure(pdir, state, exc)
        what = "could not check the store"
        if isinstance(exc, errors.NoAnswer) and check_timeout is not None:  # INV bounded-network
            backoff.hold(machine, store_desc, exc.one_line())
            what = (f"the store did not answer within {check_timeout:g} s ([network] check_timeout), so searches "
                    f"answer from the cache for the next {backoff.HOLD_SECONDS:g} s")
        return CacheStatus(True, f"{what}: {exc.one_line()}; {_checked_words(last_ok)}",
                           exc.kind, checked_at=last_ok, unreadable=unreadable)
    backoff.release(machine, store_desc)
    if changes.kind == Changes.SAME and not (unreadable or changes.added or changes.removed):
        # Nothing changed and nothing to ask again: the per-turn case, kept to the state's update (the
        # planning, catch-up and kept-names modules are not even imported; docs/benchmarks.md, issue Y).
        state["unreadable"] = {}
        return _current(pdir, state, changes, started, None)
    # The cache folder's names (kept, else listed) and a witness of this refresh's own writes to it, so that
    # what they change is recorded without listing the folder again (replica/kept_names.py).
    view = None
    if changes.kind != Changes.SAME:
        from agentmem.replica import kept_names

        view = kept_names.Cached(pdir)
    try:
        return _apply(machine, store_desc, project, pdir, state, store, changes, started, last_ok, unreadable,
                      progress, catch_up, index, view)
    finally:
        if view is not None:
            view.close()


def _apply(machine: str | os.PathLike, store_desc: StoreDescription, project: str, pdir: str, state: dict,
           store: Store, changes: Changes, started: float, last_ok: float | None, unreadable: dict,
           progress: Progress | None, catch_up: float | None, index: Index | None,
           view: kept_names.Cached | None) -> CacheStatus:
    """Carry out what the store answered (`changes`): records first, then the notes; the index told."""
    from agentmem.note import records
    from agentmem.replica import catching_up, states
    from agentmem.replica.fetch_plan import make_plan

    ndir = notes_folder(pdir)
    prefix = layout.notes_prefix(project)
    # A catch-up cut short by its budget plans only the newest of the notes it lacks (PLAN_RATE a second).
    limit = None if catch_up is None else max(PLAN_MIN, int(catch_up * PLAN_RATE))
    plan = make_plan(changes, prefix, ndir, started, store, unreadable, view, limit)
    # Records first: a purge is known before the notes it names.
    plan.records, gone = records.to_fetch(changes, prefix, pdir, plan.unmatched)
    plan.new_purges, problem = records.fetch(store, plan.records, gone, pdir)
    unkept = problem if isinstance(problem, errors.NotWritable) else None  # records read, not cached
    problem = None if unkept is not None else problem
    purged = _purged_in(plan, pdir, ndir, unreadable) if problem is None else set()
    for note_id in plan.new_purges if unkept is not None else ():
        plan.fetch.pop(note_id, None)  # a purge the cache could not keep still keeps its note out
    kept: dict[str, bytes] = {}  # fetched notes the cache could not take
    added: list[str] = []
    with catching_up.durable(ndir, added):
        problem = problem or _fetch(store, plan, pdir, unreadable, progress, kept, catch_up, added=added)
    removed, unwritable = _drop(pdir, plan.drop)
    refused = problem if isinstance(problem, errors.NotWritable) else None if problem else (unwritable or unkept)
    if changes.kind == Changes.FULL and refused is None:
        _sweep_local(machine, ndir, plan.temps)
    reindexed = sorted((set(added) & plan.damaged) | set(removed))
    forgetting = bool(purged) and problem is None and refused is None
    # The caller's observer (the index follows the cache) is told with the folder's new time when these writes
    # were its only change (replica/kept_names.py), so the search's own index check is one stat.
    told = view is not None and not forgetting and _told(view, index, pdir, added, reindexed,
                                                          {ids.note_file(i) for i in added},
                                                          {ids.note_file(i) for i in removed})
    if (added or removed) and index is not None and not told:
        index(pdir, added, reindexed)
    if forgetting:  # last: its scrub compacts the index after every other change
        forgotten = states.forget(machine, store_desc, project, purged, index)
        if view is not None:
            view.end({ids.note_file(i) for i in added}, {ids.note_file(i) for i in [*removed, *forgotten]})
    state["unreadable"] = dict(sorted(unreadable.items())[:MAX_REPORTED])
    if refused is not None:  # the store answered in full; only the cache could not keep it
        _record_failure(pdir, state, refused)  # INV change-token: the previous token stays; the next one replays
        gone_here = (plan.drop - set(removed)) | purged | plan.new_purges
        return CacheStatus(False, None, None, True, added, removed, started, state["unreadable"], changes.how,
                           changes.warnings, Uncached(refused, kept, gone_here))
    if problem is not None:  # INV change-token: keep the previous token, so the next refresh replays
        _record_failure(pdir, state, problem)
        return CacheStatus(True, f"some notes could not be downloaded: {problem.one_line()}; "
                           f"{_checked_words(last_ok)}", problem.kind, True,
                           added, removed, last_ok, state["unreadable"], changes.how, changes.warnings)
    if plan.left:  # INV change-token: cut short by the search's budget; what arrived stays, the token waits
        _safe_state(pdir, state)
        status = CacheStatus(True, None, "catching-up", True, added, removed, last_ok, state["unreadable"],
                             changes.how, changes.warnings)
        return catching_up.cut_short(plan, status, _checked_words(last_ok))
    return _current(pdir, state, changes, started, plan.count, added, removed)


def _current(pdir: str, state: dict, changes: Changes, started: float, count: int | None,
             added: list[str] | None = None, removed: list[str] | None = None) -> CacheStatus:
    """The cache holds every change `changes` covers: its token is kept (INV change-token)."""
    state.update(token=changes.token, refreshed_at=started, how=changes.how)
    for key in ("last_error", "last_error_message", "last_attempt"):
        state.pop(key, None)
    if count is not None:
        state["notes"] = count
    _safe_state(pdir, state)
    return CacheStatus(False, None, None, True, added or [], removed or [], started, state["unreadable"],
                       changes.how, changes.warnings)


def _purged_in(plan: Plan, pdir: str, ndir: str, unreadable: dict) -> set[str]:
    """The purged notes this refresh must not fetch and must remove here (INV: a purged ID never returns)."""
    from agentmem.note import records
    from agentmem.replica.fetch_plan import cached_size

    if not (plan.fetch or plan.drop or plan.records):
        return set()  # nothing arrives or leaves: the per-turn cost stays one stat of the notes folder
    purged = set(records.states(pdir).purged)
    for note_id in purged:
        plan.fetch.pop(note_id, None)
        plan.damaged.discard(note_id)
        unreadable.pop(note_id, None)
    return (purged & (plan.drop | plan.new_purges)) | {i for i in purged if cached_size(ndir, i) is not None}


def _fetch(store: Store, plan: Plan, pdir: str, unreadable: dict, progress: Progress | None, kept: dict[str, bytes],
           catch_up: float | None = None, *, added: list[str]) -> errors.AgentmemError | None:
    """Download the plan's objects into the cache (cleaned: `redacted_copies.put`) and `added`; an unreadable one is
    skipped and reported, a store failure stops. Once the cache refuses a write, the rest go into `kept`,
    cleaned the same way (and the NotWritable is returned). After `catch_up` seconds it begins no other batch,
    leaving the count not fetched in `plan.left`."""
    from agentmem.replica import catching_up

    ndir = notes_folder(pdir)
    deadline = None if catch_up is None else time.monotonic() + catch_up
    refused: errors.NotWritable | None = None
    total = len(plan.fetch)
    report = progress if progress is not None and total >= PROGRESS_MIN else None
    # Newest first (IDs start with their UTC time): while a new machine catches up, a note saved a moment ago
    # elsewhere is in its next search (issue W, item 3).
    wanted = sorted(plan.fetch.items(), reverse=True)
    done = 0
    batch = FETCH_BATCH if catch_up is None or catch_up >= 1 else SEARCH_BATCH
    from agentmem.replica import store_reads

    reads = store_reads.read_each(store, wanted, plan.regular, deadline, batch, full_batch=FETCH_BATCH,
                                  one_by_one=REGULAR_BATCH)
    for done, (note_id, data) in enumerate(reads, start=1):
        if isinstance(data, errors.NotFound):
            unreadable.pop(note_id, None)  # deleted since it was listed
        elif isinstance(data, errors.Unreadable):  # INV unreadable-skipped
            unreadable[note_id] = {"error": data.kind, "message": data.one_line()}
        elif isinstance(data, errors.AgentmemError):
            return data
        else:
            unreadable.pop(note_id, None)
            if refused is None:
                try:
                    redacted_copies.put(pdir, note_id, data, durable=False)  # flushed at the end: catching_up.durable
                    added.append(note_id)
                except OSError as exc:  # INV loud-unwritable: an agent's read-only sandbox; answer from memory
                    if not errors.cannot_write(exc):
                        raise
                    refused = _unwritable(ndir, exc)
            if refused is not None:
                kept[note_id] = redacted_copies.clean(data)[0]  # INV no-credentials: shown as it would be cached
        if report is not None:
            report(*catching_up.counts(plan, done))
    # INV change-token: notes not read (the budget ran out) or not planned this time keep the token where it was
    plan.left = total - done + plan.beyond
    return refused


def _drop(pdir: str, doomed: set[str]) -> tuple[list[str], errors.AgentmemError | None]:
    from agentmem.replica.states import unlink_cached

    removed, refused = unlink_cached(pdir, sorted(doomed))
    return removed, _unwritable(notes_folder(pdir), refused[1]) if refused is not None else None


def _unwritable(ndir: str, exc: OSError) -> errors.NotWritable:
    return errors.NotWritable(f"cannot write the cache in {ndir} ({exc.strerror})", hint=errors.UNWRITABLE_HINT)


def _sweep_local(machine: str | os.PathLike, ndir: str, temps: list[str]) -> None:
    """Stale temp files of crashed writers: in the notes cache and in pending/ (never a live writer's)."""
    from agentmem.paths import pending_dir

    if temps:
        sweep_temp(ndir)
    sweep_temp(pending_dir(machine), dirs=True)


def _record_failure(pdir: str, state: dict, exc: errors.AgentmemError) -> None:
    state.update(last_error=exc.kind, last_error_message=exc.one_line(), last_attempt=time.time())
    _safe_state(pdir, state)


def ensure_fresh(
    machine: str | os.PathLike,
    store_desc: StoreDescription,
    project: str,
    *,
    max_age: float,
    timeout: float | None = None,
    force: bool = False,
    offline: bool = False,
    progress: Progress | None = None,
    check_timeout: float | None = None,
    catch_up: float | None = None,
    index: Index | None = None,
) -> CacheStatus:
    """Refresh, unless offline or the last good refresh is younger than `max_age` seconds (then say so).

    With `check_timeout` (a search) the store's check waits at most that long, and a store that
    recently did not answer in time is not asked (replica/backoff.py) unless `force`."""
    pdir = project_dir(machine, store_desc, project)
    redacted_copies.ensure_screened(pdir)
    state = _read_state(pdir)
    last = state.get("refreshed_at") if isinstance(state.get("refreshed_at"), (int, float)) else None
    unreadable = state.get("unreadable") if isinstance(state.get("unreadable"), dict) else {}
    if offline:
        if last is None:
            return CacheStatus(True, "offline mode: the cache was never refreshed", "offline", unreadable=unreadable)
        return CacheStatus(True, f"offline mode: cache last refreshed {ago(last)}", "offline", checked_at=last,
                           unreadable=unreadable)
    if not force and last is not None and max_age > 0 and 0 <= time.time() - last < max_age:
        return CacheStatus(True, f"the store was not asked: last checked {ago(last)}, within [cache] max_age "
                           f"({max_age:g} s)", "not-checked", checked_at=last, unreadable=unreadable)
    if check_timeout is not None and not force:
        from agentmem.replica import backoff

        recent = backoff.held(machine, store_desc)
        if recent is not None:
            return CacheStatus(True, f"{backoff.words(*recent)}; {_checked_words(last)}", errors.Offline.kind,
                               checked_at=last, unreadable=unreadable)
    return refresh(machine, store_desc, project, timeout=timeout, progress=progress, check_timeout=check_timeout,
                   catch_up=catch_up, index=index)


def ago(ts: float) -> str:
    seconds = max(0, int(time.time() - ts))
    if seconds < 120:
        return f"{seconds} s ago"
    if seconds < 7200:
        return f"{seconds // 60} min ago"
    return f"{seconds // 3600} h ago"


def _checked_words(ts: float | None) -> str:
    return "never checked before" if ts is None else f"last checked {ago(ts)}"
