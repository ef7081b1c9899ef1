"""Recalling notes: search a project (after refreshing its cache) and read one note (what `search`,
`read` and MCP run). Both return the JSON shapes documented in docs/cli.md.

INV no-credentials: what both return has passed through `replica/redacted_copies.py` (cached notes when they
entered the cache, pending and store copies here): each credential shown as `[REDACTED:<kind>]`, and
`withheld` says where.
"""

from __future__ import annotations

from agentmem import errors
from agentmem.errors import InvalidInput

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from agentmem.config import Config
    from agentmem.errors import Command
    from agentmem.note.records import States
    from agentmem.replica.freshness import CacheStatus

MAX_LIMIT = 200


def search(machine: str, cfg: Config, project: str, query: str, *, limit: int = 10, mode: str | None = None,
           refresh: bool = False, offline: bool = False, timeout: float | None = None,
           progress: Callable[[int, int], object] | None = None, include_retracted: bool = False) -> dict:
    """Ask the store what changed (INV read-your-writes) unless `offline` or within `[cache] max_age`,
    then find `query` in `mode` (default: config's). `progress(done, total)` hears a long first sync.

    The result says how current it is: `stale` (could miss notes), `stale_reason`, `stale_error`,
    `checked_at` (when the cache last matched the store), `unreadable` (objects skipped), `not_cached`
    (the cache could not be written: what the store answered was searched in memory, and why); and in
    hybrid mode, while some notes have no sentence vectors yet (each search embeds `[search] embed_budget`
    seconds' worth first), `embedding`: {done, total}, the others having been ranked by their words.
    Retracted notes are left out unless `include_retracted` (then marked); purged ones always are.
    """
    from agentmem.replica import cache
    from agentmem.replica import redacted_copies as withheld_notes  # `withheld` below: what the query held
    from agentmem.replica.states import project_states
    from agentmem.search import find
    from agentmem.uploads import pending

    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1 or limit > MAX_LIMIT:
        from agentmem.errors import NextStep, Option

        raise InvalidInput(NextStep.of(Option("limit"), f" must be between 1 and {MAX_LIMIT}"))
    shown, withheld = _withhold(query)
    screened = withheld_notes.ensure_screened(cache.project_dir(machine, cfg.store, project))
    status = freshen(machine, cfg, project, refresh=refresh, offline=offline, timeout=timeout, progress=progress)
    mode = mode or cfg.search_mode
    notices: list[str] = []
    held: dict[str, list[dict]] = {}  # pending note id -> what was withheld from it
    # The cache holds a credential only as [REDACTED:<kind>], so a query holding one looks for that.
    wanted = shown if withheld else query
    states = project_states(machine, cfg.store, project)
    total = None
    embedding: dict[str, int] = {}
    if query.strip():
        found = find.find(machine, cfg.store, project, wanted, limit, mode, notices,
                          include_retracted=include_retracted, review_after=cfg.review_after, states=states,
                          held=held, uncached=status.uncached,
                          embed_budget=cfg.embed_budget if mode == "hybrid" else None, embedding=embedding)
    else:  # the list of recent notes, from the index, with how many notes there are in all
        found, total = find.recent(machine, cfg.store, project, limit, mode, include_retracted=include_retracted,
                                   review_after=cfg.review_after, states=states, held=held,
                                   uncached=status.uncached)
    results = [r.to_json() for r in found]
    _say_withheld(cache.project_dir(machine, cfg.store, project), results, held, screened)
    for r in results:
        _withhold_reason(r.get("retracted"))
    out = {
        "project": project,
        "query": shown,
        "mode": mode,
        "results": results,
        "pending_uploads": pending.count(machine),
        # The index could not be used: every note was scanned (ranked by words, also in hybrid mode).
        # Not "stale" (that says the store could not be checked).
        "scan": bool(notices),
        "scan_reason": notices[0] if notices else None,
    } | status.to_json()
    if total is not None:  # the list of recent notes says how many it left out
        out["more"] = max(0, total - len(results))
    if embedding and embedding["done"] < embedding["total"]:  # hybrid, some notes ranked by their words alone
        out["embedding"] = embedding
    if withheld:  # INV no-credentials: a query holding a credential is never echoed, nor what it matched
        out["withheld"] = [{"where": "query", "kind": kind} for kind in withheld]
        from agentmem.safety import credentials

        typed = [(query[f.start:f.end], f.kind) for f in credentials.scan(query, credentials.env_secrets())]
        for r in results:
            r["title"] = _withhold(r["title"], typed)[0]
            for m in r["matches"]:
                m["text"] = _withhold(m["text"], typed)[0]
    return out


