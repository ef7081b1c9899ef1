"""Pending uploads: a note is safe on this machine before any upload is tried.

INV nothing-lost: a note is persisted (bytes, ID and full destination) in the
pending folder, atomically, before its upload starts; the entry is removed only
after the store confirmed the object. Any failure or unknown outcome keeps it.
INV same-bytes-retry: a retry sends the identical bytes to the original
destination (store, project, path) recorded in the entry, whatever the config
says now; the store's append-only put makes a repeat harmless.

Layout: pending/<id>/note.md (the exact bytes) and pending/<id>/entry.json; a record
(a retraction, pin, unpin or purge: memory/records.py) waits the same way, its bytes in
pending/<id>/record.json instead of note.md.
An entry appears by renaming a complete temp folder into place, and disappears
by renaming it aside before deleting, so a half-written or half-deleted entry
is never seen as pending.

A damaged or missing entry.json never hides an intact note.md (INV
damaged-entry-recoverable): the entry is rebuilt from the note's own
frontmatter (ID, project), listed, searched and read as pending, but its
destination store is unknown, so nothing sends it until the user chooses one
(`save --retry ID --repair`: this machine's configured store, said so).

A retry that confirms a note leaves a receipt in pending/.confirmed/<id>.json
(kept RECEIPT_SECONDS), so a retry that lost the race with it, or came after
a hook uploaded the note, reports the note saved rather than not found.
"""

from __future__ import annotations

import json
import os
import time

from agentmem import errors
from agentmem.errors import Command, InvalidInput, NextStep, NotFound
from agentmem.fsutil import TMP_PREFIX, read_bytes, write_atomic
from agentmem.memory.notes import check_id
from agentmem.paths import pending_dir
from agentmem.store.base import StoreDescription, check_object_path

NOTE_FILE = "note.md"
RECORD_FILE = "record.json"  # the payload of a pending record (its entry's path ends in .json)
ENTRY_FILE = "entry.json"
RECEIPTS = ".confirmed"  # pending/.confirmed/<id>.json: what a retry confirmed, for a retry racing it
# Seconds. 2026-12-01: a week covers an agent acting on a pending-upload hint long after a Stop hook
# uploaded the note; a receipt is about 300 bytes and only retried notes leave one.
RECEIPT_SECONDS = 7 * 86400


def _rmtree(path, ignore_errors: bool = False) -> None:
    import shutil  # only when removing: keeps the per-turn import light

    shutil.rmtree(path, ignore_errors=ignore_errors)


class Entry:
    """A pending note's destination. `store` is None, and `damaged` says why, for an entry rebuilt
    from the note itself because entry.json was damaged or missing: its store is unknown."""

    def __init__(self, id: str, store: StoreDescription | None, project: str, path: str, created: str,
                 attempts: int = 0, last_error: dict | None = None, damaged: str | None = None):
        self.id, self.store, self.project, self.path, self.created = id, store, project, path, created
        self.attempts = attempts
        self.last_error = last_error
        self.damaged = damaged

    def to_json(self) -> dict:
        out = {
            "id": self.id,
            "store": self.store.to_dict() if self.store is not None else None,
            "project": self.project,
            "path": self.path,
            "created": self.created,
            "attempts": self.attempts,
            "last_error": self.last_error,
        }
        if self.damaged:
            out["damaged"] = self.damaged
        return out

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

    def retry_step(self) -> Command:
        """The command that retries this note; a damaged entry's says `--repair`: its destination is
        not guessed."""
        return Command("save", "--retry", self.id, *(["--repair"] if self.damaged else []))

    def retry_command(self) -> str:
        """The retry command line, naming the helper by its absolute path (`agentmem` is not on PATH)."""
        return self.retry_step().line()


