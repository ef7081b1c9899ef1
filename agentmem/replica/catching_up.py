"""What a refresh does while it catches up with a big store: flush what it wrote once, count how far it got.

`replica/cache.py` uses these during a refresh; `memory/sync.py` (above the cache) drives a whole
catch-up. Kept apart so the cache imports nothing that imports it.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see paths.py)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import TypeVar

    from agentmem.replica.fetch_plan import Plan
    from agentmem.replica.freshness import CacheStatus

    T = TypeVar("T")

# Notes written at once above which one flush of the cache's file system (syncfs; os.sync where there is
# none) replaces an fsync per note. Such a flush waits for whatever else was written there too (os.sync:
# 0.3-0.6 s on the shared machine, where 64 fsyncs of notes took 10 ms), so a search's catch-up (a few
# hundred notes at most) fsyncs each, and only a sync's rounds of thousands flush all at once
# (docs/benchmarks.md).
FLUSH_ALL_FROM = 1000


class durable:  # noqa: N801 - used like a function: `with durable(folder, names):`
    """Make the notes written into `folder` (IDs appended to `note_ids` inside the block) durable at its end.

    Each cached note is written without its own fsync and all are flushed once the downloads stop, one
    fsync each or, for many (FLUSH_ALL_FROM), one syncfs of the cache's file system (Linux; elsewhere one
    os.sync). Two fsyncs a note (the file, the folder) were most of what each note cost a catch-up (issue 26;
    docs/benchmarks.md, "A new machine joining the 100k store").
    """

    def __init__(self, folder: str, note_ids: list[str]):
        self.folder, self.note_ids = folder, note_ids

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        from agentmem.fsutil import fsync_dir, fsync_file, sync_file_systems
        from agentmem.note import ids

        if len(self.note_ids) >= FLUSH_ALL_FROM:  # one syncfs of the cache's file system (Linux), else os.sync
            if sync_file_systems([self.folder]):
                return
            if hasattr(os, "sync"):
                os.sync()
                return
        for note_id in self.note_ids:
            try:
                fsync_file(os.path.join(self.folder, ids.note_file(note_id)))
            except OSError:
                continue  # gone meanwhile (a purge): nothing to keep; a failed fsync is no worse than none
        if self.note_ids:
            fsync_dir(self.folder)


def counts(plan: Plan, done: int) -> tuple[int, int]:
    """(notes here, notes in all) after `done` of a refresh plan's downloads: of the store's notes when
    a listing told, else of the plan's."""
    ahead, count = len(plan.fetch) + plan.beyond, plan.count
    return (count - ahead + done, count) if count and count >= ahead else (done, ahead)


def cut_short(plan: Plan, status: CacheStatus, checked: str) -> CacheStatus:
    """The status of a refresh whose downloads stopped at the catch-up budget (`plan.left` not fetched)."""
    have, total = counts(plan, len(plan.fetch) + plan.beyond - plan.left)
    status.reason = f"catching up: {have} of {total} notes are here; each search fetches more; {checked}"
    status.catching_up = {"have": have, "total": total}
    return status


class _Ahead:
    """`read(start)` running on a thread of its own; `result()` waits for it and gives what it returned or
    raises what it raised."""

    def __init__(self, read: Callable[[int], list[T]], start: int) -> None:
        import threading

        self.box: dict = {}
        self.thread = threading.Thread(target=self._run, args=(read, start), name="agentmem-read-ahead", daemon=True)
        self.thread.start()

    def _run(self, read: Callable[[int], list[T]], start: int) -> None:
        try:
            self.box["value"] = read(start)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            self.box["error"] = exc

    def result(self) -> list[T]:
        self.thread.join()
        if "error" in self.box:
            raise self.box["error"]
        return self.box["value"]


def read_ahead(read: Callable[[int], list[T]], starts: Iterable[int], deadline: float | None) -> Iterator[T]:
    """What `read(start)` gives for each of `starts`, in order, the next batch read on another thread while the
    caller takes in this one: a sync's reads from the store overlap its screening and writing. No batch is
    begun past `deadline` (time.monotonic()) but the first; every batch begun is given whole. The caller
    stopping early waits for the batch being read (a store is not used by two threads once this returns)."""
    order = iter(starts)
    first = next(order, None)
    pending = _Ahead(read, first) if first is not None else None
    try:
        while pending is not None:
            got: list[T] = pending.result()
            pending = None
            following = next(order, None)
            if following is not None and (deadline is None or time.monotonic() <= deadline):
                pending = _Ahead(read, following)
            yield from got
    finally:
        if pending is not None:
            pending.thread.join()