def freshen(machine: str, cfg: Config, project: str, *, refresh: bool = False, offline: bool = False,
            timeout: float | None = None, progress: Callable[[int, int], object] | None = None) -> CacheStatus:
    """Bring the project's cache up to date as every search does (INV read-your-writes): ask the store
    what changed unless `offline` or within `[cache] max_age`. Returns the `cache.CacheStatus`, which
    says how current the answer is. The memory view (`view/data.py`) refreshes through here too."""
    from agentmem.replica import cache

    return cache.ensure_fresh(machine, cfg.store, project, max_age=cfg.cache_max_age, timeout=timeout,
                              force=refresh, offline=offline, progress=progress, check_timeout=cfg.check_timeout,
                              catch_up=cache.SEARCH_CATCH_UP, index=_follow)


def _follow(*args: Any, **kwargs: Any) -> None:
    """search/follow.update, imported once the cache changed: a refresh that finds nothing new tells the
    index nothing, and a per-turn search or read then does without the module (tests/test_imports.py)."""
    from agentmem.search import follow

    follow.update(*args, **kwargs)


def read(machine: str, cfg: Config, project: str, note_id: str, *, fresh: bool = False,
         timeout: float | None = None, elsewhere: Callable[[str], Command] | None = None) -> tuple[dict, bytes]:
    """One note of `project`: this machine's pending copy, else the cache, else the store.

    First the store is asked what changed, as a search asks (INV read-your-writes: `[network]
    check_timeout`, `[cache] max_age` unless the note is not here, the hold after a store that did not
    answer), so that a retraction
    or purge made on another machine is known before the note is shown: a note's bytes never change, its
    states do. `stale` says when that could not be done. An ID the cache still lacks is then asked of the
    store itself, within what is left of the one network budget (INV bounded-network); a note another
    project holds is named there (memory/locate.py). Returns the JSON shape and the note's bytes (for
    framing). `fresh` reads the store itself, bypassing the cache. `elsewhere(project)`: the command a
    note of another project is named with (default: this read there).
    """
    import os

    from agentmem.note import document
    from agentmem.paths import pending_dir
    from agentmem.replica import cache, redacted_copies
    from agentmem.replica.states import project_states
    from agentmem.store import identity
    from agentmem.store.timeout import Deadline
    from agentmem.uploads import pending

    if isinstance(note_id, str) and not document.ALLOCATED.match(note_id):  # an allocated ID holds no credential
        from agentmem.safety import screening

        screening.refuse_argument(note_id, "the note ID", "read")  # never echoed, never sent to the store
    note_id = document.check_id(note_id)
    deadline = Deadline(timeout)
    data, source, status = None, None, None
    pdir = cache.project_dir(machine, cfg.store, project)
    screened = fresh or redacted_copies.ensure_screened(pdir)
    if not fresh:  # an ID not here is asked for even within [cache] max_age (its note may be new)
        here = cache.read_cached(machine, cfg.store, project, note_id) is not None or os.path.isdir(
            os.path.join(pending_dir(machine), note_id))
        status = freshen(machine, cfg, project, refresh=not here, timeout=deadline.left())
    _refuse_purged(project_states(machine, cfg.store, project), project, note_id)
    if not fresh:
        try:
            entry, pdata = pending.load(machine, note_id)
            # with a team, a pending note is read in the scope of the store it is bound for (memory/scopes.py)
            bound = entry.store is None or entry.store == cfg.store or (cfg.scope == "personal" and cfg.team is None)
            if entry.project == project and bound:
                data, source = pdata, "pending"
        except errors.NotFound:
            pass
        if data is None and status is not None and status.uncached is not None:  # a cache this run cannot write
            if note_id in status.uncached.gone:
                raise errors.NotFound(f"note {note_id} of project {project} is no longer in the store")
            data = status.uncached.notes.get(note_id)
            source = "store" if data is not None else None
        if data is None:
            data = cache.read_cached(machine, cfg.store, project, note_id)
            source = "cache" if data is not None else None
    if data is None:
        from agentmem.replica.fetch_plan import MAX_CACHED_OBJECT

        store = identity.open_known(machine, cfg.store, timeout=deadline.left())
        try:
            data = store.get(document.note_path(project, note_id), MAX_CACHED_OBJECT)
        except errors.NotFound:
            from agentmem.memory import locate

            step = elsewhere or (lambda other: errors.Command("read", note_id, "--project", other))
            raise locate.not_in_project(machine, cfg, project, note_id, step, timeout=deadline.left()) from None
        except errors.Unreadable as exc:
            if exc.too_large:  # not a note agentmem wrote (notes are <= 64 KiB)
                raise InvalidInput(exc.one_line()) from None
            raise
        source = "store"
        if status is not None and not status.stale:
            status = None  # the store answered for this very note, which never changes: the answer is current
        if not fresh:
            try:
                cache.add_confirmed(machine, cfg.store, project, note_id, data, index=_follow)
            except OSError as exc:  # INV loud-unwritable: a read-only sandbox still reads; a later run caches it
                if not errors.cannot_write(exc):
                    raise
    held = redacted_copies.withheld_of(pdir, note_id) if source == "cache" else []
    if source != "cache" or not screened:  # a pending or store copy (cached just now, cleaned the same way)
        data, found = redacted_copies.clean(data)
        held = held + found
    parsed = document.parse(data)
    if status is None:
        status = cache.CacheStatus(False, checked_at=cache.last_checked(machine, cfg.store, project))
    freshness = status.to_json()
    freshness.pop("unreadable", None)
    freshness.pop("not_cached", None)
    out = {"id": note_id, "project": project, "source": source, "meta": parsed.meta, "body": parsed.body,
           "withheld": held, **freshness}
    out |= note_states(project_states(machine, cfg.store, project), note_id, parsed.meta, cfg.review_after)
    _withhold_reason(out["retracted"])
    return out, data


