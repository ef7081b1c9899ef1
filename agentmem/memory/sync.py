"""Bringing this machine's cache up to the store when that takes longer than a search may wait.

A new machine joining a big store has every note to download (100k notes in a folder store: about a minute). A
search downloads for at most SEARCH_CATCH_UP seconds (replica/cache.py), keeps what it fetched (each note is
in the cache the moment it is written) and answers marked stale with "catching up: N of M"; the next search
goes on from there, since its listing shows only what is still missing, newest first: a note saved a moment
ago elsewhere is in the next search even while the rest catch up. INV change-token: the change token advances
only with the refresh that fetched everything. `sync` (what `agentmem sync` runs, and setup for each mapped
project: `catch_up_all`) goes on until the cache holds every note, reporting its progress.

Sentence vectors for hybrid search catch up the same way: each hybrid search embeds for
`[search] embed_budget` seconds and keeps what it embedded (search/vectors.py); `embed_notes` (`agentmem
sync --embed`) and `embed_cached` (setup, on a machine whose search mode is hybrid) embed every cached note.

The pieces the refresh itself uses while it catches up (its flush, its counts) are in replica/catching_up.py.
Starting over belongs here too: accepting another store at the same location drops the change tokens
(`forget_changes`), so the next refresh lists the new store whole.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable

    from agentmem.config import Config
    from agentmem.store.base import StoreDescription

    Progress = Callable[[int, int], None]  # hears (done, total)

# Seconds of downloading per round of `sync`: each round opens the store afresh, so a round runs within
# one network budget ([network] timeout, 20 s by default) however long the whole catch-up takes.
SYNC_ROUND = 10.0
# The share of the store a sync may still lack after its first round above which the index is built once at
# the end rather than following each round: a build costs about 0.45 ms a note, following about 1.5 ms a
# note that arrives (docs/benchmarks.md).
REBUILD_SHARE = 0.3


def sync(machine: str | os.PathLike[str], cfg: Config, project: str, *, timeout: float | None = None,
         progress: Progress | None = None, embed: bool = False, embed_progress: Progress | None = None,
         index_progress: Progress | None = None) -> dict:
    """Refresh the project until the cache holds every note of the store (or a refresh fails), and leave its
    ranked index current; with `embed`, then give every cached note its sentence vectors (`embed_notes`;
    needs the hybrid extra, checked before anything is fetched).

    `progress(done, total)` hears the notes here of the notes in the store, `index_progress(done, total)` the
    notes indexed when the index is built whole, `embed_progress(done, total)` the notes embedded. Returns the
    JSON shape of `agentmem sync`: project, notes (in the cache), added, removed, rounds, the freshness keys,
    and with `embed`, `embedding`: {done, total, embedded}.

    The index follows each round, unless most of the store is still to come (a machine joining it): then it
    is built once at the end, which costs a third of following note by note (docs/benchmarks.md), and a
    search after the sync finds it current.
    """
    if embed:
        from agentmem.search import vectors

        vectors.require()  # before a long download: without the extra, the error that says how to add it
    from agentmem.replica import cache, redacted_copies
    from agentmem.search import follow, index

    pdir = cache.project_dir(machine, cfg.store, project)
    redacted_copies.ensure_screened(pdir)  # as a search does first: on a new cache, the mark that it was screened
    indexed = os.path.exists(index.index_path(pdir))
    following = indexed
    added: list[str] = []
    removed: list[str] = []
    rounds = 0
    while True:
        rounds += 1
        status = cache.refresh(machine, cfg.store, project, timeout=timeout, progress=progress, catch_up=SYNC_ROUND,
                               index=follow.update if following else None)
        added += status.added
        removed += status.removed
        if status.catching_up is None:
            break
        have, total = status.catching_up["have"], status.catching_up["total"]
        if following and total - have > total * REBUILD_SHARE:
            following = False  # built whole once every note is here
    if cfg.search_mode != "literal" and (added or removed or not indexed) and (not following or not indexed):
        from agentmem.search import ranked

        ranked.rebuild(pdir, index_progress)
    from agentmem.search import corrections

    corrections.cached_pairs(pdir)  # the next search need not read them
    out = {"project": project, "notes": len(cache.cached_ids(machine, cfg.store, project)), "added": len(added),
           "removed": len(removed), "rounds": rounds}
    if embed:  # what is cached, even when a refresh failed: embedding is local work
        out["embedding"] = embed_notes(machine, cfg, project, progress=embed_progress)
    return out | status.to_json()


def catch_up_all(machine: str | os.PathLike[str], cfg: Config, *,
                 progress: Callable[[str], tuple[Progress | None, Progress | None]] | None = None,
                 ) -> list[tuple[str, dict | str]]:
    """What setup runs once the store is verified: `sync` of each mapped project, so a machine joining a store
    has every note, and its index, when setup ends, not after many searches (issue W, item 3). Returns
    (project, sync's answer or the one line of what stopped it) each; a problem that concerns them all (a
    bad project name) comes as project "". `progress(project)` gives what hears that project's notes here and
    notes indexed, each (done, total), or None."""
    from agentmem import config
    from agentmem.errors import AgentmemError

    try:
        projects = sorted(config.check_project_name(p) for p in cfg.project_names())
    except AgentmemError as exc:
        return [("", exc.one_line())]
    out: list[tuple[str, dict | str]] = []
    for project in projects:
        here, indexing = progress(project) if progress is not None else (None, None)
        try:
            out.append((project, sync(machine, cfg, project, timeout=cfg.network_timeout, progress=here,
                                      index_progress=indexing)))
        except AgentmemError as exc:
            out.append((project, exc.one_line()))
        except OSError as exc:
            out.append((project, f"{exc.strerror or exc}: {exc.filename or ''}".strip(": ")))
    return out


def embed_notes(machine: str | os.PathLike[str], cfg: Config, project: str, *,
                progress: Progress | None = None) -> dict[str, int]:
    """Give every cached note of the project its sentence vectors for hybrid search, a few notes per
    transaction (an interrupted run keeps what it did). `progress(done, total)` hears the notes embedded of
    the notes cached. Returns {done, total, embedded}: embedded is how many this call did."""
    from agentmem.replica import cache
    from agentmem.search import ranked

    return ranked.embed(cache.project_dir(machine, cfg.store, project), progress=progress)


def forget_changes(machine: str | os.PathLike[str], store: StoreDescription) -> None:
    """Drop every project's change token for `store`, because another store was accepted at its
    location (INV store-identity): the next refresh lists it whole and prunes what the old one held."""
    from agentmem.paths import projects_cache
    from agentmem.replica import cache

    root = projects_cache(machine, store.key)
    try:
        projects = os.listdir(root)
    except OSError:
        return
    for name in projects:
        pdir = os.path.join(root, name)
        state = cache._read_state(pdir)
        if state.pop("token", None) is not None:
            cache._safe_state(pdir, state)


def embed_cached(machine: str | os.PathLike[str], cfg: Config, *,
                 progress: Callable[[str], Progress | None] | None = None) -> list[tuple[str, dict[str, int] | str]]:
    """What setup runs when hybrid is the search mode (else nothing): `embed_notes` for each mapped project
    with a cache. Returns (project, its {done, total, embedded} or the one line of what stopped it) each;
    a problem that concerns them all (the extra missing, a bad project name) comes as project "".
    `progress(project)` gives what hears that project's (done, total), or None."""
    from agentmem import config
    from agentmem.errors import AgentmemError
    from agentmem.replica import cache
    from agentmem.search import encoder

    try:
        if cfg.search_mode != "hybrid":
            return []
        projects = sorted(config.check_project_name(p) for p in cfg.project_names())
    except AgentmemError as exc:
        return [("", exc.one_line())]
    if not encoder.available():
        return [("", encoder.missing_extra().one_line())]
    out: list[tuple[str, dict[str, int] | str]] = []
    for project in projects:
        if not os.path.isdir(cache.notes_dir(machine, cfg.store, project)):
            continue  # nothing cached: its first search downloads the notes and embeds some
        try:
            out.append((project, embed_notes(machine, cfg, project, progress=progress(project) if progress else None)))
        except AgentmemError as exc:
            out.append((project, exc.one_line()))
        except OSError as exc:
            out.append((project, f"{exc.strerror or exc}: {exc.filename or ''}".strip(": ")))
    return out
