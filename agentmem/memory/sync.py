"""Bringing this machine's cache up to the store when that takes longer than a search may wait.

A new machine joining a big store has every note to download (100k notes in a folder store: about a
minute). A search downloads for at most SEARCH_CATCH_UP seconds, keeps what it fetched (each note is in
the cache the moment it is written) and answers marked stale with "catching up: N of M"; the next search
goes on from there, since its listing shows only what is still missing. INV change-token: the change
token advances only with the refresh that fetched everything. `sync` (what `agentmem sync` runs) goes
on until the cache holds every note, reporting its progress.

Starting over belongs here too: accepting another store at the same location drops the change tokens
(`forget_changes`), so the next refresh lists the new store whole.
"""

from __future__ import annotations

import os

# Seconds a search spends downloading before it answers. 2026-12-01 (issue 26): a 100k-note catch-up cost
# every search of a new machine 26-40 s. Indexing what arrived costs about twice its download (1.5 ms
# against 0.7 ms a note, loaded 2-core machine), so 1.5 s of downloads (~2,000 notes of a local folder
# store) makes a catch-up search about 5 s; `agentmem sync` fetches the rest at once.
SEARCH_CATCH_UP = 1.5
# Notes written at once above which one flush of every filesystem (os.sync) replaces an fsync per note:
# 2026-12-01, this machine: an fsync costs ~3 ms a note (7,240 notes: 21 s), os.sync after 2,000 notes 0.5 s.
FLUSH_ALL_FROM = 64
# Seconds of downloading per round of `sync`: each round opens the store afresh, so a round runs within
# one network budget ([network] timeout, 20 s by default) however long the whole catch-up takes.
SYNC_ROUND = 10.0


class durable:  # noqa: N801 - used like a function: `with durable(folder, names):`
    """Make the notes written into `folder` (IDs appended to `note_ids` inside the block) durable at its end.

    Each cached note is written without its own fsync and all are flushed once the downloads stop, one
    fsync each or, for many, one os.sync (FLUSH_ALL_FROM). 2026-12-01 (issue 26): two fsyncs a note (the
    file, the folder) were 8 ms of the 11 ms each note cost a catch-up on this machine.
    """

    def __init__(self, folder: str, note_ids: list[str]):
        self.folder, self.note_ids = folder, note_ids

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        from agentmem.fsutil import fsync_dir
        from agentmem.memory import ids

        if len(self.note_ids) >= FLUSH_ALL_FROM and hasattr(os, "sync"):
            os.sync()
            return
        for note_id in self.note_ids:
            try:
                fd = os.open(os.path.join(self.folder, ids.note_file(note_id)), os.O_RDONLY)
            except OSError:
                continue  # gone meanwhile (a purge): nothing to keep
            try:
                os.fsync(fd)
            except OSError:
                pass
            finally:
                os.close(fd)
        if self.note_ids:
            fsync_dir(self.folder)


def counts(plan, done: int) -> tuple[int, int]:
    """(notes here, notes in all) after `done` of a refresh plan's downloads: of the store's notes when
    a listing told, else of the plan's."""
    ahead = len(plan.fetch)
    return (plan.count - ahead + done, plan.count) if (plan.count or -1) >= ahead else (done, ahead)


def cut_short(plan, status, checked: str):
    """The status of a refresh whose downloads stopped at the catch-up budget (`plan.left` not fetched)."""
    have, total = counts(plan, len(plan.fetch) - plan.left)
    status.reason = f"catching up: {have} of {total} notes are here; each search fetches more; {checked}"
    status.catching_up = {"have": have, "total": total}
    return status


def sync(machine: str | os.PathLike, cfg, project: str, *, timeout: float | None = None, progress=None) -> dict:
    """Refresh the project until the cache holds every note of the store (or a refresh fails).

    `progress(done, total)` hears the notes here of the notes in the store. Returns the JSON shape of
    `agentmem sync`: project, notes (in the cache), added, removed, rounds, and the freshness keys.
    """
    from agentmem.memory import cache

    added: list[str] = []
    removed: list[str] = []
    rounds = 0
    while True:
        rounds += 1
        status = cache.refresh(machine, cfg.store, project, timeout=timeout, progress=progress, catch_up=SYNC_ROUND)
        added += status.added
        removed += status.removed
        if status.catching_up is None:
            break
    from agentmem.search import corrections

    corrections.cached_pairs(cache.project_dir(machine, cfg.store, project))  # the next search need not read them
    out = {"project": project, "notes": len(cache.cached_ids(machine, cfg.store, project)), "added": len(added),
           "removed": len(removed), "rounds": rounds}
    return out | status.to_json()


def forget_changes(machine: str | os.PathLike, store) -> None:
    """Drop every project's change token for `store`, because another store was accepted at its
    location (INV store-identity): the next refresh lists it whole and prunes what the old one held."""
    from agentmem.memory import cache
    from agentmem.paths import cache_root

    root = os.path.join(cache_root(machine), store.key, "projects")
    try:
        projects = os.listdir(root)
    except OSError:
        return
    for name in projects:
        pdir = os.path.join(root, name)
        state = cache._read_state(pdir)
        if state.pop("token", None) is not None:
            cache._safe_state(pdir, state)
