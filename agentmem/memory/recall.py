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
    shown, withheld = _withhold(query)
    status = cache.ensure_fresh(machine, cfg.store, project, max_age=cfg.cache_max_age, timeout=timeout,
                                force=refresh, offline=offline)
    mode = mode or cfg.search_mode
    notices: list[str] = []
    results = [r.to_json() for r in find.find(machine, cfg.store, project, query, limit, mode, notices)]
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
    if withheld:  # INV no-credentials: a query holding a credential is never echoed, nor what it matched
        out["withheld"] = [{"where": "query", "kind": kind} for kind in withheld]
        from agentmem.safety import credentials

        typed = [(query[f.start:f.end], f.kind) for f in credentials.scan(query, credentials.env_secrets())]
        for r in results:
            r["title"] = _withhold(r["title"], typed)[0]
            for m in r["matches"]:
                m["text"] = _withhold(m["text"], typed)[0]
    return out


def read(machine: str, cfg, project: str, note_id: str, *, fresh: bool = False,
         timeout: float | None = None) -> tuple[dict, bytes]:
    """One note of `project`: this machine's pending copy, else the cache, else the store.

    Returns the JSON shape and the note's bytes (for framing). `fresh` reads the store itself.
    """
    from agentmem.memory import cache, notes, pending
    from agentmem.store.base import open_store

    if isinstance(note_id, str) and not notes.ALLOCATED.match(note_id):  # an allocated ID holds no credential
        from agentmem.safety import screening

        screening.refuse_argument(note_id, "the note ID", "read")  # never echoed, never sent to the store
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


def _withhold(text, typed: list[tuple[str, str]] | None = None) -> tuple[str, list[str]]:
    """`text` with credentials replaced, and the kinds withheld; `typed`: (secret, kind) pairs to replace too."""
    if not isinstance(text, str) or not text:
        return text, []
    from agentmem.safety import credentials, screening

    shown, kinds = screening.withhold(text, credentials.env_secrets())
    for secret, kind in typed or ():
        shown = shown.replace(secret, f"[REDACTED:{kind}]")
    return shown, kinds
