"""Reading a refresh's notes from the store: many at once where the store can (a bucket: one transfer a
batch), a batch read again one at a time when it fails other than offline, only regular files of a folder
store, and never a batch begun past the deadline. What `replica/cache.py`'s fetch screens and writes."""

from __future__ import annotations

import time

from agentmem import errors
from agentmem.replica.fetch_plan import MAX_CACHED_OBJECT

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see paths.py)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from agentmem.store.base import Listed, Store


def read_each(store: Store, items: list[tuple[str, Listed]], regular: Callable[[Iterable[str]], set[str]] | None,
              deadline: float | None, batch_size: int, *, full_batch: int, one_by_one: int,
              ) -> Iterator[tuple[str, bytes | errors.AgentmemError]]:
    """(note id, its bytes or the error reading it raised), in order. A store that reads many at once
    (`get_many`) is asked `batch_size` at a time, and a batch that fails other than offline is read
    again one `get` at a time, so one object it cannot transfer keeps none of the others out.
    `regular(names)`: which names are regular files, asked a batch at a time; the others are not read.
    Past `deadline` (time.monotonic()) no other batch is begun; the first always is (progress), and every
    note of a batch read is given (its bytes are here). A store that may be read from another thread
    (`reads_ahead`: the folder store) reads a sync's next batch (batches of `full_batch`) while the caller
    screens and writes this one; a store read one object at a time is checked `one_by_one` names at a time."""
    from agentmem.replica import catching_up

    many = getattr(store, "get_many", None)
    if many is None:
        yield from _read_one_by_one(store, items, regular, deadline, one_by_one)
        return

    def read(start: int) -> list[tuple[str, bytes | errors.AgentmemError]]:
        batch = items[start:start + batch_size]
        if regular is not None:
            kept = regular([obj.path.rpartition("/")[2] for _, obj in batch])
            batch = [(i, obj) for i, obj in batch if obj.path.rpartition("/")[2] in kept]
        try:
            got: dict | None = many([obj.path for _, obj in batch], MAX_CACHED_OBJECT)
        except errors.Offline as exc:
            got = {obj.path: exc for _, obj in batch}
        except errors.AgentmemError:
            got = None
        out: list[tuple[str, bytes | errors.AgentmemError]] = []
        for note_id, obj in batch:
            if got is not None:
                out.append((note_id, got[obj.path]))
                continue
            try:
                data: bytes | errors.AgentmemError = store.get(obj.path, MAX_CACHED_OBJECT)
            except errors.AgentmemError as exc:
                data = exc
            out.append((note_id, data))
        return out

    starts = range(0, len(items), batch_size)
    if getattr(store, "reads_ahead", False) and batch_size >= full_batch:
        yield from catching_up.read_ahead(read, starts, deadline)
        return
    for start in starts:
        if start and deadline is not None and time.monotonic() > deadline:
            return
        yield from read(start)


def _read_one_by_one(store: Store, items: list[tuple[str, Listed]],
                     regular: Callable[[Iterable[str]], set[str]] | None, deadline: float | None,
                     size: int) -> Iterator[tuple[str, bytes | errors.AgentmemError]]:
    """`read_each` of a store that reads one object at a time (`get`)."""
    for start in range(0, len(items), size):
        if start and deadline is not None and time.monotonic() > deadline:
            return
        batch = items[start:start + size]
        if regular is not None:
            kept = regular([obj.path.rpartition("/")[2] for _, obj in batch])
            batch = [(i, obj) for i, obj in batch if obj.path.rpartition("/")[2] in kept]
        for i, (note_id, obj) in enumerate(batch):
            if (start or i) and deadline is not None and time.monotonic() > deadline:
                return
            try:
                data: bytes | errors.AgentmemError = store.get(obj.path, MAX_CACHED_OBJECT)
            except errors.AgentmemError as exc:
                data = exc
            yield note_id, data
