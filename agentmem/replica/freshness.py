"""How current a cached answer is: what `cache.ensure_fresh` and `cache.refresh` return, and its JSON.

Every search and read says whether it could miss notes (INV read-your-writes): `stale` and why, when the
cache last matched the store, the objects it could not read, and what the store says a person must hear
(a bucket that became public).

INV loud-unwritable: where the cache cannot be written (an agent's read-only sandbox), the notes that
arrived are kept in memory (`Uncached`) and answer that one search (search/find.py looks through them
beside the cache and the pending notes); cached notes the store no longer holds, or a purge names, are
left out; the answer is current (`stale` false) and says nothing was cached and why (`not_cached`). The
refresh keeps its previous token, so the next one that can write caches them.
"""

from __future__ import annotations

import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from agentmem.errors import AgentmemError


class Uncached:
    """The notes that arrived (id -> bytes, cleaned as the cache would hold them), the notes to leave out
    (no longer in the store, or purged), and `reason`."""

    __slots__ = ("notes", "gone", "reason")

    def __init__(self, why: AgentmemError, notes: dict[str, bytes], gone: set[str]) -> None:
        self.notes, self.gone = notes, gone
        self.reason = f"nothing was cached: {why.one_line()}"
        if notes:
            self.reason += f"; {len(notes)} note(s) read from the store for this answer only"


class CacheStatus:
    """How current the cache is after ensure_fresh/refresh."""

    def __init__(self, stale: bool, reason: str | None = None, error: str | None = None,
                 refreshed: bool = False, added: list[str] | None = None, removed: list[str] | None = None,
                 checked_at: float | None = None, unreadable: dict | None = None, how: str | None = None,
                 warnings: list[str] | None = None, uncached: Uncached | None = None):
        self.stale = stale
        self.reason = reason  # why it may be stale: what failed, or why the store was not asked
        self.error = error  # the error kind, e.g. "offline", "not-authenticated"; "not-checked" for max_age
        self.refreshed = refreshed  # the store was asked during this call
        self.added = added or []
        self.removed = removed or []
        self.checked_at = checked_at  # when the cache was last brought up to date with the store
        self.unreadable = unreadable or {}  # note id -> {"error", "message"}: in the store, not readable
        self.how = how  # how the store was asked ("unchanged (one stat)", "events feed (2 change(s))", ...)
        self.warnings = warnings or []  # what the store says a person must hear (a bucket that became public)
        self.uncached = uncached  # what the store answered that the cache could not keep
        self.catching_up: dict | None = None  # {"have", "total"}: downloads cut short (memory/sync.py)

    def to_json(self) -> dict:
        return {"stale": self.stale, "stale_reason": self.reason, "stale_error": self.error,
                "refreshed": self.refreshed, "checked_at": iso(self.checked_at),
                "unreadable": [{"id": k, **v} for k, v in sorted(self.unreadable.items())],
                "not_cached": self.uncached.reason if self.uncached is not None else None} | (
                    {"warnings": self.warnings} if self.warnings else {}) | (
                    {"catching_up": self.catching_up} if self.catching_up else {})


def iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + f".{int(ts * 1000) % 1000:03d}Z"
