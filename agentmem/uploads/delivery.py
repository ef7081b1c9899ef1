"""Delivering pending entries: upload to the recorded destination, confirm, then remove.

INV nothing-lost: an entry is removed only after the store confirmed the object; any failure or
unknown outcome keeps it (uploads/pending.py holds it). INV same-bytes-retry: a retry sends the
entry's own bytes to its own destination. A confirmed note goes straight into this machine's cache,
so its next search finds it; the caller passes `index` (search/follow.update) to keep the index
as current.

A retry that confirms a note leaves a receipt in pending/.confirmed/<id>.json
(kept RECEIPT_SECONDS), so a retry that lost the race with it, or came after
a hook uploaded the note, reports the note saved rather than not found.

A purge record is more than a record (INV purged-gone): its entry is the purge's pending work, and
leaves pending/ only once the store confirmed the record *and* no longer holds the note it names.
Every path that delivers entries (`save --retry`, the Stop hook, `purge` again) therefore finishes
the purge: the note's bytes leave this machine (`states.forget`), the record is put, the note is
deleted from the store, and only then is the entry removed.
"""

from __future__ import annotations

import json
import os
import time

from agentmem import errors
from agentmem.errors import InvalidInput, NextStep, NotFound
from agentmem.fsutil import read_bytes, write_atomic
from agentmem.note import records
from agentmem.note.document import check_id, note_path
from agentmem.paths import receipts_dir
from agentmem.replica.states import forget
from agentmem.store.base import StoreDescription
from agentmem.store.identity import open_known
from agentmem.uploads import pending

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Callable

    from agentmem.store.base import Store
    from agentmem.store.witness import Watched

# Seconds. A week covers an agent acting on a pending-upload hint long after a Stop hook uploaded the
# note; a receipt is small (docs/benchmarks.md) and only retried notes leave one.
RECEIPT_SECONDS = 7 * 86400


def deliver(machine: str | os.PathLike, entry: pending.Entry, data: bytes, *, timeout: float | None = None,
            receipt: bool = False, index: Callable[..., object] | None = None) -> pending.Outcome:
    """Upload a persisted entry to its recorded destination; drop it only on confirmed success.
    A confirmed note goes straight into the cache, `index` (the cache's observer) told.

    With `receipt`, a confirmed upload leaves a receipt (see the module docstring). An entry whose
    destination is unknown (damaged) is never sent: it stays pending with that as the reason.
    """
    if entry.store is None:
        return pending.Outcome(entry, "pending", _unknown_destination(entry))
    purge = _purge_of(entry, data)
    deleted = None
    watched = None  # a note's upload watched (never a record's: _watch), so the next search need not list
    try:
        if purge is not None:  # the note's bytes leave this machine first, whatever the store does
            _forget_here(machine, entry.store, purge, index)
        store = open_known(machine, entry.store, timeout=timeout)  # INV store-identity: never another store
        watched = _watch(machine, entry, store)
        store.put(entry.path, data)
        if purge is not None:
            _after_confirmed(machine, entry, data, index)  # the record holds here even if the delete fails
            deleted = store.delete(note_path(purge.project, purge.note))  # False: the store did not hold it
    except errors.AgentmemError as exc:
        if watched is not None:
            watched.close()
        pending.record_failure(machine, entry, exc)
        return pending.Outcome(entry, "pending", exc, purged=purge.note if purge else None)
    except OSError as exc:  # anything the backend did not classify: keep the note
        if watched is not None:
            watched.close()
        err = errors.Offline(f"upload failed: {exc}")
        pending.record_failure(machine, entry, err)
        return pending.Outcome(entry, "pending", err, purged=purge.note if purge else None)
    if purge is None:
        _after_confirmed(machine, entry, data, index, watched)
    if receipt:
        _write_receipt(machine, entry)
    pending.remove(machine, entry.id)
    return pending.Outcome(entry, "saved", purged=purge.note if purge else None, deleted=deleted)


def _forget_here(machine: str | os.PathLike, store: StoreDescription, purge: records.Record,
                 index: Callable[..., object] | None) -> None:
    """Drop the purged note's bytes from this machine (cache, index, pending copy, view pages). A cache this
    process may not write (a sandbox) keeps them until a refresh that can: it brings the record as new."""
    try:
        forget(machine, store, purge.project, [purge.note], index)
    except errors.NotWritable:
        pass


def _purge_of(entry: pending.Entry, data: bytes) -> records.Record | None:
    """The purge record an entry carries, or None (a note, another record)."""
    if not entry.path.endswith(".purge.json"):
        return None
    record = records.parse(data)
    return record if record is not None and record.kind == "purge" else None


def _unknown_destination(entry: pending.Entry, configured: StoreDescription | None = None) -> InvalidInput:
    where = "this machine's configured store" + (f" ({configured.label()})" if configured else "")
    return InvalidInput(
        f"pending note {entry.id} (project {entry.project}) is intact, but {entry.damaged}, so its destination "
        "store is unknown; nothing was sent",
        hint=NextStep.of(f"to send it to {where}, run `", entry.retry_step(), "`"),
    )


