"""Pending uploads: a note is safe on this machine before any upload is tried.

INV nothing-lost: a note is persisted (bytes, ID and full destination) in the
pending folder, atomically, before its upload starts; the entry is removed only
after the store confirmed the object. Any failure or unknown outcome keeps it.
INV same-bytes-retry: a retry sends the identical bytes to the original
destination (store, project, path) recorded in the entry, whatever the config
says now; the store's append-only put makes a repeat harmless.

Layout: pending/<id>/note.md (the exact bytes) and pending/<id>/entry.json.
An entry appears by renaming a complete temp folder into place, and disappears
by renaming it aside before deleting, so a half-written or half-deleted entry
is never seen as pending.
"""

from __future__ import annotations

import json
import os
import time

from agentmem import errors
from agentmem.errors import InvalidInput, NotFound
from agentmem.fsutil import TMP_PREFIX, read_bytes, write_atomic
from agentmem.memory.notes import check_id
from agentmem.paths import pending_dir
from agentmem.store.base import StoreDescription, check_object_path

NOTE_FILE = "note.md"
ENTRY_FILE = "entry.json"


def _rmtree(path, ignore_errors: bool = False) -> None:
    import shutil  # only when removing: keeps the per-turn import light

    shutil.rmtree(path, ignore_errors=ignore_errors)


class Entry:
    def __init__(self, id: str, store: StoreDescription, project: str, path: str, created: str,
                 attempts: int = 0, last_error: dict | None = None):
        self.id, self.store, self.project, self.path, self.created = id, store, project, path, created
        self.attempts = attempts
        self.last_error = last_error

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "store": self.store.to_dict(),
            "project": self.project,
            "path": self.path,
            "created": self.created,
            "attempts": self.attempts,
            "last_error": self.last_error,
        }

    @classmethod
    def from_json(cls, data: dict) -> Entry:
        return cls(
            id=check_id(data["id"]),
            store=StoreDescription.from_dict(data["store"]),
            project=data["project"],
            path=check_object_path(data["path"]),
            created=data.get("created", ""),
            attempts=int(data.get("attempts", 0)),
            last_error=data.get("last_error"),
        )

    def retry_command(self) -> str:
        return f"agentmem save --retry {self.id}"


class Outcome:
    """What happened to one upload attempt."""

    def __init__(self, entry: Entry, status: str, error: errors.AgentmemError | None = None):
        self.entry = entry
        self.status = status  # "saved" | "pending"
        self.error = error

    def to_json(self) -> dict:
        out = {
            "status": self.status,
            "id": self.entry.id,
            "project": self.entry.project,
            "path": self.entry.path,
            "store": self.entry.store.to_dict(),
        }
        if self.status == "pending":
            out["retry"] = self.entry.retry_command()
            if self.error is not None:
                out["reason"] = {"error": self.error.kind, "message": self.error.one_line()}
        return out


def _entry_dir(machine: str | os.PathLike, note_id: str) -> str:
    return os.path.join(pending_dir(machine), check_id(note_id))


def persist(machine: str | os.PathLike, entry: Entry, data: bytes) -> None:
    """Atomically create pending/<id>/ holding the note bytes and its destination."""
    root = pending_dir(machine)
    os.makedirs(root, exist_ok=True)
    staging = os.path.join(root, f"{TMP_PREFIX}{entry.id}.{os.getpid()}.{os.urandom(4).hex()}")
    os.mkdir(staging)
    try:
        write_atomic(os.path.join(staging, NOTE_FILE), data)
        write_atomic(os.path.join(staging, ENTRY_FILE), _entry_bytes(entry))
        try:
            os.rename(staging, _entry_dir(machine, entry.id))
        except OSError:
            raise InvalidInput(f"a pending note with ID {entry.id} already exists") from None
    finally:
        if os.path.exists(staging):
            _rmtree(staging, ignore_errors=True)


def _entry_bytes(entry: Entry) -> bytes:
    return (json.dumps(entry.to_json(), indent=2, sort_keys=True) + "\n").encode()