def note_states(states: States, note_id: str, meta: dict, review_after: float | None) -> dict:
    """A note's states as `read` (and the view) show them: `retracted` (the retraction: record, agent,
    created, reason) or null, `review_due`, `review_by` (the date that applies, or null), `pinned`."""
    from agentmem.note import document

    when = document.review_date(meta, review_after)
    return {"retracted": states.retracted.get(note_id), "review_due": when is not None and when <= document.today(),
            "review_by": when, "pinned": note_id in states.pinned()}


def _withhold_reason(retraction: dict | None) -> None:
    """INV no-credentials: a retraction's reason shown with each credential as `[REDACTED:<kind>]`. The cache
    keeps records cleaned already (records.clean); this covers one it could not clean (a read-only sandbox)."""
    if retraction and retraction.get("reason"):
        retraction["reason"] = _withhold(retraction["reason"])[0]


def _refuse_purged(states: States, project: str, note_id: str) -> None:
    """A purged note is not found, ever (its ID is never fetched again), and the answer says why."""
    purge = states.purged.get(note_id)
    if purge is not None:
        raise errors.NotFound(f"note {note_id} of project {project} was purged on {purge['created'][:10]} by "
                              f"{purge['agent']}: it no longer exists")


def _say_withheld(pdir: str, results: list[dict], held: dict[str, list[dict]], screened: bool) -> None:
    """Each result's `withheld`: what the cache withheld from the note (its record), or from a pending note.

    A cache that could not be screened (a read-only sandbox after an upgrade) may hold a raw credential:
    then what each result shows is cleaned here."""
    from agentmem.replica import redacted_copies

    recorded = redacted_copies.recorded_ids(pdir)
    for r in results:
        if r["pending"]:
            r["withheld"] = held.get(r["id"], [])
        else:
            r["withheld"] = redacted_copies.withheld_of(pdir, r["id"]) if r["id"] in recorded else []
        if not screened:
            r["title"], kinds = _withhold(r["title"])
            r["withheld"] += [{"where": "title", "kind": k} for k in kinds]
            for m in r["matches"]:
                m["text"], kinds = _withhold(m["text"])
                r["withheld"] += [{"where": "body" if m["line"] else "title", "kind": k} for k in kinds]


def _withhold(text: str, typed: list[tuple[str, str]] | None = None) -> tuple[str, list[str]]:
    """`text` with credentials replaced, and the kinds withheld; `typed`: (secret, kind) pairs to replace too."""
    if not isinstance(text, str) or not text:
        return text, []
    from agentmem.safety import credentials, screening

    shown, kinds = screening.withhold(text, credentials.env_secrets())
    for secret, kind in typed or ():
        shown = shown.replace(secret, f"[REDACTED:{kind}]")
    return shown, kinds
