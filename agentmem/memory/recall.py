"""Recalling notes: search a project (after refreshing its cache) and read one note (what `search`,
`read` and MCP run). Both return the JSON shapes documented in docs/cli.md.
"""

from __future__ import annotations

from agentmem import errors
from agentmem.errors import InvalidInput

MAX_LIMIT = 200


def search(machine: str, cfg, project: str, query: str, *, limit: int = 10, mode: str | None = None,
           refresh: bool = False, offline: bool = False, timeout: float | None = None) -> dict:
    """Refresh the project's cache unless told otherwise, then find `query` in `mode` (default: config's)."""
    from agentmem.memory import cache, pending
    from agentmem.search import find

    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1 or limit > MAX_LIMIT:
        raise InvalidInput(f"--limit must be between 1 and {MAX_LIMIT}")
    status = cache.ensure_fresh(machine, cfg.store, project, max_age=cfg.cache_max_age, timeout=timeout,
                                force=refresh, offline=offline)
    mode = mode or cfg.search_mode
    notices: list[str] = []
    results = find.find(machine, cfg.store, project, query, limit, mode, notices)
    return {
        "project": project,
        "query": query,
        "mode": mode,
        "results": [r.to_json() for r in results],
        "pending_uploads": pending.count(machine),
        # The index could not be used: every note was scanned (ranked by words, also in hybrid mode).
        # Not "stale" (that says the store could not be checked).
        "scan": bool(notices),
        "scan_reason": notices[0] if notices else None,
    } | status.to_json()


def read(machine: str, cfg, project: str, note_id: str, *, fresh: bool = False,
         timeout: float | None = None) -> tuple[dict, bytes]:
    """One note of `project`: this machine's pending copy, else the cache, else the store.

    Returns the JSON shape and the note's bytes (for framing). `fresh` reads the store itself.
    """
    from agentmem.memory import cache, notes, pending
    from agentmem.store.base import open_store

    note_id = notes.check_id(note_id)
    data, source = None, None
    if not fresh:
        try:
            entry, pdata = pending.load(machine, note_id)
            if entry.project == project:
                data, source = pdata, "pending"
        except errors.NotFound:
            pass
        if data is None:
            data = cache.read_cached(machine, cfg.store, project, note_id)
            source = "cache" if data is not None else None
    if data is None:
        data = open_store(cfg.store, timeout=timeout).get(notes.note_path(project, note_id))
        source = "store"
        if len(data) > cache.MAX_CACHED_OBJECT:  # not a note agentmem wrote (notes are <= 64 KiB)
            raise InvalidInput(f"{notes.note_path(project, note_id)} is {len(data)} bytes, too large for a note "
                               "(over 1 MiB); not shown")
        if not fresh:
            cache.add_confirmed(machine, cfg.store, project, note_id, data)
    parsed = notes.parse(data)
    return {"id": note_id, "project": project, "source": source, "meta": parsed.meta, "body": parsed.body}, data