class Outcome:
    """What happened to one upload attempt."""

    def __init__(self, entry: Entry, status: str, error: errors.AgentmemError | None = None,
                 already: str | None = None):
        self.entry = entry
        self.status = status  # "saved" | "pending"
        self.error = error
        self.already = already  # for a note an earlier retry confirmed: when (receipt time, ISO 8601)

    def to_json(self) -> dict:
        out: dict = {
            "status": self.status,
            "id": self.entry.id,
            "project": self.entry.project,
            "path": self.entry.path,
            "store": self.entry.store.to_dict() if self.entry.store is not None else None,
        }
        if self.already:
            out["already_confirmed"] = True
            out["confirmed_at"] = self.already
        if self.status == "pending":
            out["retry"] = self.entry.retry_command()
            if self.error is not None:
                out["reason"] = {"error": self.error.kind, "message": self.error.one_line()}
        return out


def _entry_dir(machine: str | os.PathLike, note_id: str) -> str:
    return os.path.join(pending_dir(machine), check_id(note_id))


def _payload_name(path: str) -> str:
    from agentmem.memory.records import is_record_path

    return RECORD_FILE if is_record_path(path) else NOTE_FILE


def persist(machine: str | os.PathLike, entry: Entry, data: bytes) -> None:
    """Atomically create pending/<id>/ holding the note (or record) bytes and its destination."""
    root = pending_dir(machine)
    os.makedirs(root, exist_ok=True)
    staging = os.path.join(root, f"{TMP_PREFIX}{entry.id}.{os.getpid()}.{os.urandom(4).hex()}")
    os.mkdir(staging)
    try:
        write_atomic(os.path.join(staging, _payload_name(entry.path)), data)
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


def _not_pending(note_id: str) -> NotFound:
    return NotFound(f"no pending note with ID {note_id} on this machine", hint=NextStep("see `{}`", Command("pending")))


def load(machine: str | os.PathLike, note_id: str) -> tuple[Entry, bytes]:
    """The pending entry and its note's bytes. A damaged or missing entry.json gives an entry rebuilt
    from the note (`damaged` set, `store` None); a folder whose note is unusable raises InvalidInput."""
    folder = _entry_dir(machine, note_id)
    try:
        try:
            data = read_bytes(os.path.join(folder, NOTE_FILE))
        except FileNotFoundError:
            data = read_bytes(os.path.join(folder, RECORD_FILE))
    except FileNotFoundError:
        if not os.path.isdir(folder):  # never pending here, or finished (renamed away whole)
            raise _not_pending(note_id) from None
        raise InvalidInput(f"pending folder {folder} has no {NOTE_FILE}: there is no note to send; "
                           "it was left untouched") from None
    try:
        entry = Entry.from_json(json.loads(read_bytes(os.path.join(folder, ENTRY_FILE))))
        if entry.id != note_id:
            raise ValueError(f"it names the ID {entry.id}")
    except FileNotFoundError:
        if not os.path.isdir(folder):  # finished between the two reads
            raise _not_pending(note_id) from None
        entry = _rebuilt(folder, note_id, data, f"{ENTRY_FILE} is missing")
    except (ValueError, KeyError, TypeError, AttributeError, InvalidInput) as exc:
        entry = _rebuilt(folder, note_id, data, f"{ENTRY_FILE} is damaged ({exc})")
    return entry, data


def _rebuilt(folder: str, note_id: str, data: bytes, problem: str) -> Entry:
    """The entry of an intact note whose entry.json is unusable, from the note's own frontmatter."""
    from agentmem.config import PROJECT_NAME
    from agentmem.memory import notes, records

    record = records.parse(data)
    if record is not None and record.id == note_id and PROJECT_NAME.match(record.project):
        return Entry(note_id, None, record.project, record.path(), record.created, damaged=problem)
    meta = notes.parse(data).meta
    project = meta.get("project")
    if meta.get("id") != note_id or not isinstance(project, str) or not PROJECT_NAME.match(project):
        raise InvalidInput(f"pending entry {folder} is damaged ({problem}) and its note does not name its ID and "
                           "project; it was left untouched")
    created = meta.get("created")
    return Entry(note_id, None, project, notes.note_path(project, note_id),
                 created if isinstance(created, str) else "", damaged=problem)


