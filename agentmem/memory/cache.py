"""The per-store, per-project cache of notes, and its refresh.

INV atomic-cache: a cached note is written to a temp file and renamed into
place, so an interrupted download never appears as a complete cached file.
INV cache-kept-on-failure: cached notes are pruned only after a complete
listing of the project; on any error the previous cache stays as it was and
the result says the data may be stale, and why.

Only the project asked for is listed and downloaded, never every project.
"""

from __future__ import annotations

import json
import os
import time

from agentmem import errors
from agentmem.fsutil import read_bytes, sweep_temp, write_atomic
from agentmem.memory import ids
from agentmem.paths import cache_root
from agentmem.store.base import StoreDescription

# Objects larger than this in a listing are not notes we wrote (notes are <= 64 KiB);
# they are skipped rather than downloaded.
MAX_CACHED_OBJECT = 1024 * 1024
STATE_FILE = "state.json"


def project_dir(machine: str | os.PathLike, store: StoreDescription, project: str) -> str:
    return os.path.join(cache_root(machine), store.key, "projects", project)


def notes_dir(machine: str | os.PathLike, store: StoreDescription, project: str) -> str:
    return os.path.join(project_dir(machine, store, project), "notes")


class CacheStatus:
    """How current the cache is after ensure_fresh/refresh."""

    def __init__(self, stale: bool, reason: str | None = None, error: str | None = None,
                 refreshed: bool = False, added: list[str] | None = None, removed: list[str] | None = None):
        self.stale = stale
        self.reason = reason  # why it may be stale: what failed
        self.error = error  # the error kind, e.g. "offline", "not-authenticated"
        self.refreshed = refreshed
        self.added = added or []
        self.removed = removed or []

    def to_json(self) -> dict:
        return {"stale": self.stale, "stale_reason": self.reason, "stale_error": self.error,
                "refreshed": self.refreshed}


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
        return json.loads(read_bytes(os.path.join(pdir, STATE_FILE)))
    except (OSError, ValueError):
        return {}


def _write_state(pdir: str, state: dict) -> None:
    write_atomic(os.path.join(pdir, STATE_FILE), (json.dumps(state, sort_keys=True) + "\n").encode())


def _notify(pdir: str, added: list[str], removed: list[str]) -> None:
    """Tell derived indexes which notes arrived or left (ranked search follows the cache)."""
    from agentmem.search import ranked

    ranked.update(pdir, added, removed)


def add_confirmed(machine: str | os.PathLike, store: StoreDescription, project: str, note_id: str, data: bytes) -> None:
    """Place a note this machine just saved, and the store confirmed, into the cache."""
    target = os.path.join(notes_dir(machine, store, project), ids.note_file(note_id))
    if os.path.exists(target):
        return
    write_atomic(target, data)
    _notify(project_dir(machine, store, project), [note_id], [])


def refresh(machine: str | os.PathLike, store_desc: StoreDescription, project: str, *,
            timeout: float | None = None, store=None) -> CacheStatus:
    """List the project's notes completely, download the missing ones, prune the vanished ones."""
    from agentmem.store.base import open_store

    pdir = project_dir(machine, store_desc, project)
    ndir = os.path.join(pdir, "notes")
    prefix = f"projects/{project}/notes"
    state = _read_state(pdir)
    try:
        store = store or open_store(store_desc, timeout=timeout)
        listing = store.list(prefix)
    except errors.AgentmemError as exc:
        state.update(last_error=exc.kind, last_error_message=exc.one_line(), last_attempt=time.time())
        _safe_state(pdir, state)
        return CacheStatus(True, f"could not list the store: {exc.one_line()}", exc.kind)

    remote: dict[str, int] = {}
    for obj in listing:
        head, _, name = obj.path.rpartition("/")
        m = ids.NOTE_FILE.match(name)
        if head != prefix or not m or obj.size > MAX_CACHED_OBJECT:
            continue  # not a note of this project: never follow it out of the cache folder
        remote[m.group(1)] = obj.size

    local = set(cached_ids(machine, store_desc, project))
    added: list[str] = []
    problem: errors.AgentmemError | None = None
    for note_id in sorted(set(remote) - local):
        try:
            data = store.get(f"{prefix}/{note_id}.md")
        except errors.NotFound:
            continue  # deleted since the listing
        except errors.AgentmemError as exc:
            problem = exc
            break
        write_atomic(os.path.join(ndir, ids.note_file(note_id)), data)
        added.append(note_id)

    removed = sorted(local - set(remote))
    for note_id in removed:
        try:
            os.unlink(os.path.join(ndir, ids.note_file(note_id)))
        except FileNotFoundError:
            pass
    sweep_temp(ndir)
    if added or removed:
        _notify(pdir, added, removed)

    if problem is not None:
        state.update(last_error=problem.kind, last_error_message=problem.one_line(), last_attempt=time.time())
        _safe_state(pdir, state)
        return CacheStatus(True, f"some notes could not be downloaded: {problem.one_line()}", problem.kind,
                           True, added, removed)
    state = {"refreshed_at": time.time(), "notes": len(remote)}
    _safe_state(pdir, state)
    return CacheStatus(False, None, None, True, added, removed)


def _safe_state(pdir: str, state: dict) -> None:
    try:
        _write_state(pdir, state)
    except OSError:
        pass


def ensure_fresh(
    machine: str | os.PathLike,
    store_desc: StoreDescription,
    project: str,
    *,
    max_age: float,
    timeout: float | None = None,
    force: bool = False,
    offline: bool = False,
) -> CacheStatus:
    """Refresh unless the last good refresh is younger than `max_age` seconds."""
    pdir = project_dir(machine, store_desc, project)
    state = _read_state(pdir)
    last = state.get("refreshed_at")
    if offline:
        if last is None:
            return CacheStatus(True, "offline mode: the cache was never refreshed", "offline")
        return CacheStatus(True, f"offline mode: cache last refreshed {_ago(last)}", "offline")
    if not force and isinstance(last, (int, float)) and 0 <= time.time() - last < max_age:
        return CacheStatus(False)
    return refresh(machine, store_desc, project, timeout=timeout)


def _ago(ts: float) -> str:
    seconds = max(0, int(time.time() - ts))
    if seconds < 120:
        return f"{seconds} s ago"
    if seconds < 7200:
        return f"{seconds // 60} min ago"
    return f"{seconds // 3600} h ago"
