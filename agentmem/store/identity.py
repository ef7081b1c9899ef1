"""Which store this machine knows at a configured location, so another one there is never taken for it.

INV store-identity: the first time this machine proves a store's identity (a
folder store's marker ID, a bucket's creation time) it records it in
`cache/<store key>/store.json`; from then on every open of that location expects
it, and a store without it is unreachable: saves stay pending, searches answer
from the cache marked stale, nothing is pruned. `agentmem setup --new-store`
records whatever store is there now (the only way to accept a replaced one).
"""

from __future__ import annotations

import json
import os

from agentmem.fsutil import read_bytes, write_atomic
from agentmem.paths import STORE_IDENTITY_FILE, pending_dir, store_cache
from agentmem.store.base import Store, StoreDescription
from agentmem.store.opening import open_store

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable


def record_path(machine: str | os.PathLike, desc: StoreDescription) -> str:
    return os.path.join(store_cache(machine, desc.key), STORE_IDENTITY_FILE)


def recorded(machine: str | os.PathLike, desc: StoreDescription) -> str | None:
    """The identity this machine recorded for `desc`, or None (never proved one, or the record is unreadable)."""
    try:
        data = json.loads(read_bytes(record_path(machine, desc), 4096))
    except (OSError, ValueError):
        return None
    found = data.get("identity") if isinstance(data, dict) else None
    return found if isinstance(found, str) and found else None


def record(machine: str | os.PathLike, desc: StoreDescription, identity: str) -> None:
    """Remember `identity` as the store at `desc` (best effort: a failure only delays the protection)."""
    body = {"identity": identity, "kind": desc.kind, "location": desc.location}
    try:
        write_atomic(record_path(machine, desc), (json.dumps(body, sort_keys=True) + "\n").encode())
    except OSError:
        pass


def has_trace(machine: str | os.PathLike, desc: StoreDescription,
              pending_stores: Callable[[], Iterable[StoreDescription]]) -> bool:
    """Whether this machine ever used the store at `desc`: a cache for it, or a pending upload to it.
    `pending_stores()` gives the stores this machine's pending uploads go to (the caller, above memory/,
    reads them; asked only when there is no cache)."""
    if os.path.isdir(store_cache(machine, desc.key)):
        return True
    return os.path.isdir(pending_dir(machine)) and any(store == desc for store in pending_stores())


def open_known(machine: str | os.PathLike, desc: StoreDescription, *, timeout: float | None = None) -> Store:
    """Open the store at `desc`, expecting the identity this machine recorded (recording it the first time)."""
    return open_store(desc, timeout=timeout, identity=recorded(machine, desc),
                      remember=lambda found: record(machine, desc, found))