def list_entries(machine: str | os.PathLike) -> list[Entry]:
    """Every pending entry on this machine, oldest first: damaged ones too, rebuilt from their note
    (`Entry.damaged`). Folders with no usable note are left out (see `unreadable`), never deleted."""
    return [entry for _, entry, _ in _scan(machine) if entry is not None]


def project_notes(machine: str | os.PathLike, project: str) -> dict[str, bytes]:
    """The bytes of this machine's pending notes of `project`, by ID, oldest first (one read each)."""
    return {entry.id: data for _, entry, data in _scan(machine, with_data=True)
            if entry is not None and entry.project == project and entry.path.endswith(".md")}


def project_records(machine: str | os.PathLike, project: str) -> dict[str, bytes]:
    """The bytes of this machine's pending records of `project` (memory/records.py), by record ID."""
    return {entry.id: data for _, entry, data in _scan(machine, with_data=True)
            if entry is not None and entry.project == project and not entry.path.endswith(".md")}


def unreadable(machine: str | os.PathLike) -> list[dict]:
    """Pending folders that hold no usable note: {"id": folder name, "problem": one line}."""
    return [{"id": name, "problem": problem} for name, entry, problem in _scan(machine) if entry is None]


def _scan(machine: str | os.PathLike, *, with_data: bool = False) -> list:
    """(folder name, entry, "") or (folder name, None, problem) for every pending folder, oldest first;
    `with_data`: the note's bytes in place of "" for a usable entry."""
    root = pending_dir(machine)
    try:
        names = sorted(os.listdir(root))
    except FileNotFoundError:
        return []
    out: list = []
    for name in names:
        if name.startswith("."):
            continue
        try:
            entry, data = load(machine, name)
        except errors.NotFound:
            continue  # finished meanwhile
        except errors.AgentmemError as exc:
            out.append((name, None, exc.one_line()))
        except OSError as exc:
            out.append((name, None, f"{exc.strerror or exc}: {exc.filename or name}"))
        else:
            out.append((name, entry, data if with_data else ""))
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
    if os.path.isdir(folder) and entry.store is not None:
        write_atomic(os.path.join(folder, ENTRY_FILE), _entry_bytes(entry))


def repair(machine: str | os.PathLike, entry: Entry, store: StoreDescription) -> Entry:
    """Give a damaged entry the destination the user chose (`store`), recorded in a fresh entry.json.
    An intact entry is returned as it is: its recorded destination always wins."""
    if entry.damaged is None:
        return entry
    fixed = Entry(entry.id, store, entry.project, entry.path, entry.created)
    write_atomic(os.path.join(_entry_dir(machine, entry.id), ENTRY_FILE), _entry_bytes(fixed))
    return fixed


def remove(machine: str | os.PathLike, note_id: str) -> None:
    folder = _entry_dir(machine, note_id)
    doomed = os.path.join(os.path.dirname(folder), f"{TMP_PREFIX}del-{note_id}.{os.urandom(4).hex()}")
    try:
        os.rename(folder, doomed)
    except FileNotFoundError:
        return  # another process finished it first
    _rmtree(doomed, ignore_errors=True)


def deliver(machine: str | os.PathLike, entry: Entry, data: bytes, *, timeout: float | None = None,
            receipt: bool = False) -> Outcome:
    """Upload a persisted entry to its recorded destination; drop it only on confirmed success.

    With `receipt`, a confirmed upload leaves a receipt (see the module docstring). An entry whose
    destination is unknown (damaged) is never sent: it stays pending with that as the reason.
    """
    from agentmem.store.identity import open_known

    if entry.store is None:
        return Outcome(entry, "pending", _unknown_destination(entry))
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
    if receipt:
        _write_receipt(machine, entry)
    remove(machine, entry.id)
    return Outcome(entry, "saved")


def _unknown_destination(entry: Entry, configured: StoreDescription | None = None) -> InvalidInput:
    where = "this machine's configured store" + (f" ({configured.label()})" if configured else "")
    return InvalidInput(
        f"pending note {entry.id} (project {entry.project}) is intact, but {entry.damaged}, so its destination "
        "store is unknown; nothing was sent",
        hint=f"to send it to {where}, run `{entry.retry_command()}`",
    )