def load(machine: str | os.PathLike, note_id: str) -> tuple[Entry, bytes]:
    folder = _entry_dir(machine, note_id)
    try:
        entry = Entry.from_json(json.loads(read_bytes(os.path.join(folder, ENTRY_FILE))))
        data = read_bytes(os.path.join(folder, NOTE_FILE))
    except FileNotFoundError:
        raise NotFound(f"no pending note with ID {note_id} on this machine (see `agentmem pending`)") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise InvalidInput(f"pending entry {folder} is damaged ({exc}); it was left untouched") from None
    return entry, data


def list_entries(machine: str | os.PathLike) -> list[Entry]:
    """Every pending entry on this machine, oldest first. Damaged entries are skipped, never deleted."""
    root = pending_dir(machine)
    try:
        names = sorted(os.listdir(root))
    except FileNotFoundError:
        return []
    out = []
    for name in names:
        if name.startswith("."):
            continue
        try:
            entry, _ = load(machine, name)
        except (errors.AgentmemError, OSError):
            continue
        out.append(entry)
    return out


def count(machine: str | os.PathLike) -> int:
    """Number of pending entries, cheaply (no parsing): used by hooks on every turn."""
    try:
        return sum(1 for n in os.listdir(pending_dir(machine)) if not n.startswith("."))
    except FileNotFoundError:
        return 0


def _record_failure(machine: str | os.PathLike, entry: Entry, error: errors.AgentmemError) -> None:
    entry.attempts += 1
    entry.last_error = {"error": error.kind, "message": error.one_line(), "at": int(time.time())}
    folder = _entry_dir(machine, entry.id)
    if os.path.isdir(folder):
        write_atomic(os.path.join(folder, ENTRY_FILE), _entry_bytes(entry))


def remove(machine: str | os.PathLike, note_id: str) -> None:
    folder = _entry_dir(machine, note_id)
    doomed = os.path.join(os.path.dirname(folder), f"{TMP_PREFIX}del-{note_id}.{os.urandom(4).hex()}")
    try:
        os.rename(folder, doomed)
    except FileNotFoundError:
        return  # another process finished it first
    _rmtree(doomed, ignore_errors=True)


def deliver(machine: str | os.PathLike, entry: Entry, data: bytes, *, timeout: float | None = None) -> Outcome:
    """Upload a persisted entry to its recorded destination; drop it only on confirmed success."""
    from agentmem.store.identity import open_known

    try:
        store = open_known(machine, entry.store, timeout=timeout)  # INV store-identity: never another store
        store.put(entry.path, data)
    except errors.AgentmemError as exc:
        _record_failure(machine, entry, exc)
        return Outcome(entry, "pending", exc)
    except OSError as exc:  # anything the backend did not classify: keep the note
        err = errors.Offline(f"upload failed: {exc}")
        _record_failure(machine, entry, err)
        return Outcome(entry, "pending", err)
    _after_confirmed(machine, entry, data)
    remove(machine, entry.id)
    return Outcome(entry, "saved")


def _after_confirmed(machine: str | os.PathLike, entry: Entry, data: bytes) -> None:
    # Put the confirmed note straight into the project cache so this machine's
    # next search finds it without waiting for a refresh.
    from agentmem.memory import cache

    try:
        cache.add_confirmed(machine, entry.store, entry.project, entry.id, data)
    except OSError:
        pass  # the cache is derived; the next refresh fills it


def retry(machine: str | os.PathLike, note_id: str, *, timeout: float | None = None) -> Outcome:
    entry, data = load(machine, note_id)
    return deliver(machine, entry, data, timeout=timeout)


def retry_all(machine: str | os.PathLike, *, budget: float,
              timeout: float | None = None) -> tuple[list[Outcome], list[Entry]]:
    """Retry pending entries oldest first until `budget` seconds are spent.

    Returns the attempted outcomes and the entries left untried. Each attempt's
    network timeout is clipped to what remains of the budget.
    """
    deadline = time.monotonic() + budget
    outcomes: list[Outcome] = []
    entries = list_entries(machine)
    for i, entry in enumerate(entries):
        remaining = deadline - time.monotonic()
        if remaining <= 0.05:
            return outcomes, entries[i:]
        try:
            _, data = load(machine, entry.id)
        except NotFound:
            continue  # finished by another process meanwhile
        step = remaining if timeout is None else min(timeout, remaining)
        outcomes.append(deliver(machine, entry, data, timeout=step))
    return outcomes, []