def _watch(machine: str | os.PathLike, entry: pending.Entry, store: Store) -> Watched | None:
    """The store's notes folder watched while this machine uploads a note (a folder store's `watch`), so the
    upload can leave the next search one stat rather than a listing (replica/cache.py add_confirmed)."""
    watch = getattr(store, "watch", None)
    if watch is None or entry.store is None or not entry.path.endswith(".md"):
        return None
    from agentmem.replica import cache

    prefix = entry.path.rpartition("/")[0]
    return watch(prefix, cache.change_token(machine, entry.store, entry.project))


def _after_confirmed(machine: str | os.PathLike, entry: pending.Entry, data: bytes,
                     index: Callable[..., object] | None, watched: Watched | None = None) -> None:
    if entry.store is None:  # never: deliver sends no entry without a destination
        return
    # Put the confirmed note straight into the project cache so this machine's
    # next search finds it without waiting for a refresh.
    from agentmem.replica import cache

    try:
        if entry.path.endswith(".md"):
            cache.add_confirmed(machine, entry.store, entry.project, entry.id, data, index=index, watched=watched)
        else:
            record = records.parse(data)
            if record is not None:
                records.add_cached(cache.project_dir(machine, entry.store, entry.project), record, data)
    except OSError:
        pass  # the cache is derived; the next refresh fills it
    finally:
        if watched is not None:
            watched.close()


def confirmed_already(machine: str | os.PathLike, entry: pending.Entry, data: bytes, *,
                      index: Callable[..., object] | None = None) -> pending.Outcome:
    """An entry its store was found to hold already, these very bytes (an earlier upload whose reply was
    lost; memory/team_writes.py `to_personal` asks): delivered as if confirmed now (cache, receipt), nothing
    sent. INV nothing-lost: the caller read the store's copy and compared it."""
    _after_confirmed(machine, entry, data, index)
    _write_receipt(machine, entry)
    pending.remove(machine, entry.id)
    return pending.Outcome(entry, "saved")


def retry(machine: str | os.PathLike, note_id: str, *, timeout: float | None = None,
          repair_store: StoreDescription | None = None, configured: StoreDescription | None = None,
          index: Callable[..., object] | None = None) -> pending.Outcome:
    """Resend a pending note. A note an earlier retry confirmed is reported saved (from its receipt).

    A damaged entry is sent only with `repair_store` (the user's explicit choice); otherwise it is
    refused, naming `configured` as the store `--repair` would use.
    """
    try:
        entry, data = pending.load(machine, note_id)
    except NotFound:
        done = _read_receipt(machine, note_id)
        if done is None:
            raise
        return done
    if entry.damaged is not None:
        if repair_store is None:
            raise _unknown_destination(entry, configured)
        entry = pending.repair(machine, entry, repair_store)
    return deliver(machine, entry, data, timeout=timeout, receipt=True, index=index)


# -- receipts: what a retry confirmed -------------------------------------------------------------

def _receipt_path(machine: str | os.PathLike, note_id: str) -> str:
    return os.path.join(receipts_dir(machine), f"{check_id(note_id)}.json")


def _write_receipt(machine: str | os.PathLike, entry: pending.Entry) -> None:
    """Best effort: the note is confirmed either way; without a receipt a late retry says not found."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    try:
        write_atomic(_receipt_path(machine, entry.id),
                     json.dumps(entry.to_json() | {"confirmed_at": stamp}, sort_keys=True).encode())
        _prune_receipts(machine)
    except OSError:
        pass


def _read_receipt(machine: str | os.PathLike, note_id: str) -> pending.Outcome | None:
    try:
        data = json.loads(read_bytes(_receipt_path(machine, note_id)))
        entry = pending.Entry.from_json(data)
    except (OSError, ValueError, KeyError, TypeError, InvalidInput):
        return None
    if entry.id != note_id:
        return None
    return pending.Outcome(entry, "saved", already=str(data.get("confirmed_at") or "earlier"))


def _prune_receipts(machine: str | os.PathLike) -> None:
    folder = receipts_dir(machine)
    cutoff = time.time() - RECEIPT_SECONDS
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        try:
            if os.lstat(path).st_mtime < cutoff:
                os.unlink(path)
        except OSError:
            pass


def retry_all(machine: str | os.PathLike, *, budget: float, timeout: float | None = None,
              index: Callable[..., object] | None = None,
              hold: Callable[[pending.Entry], bool] | None = None,
              ) -> tuple[list[pending.Outcome], list[pending.Entry]]:
    """Retry pending entries oldest first until `budget` seconds are spent.

    Returns the attempted outcomes and the entries left untried. Each attempt's
    network timeout is clipped to what remains of the budget. A damaged entry is
    never sent (its destination is unknown): it comes back pending, with the reason.
    An entry `hold` answers True for (one that waits for a person) is not tried, nor returned.
    """
    deadline = time.monotonic() + budget
    outcomes: list[pending.Outcome] = []
    entries = [e for e in pending.list_entries(machine) if hold is None or not hold(e)]
    for i, entry in enumerate(entries):
        if entry.store is None:
            outcomes.append(pending.Outcome(entry, "pending", _unknown_destination(entry)))
            continue
        remaining = deadline - time.monotonic()
        if remaining <= 0.05:
            return outcomes, [e for e in entries[i:] if e.store is not None]
        try:
            _, data = pending.load(machine, entry.id)
        except NotFound:
            continue  # finished by another process meanwhile
        step = remaining if timeout is None else min(timeout, remaining)
        outcomes.append(deliver(machine, entry, data, timeout=step, receipt=True, index=index))
    return outcomes, []