def _after_confirmed(machine: str | os.PathLike, entry: Entry, data: bytes) -> None:
    if entry.store is None:  # never: deliver sends no entry without a destination
        return
    # Put the confirmed note straight into the project cache so this machine's
    # next search finds it without waiting for a refresh.
    from agentmem.memory import cache

    try:
        if entry.path.endswith(".md"):
            cache.add_confirmed(machine, entry.store, entry.project, entry.id, data)
        else:
            from agentmem.memory import records

            records.add_confirmed(machine, entry.store, entry.project, data)
    except OSError:
        pass  # the cache is derived; the next refresh fills it


def retry(machine: str | os.PathLike, note_id: str, *, timeout: float | None = None,
          repair_store: StoreDescription | None = None, configured: StoreDescription | None = None) -> Outcome:
    """Resend a pending note. A note an earlier retry confirmed is reported saved (from its receipt).

    A damaged entry is sent only with `repair_store` (the user's explicit choice); otherwise it is
    refused, naming `configured` as the store `--repair` would use.
    """
    try:
        entry, data = load(machine, note_id)
    except NotFound:
        done = _read_receipt(machine, note_id)
        if done is None:
            raise
        return done
    if entry.damaged is not None:
        if repair_store is None:
            raise _unknown_destination(entry, configured)
        entry = repair(machine, entry, repair_store)
    return deliver(machine, entry, data, timeout=timeout, receipt=True)


# -- receipts: what a retry confirmed -------------------------------------------------------------

def _receipt_path(machine: str | os.PathLike, note_id: str) -> str:
    return os.path.join(pending_dir(machine), RECEIPTS, f"{check_id(note_id)}.json")


def _write_receipt(machine: str | os.PathLike, entry: Entry) -> None:
    """Best effort: the note is confirmed either way; without a receipt a late retry says not found."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    try:
        write_atomic(_receipt_path(machine, entry.id),
                     json.dumps(entry.to_json() | {"confirmed_at": stamp}, sort_keys=True).encode())
        _prune_receipts(machine)
    except OSError:
        pass


def _read_receipt(machine: str | os.PathLike, note_id: str) -> Outcome | None:
    try:
        data = json.loads(read_bytes(_receipt_path(machine, note_id)))
        entry = Entry.from_json(data)
    except (OSError, ValueError, KeyError, TypeError, InvalidInput):
        return None
    if entry.id != note_id:
        return None
    return Outcome(entry, "saved", already=str(data.get("confirmed_at") or "earlier"))


def _prune_receipts(machine: str | os.PathLike) -> None:
    folder = os.path.join(pending_dir(machine), RECEIPTS)
    cutoff = time.time() - RECEIPT_SECONDS
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        try:
            if os.lstat(path).st_mtime < cutoff:
                os.unlink(path)
        except OSError:
            pass


def retry_all(machine: str | os.PathLike, *, budget: float,
              timeout: float | None = None) -> tuple[list[Outcome], list[Entry]]:
    """Retry pending entries oldest first until `budget` seconds are spent.

    Returns the attempted outcomes and the entries left untried. Each attempt's
    network timeout is clipped to what remains of the budget. A damaged entry is
    never sent (its destination is unknown): it comes back pending, with the reason.
    """
    deadline = time.monotonic() + budget
    outcomes: list[Outcome] = []
    entries = list_entries(machine)
    for i, entry in enumerate(entries):
        if entry.store is None:
            outcomes.append(Outcome(entry, "pending", _unknown_destination(entry)))
            continue
        remaining = deadline - time.monotonic()
        if remaining <= 0.05:
            return outcomes, [e for e in entries[i:] if e.store is not None]
        try:
            _, data = load(machine, entry.id)
        except NotFound:
            continue  # finished by another process meanwhile
        step = remaining if timeout is None else min(timeout, remaining)
        outcomes.append(deliver(machine, entry, data, timeout=step, receipt=True))
    return outcomes, []
