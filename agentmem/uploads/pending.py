"""Pending uploads: a note is safe on this machine before any upload is tried.

INV nothing-lost: a note is persisted (bytes, ID and full destination) in the
pending folder, atomically, before its upload starts; the entry is removed only
after the store confirmed the object. Any failure or unknown outcome keeps it.
INV same-bytes-retry: a retry sends the identical bytes to the original
destination (store, project, path) recorded in the entry, whatever the config
says now; the store's append-only put makes a repeat harmless.

Layout: pending/<id>/note.md (the exact bytes) and pending/<id>/entry.json; a record
(a retraction, pin, unpin or purge: note/records.py) waits the same way, its bytes in
pending/<id>/record.json instead of note.md.
An entry appears by renaming a complete temp folder into place, and disappears
by renaming it aside before deleting, so a half-written or half-deleted entry
is never seen as pending.

A damaged or missing entry.json never hides an intact note.md (INV
damaged-entry-recoverable): the entry is rebuilt from the note's own
frontmatter (ID, project), listed, searched and read as pending, but its
destination store is unknown, so nothing sends it until the user chooses one
(`save --retry ID --repair`: this machine's configured store, said so).
A note bound for the team store that the team refuses can be sent to the member's own store instead
(`save --retry ID --personal`, memory/team_writes.py): the same bytes, a new destination (`rebind`).

Delivering an entry (upload, confirm, remove; retries and their receipts in
pending/.confirmed/) is uploads/delivery.py.
"""

from __future__ import annotations

import json
import os
import time

from agentmem import errors
from agentmem.errors import Command, InvalidInput, NextStep, NotFound
from agentmem.fsutil import TMP_PREFIX, read_bytes, write_atomic
from agentmem.note.document import check_id
from agentmem.paths import PENDING_ENTRY_FILE, PENDING_NOTE_FILE, PENDING_RECORD_FILE, pending_dir
from agentmem.store import layout
from agentmem.store.base import StoreDescription, check_object_path

NOTE_FILE = PENDING_NOTE_FILE
RECORD_FILE = PENDING_RECORD_FILE  # the payload of a pending record (its entry's path ends in .json)
ENTRY_FILE = PENDING_ENTRY_FILE


def _rmtree(path: str, ignore_errors: bool = False) -> None:
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
        self.purges: str | None = None  # a purge record's entry: the note it purges (set by `load`)

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
                 already: str | None = None, purged: str | None = None, deleted: bool | None = None):
        self.entry = entry
        self.status = status  # "saved" | "pending"
        self.error = error
        self.already = already  # for a note an earlier retry confirmed: when (receipt time, ISO 8601)
        # For a purge record: the note it purges, and whether the store held it (None: not asked, or an
        # earlier retry finished it). "saved" then means the store no longer holds the note.
        self.purged, self.deleted = purged, deleted

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
        if self.purged is not None:
            out["purges"] = {"note": self.purged, "deleted_from_store": self.deleted}
        if self.status == "pending":
            out["retry"] = self.entry.retry_command()
            if self.error is not None:
                out["reason"] = {"error": self.error.kind, "message": self.error.one_line()}
        return out


def _entry_dir(machine: str | os.PathLike, note_id: str) -> str:
    return os.path.join(pending_dir(machine), check_id(note_id))


def _payload_name(path: str) -> str:
    from agentmem.note.records import is_record_path

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
    if entry.path.endswith(".purge.json"):  # the purge's pending work: listed as such (uploads/delivery.py)
        from agentmem.note.records import parse

        record = parse(data)
        entry.purges = record.note if record is not None and record.kind == "purge" else None
    return entry, data


def _rebuilt(folder: str, note_id: str, data: bytes, problem: str) -> Entry:
    """The entry of an intact note whose entry.json is unusable, from the note's own frontmatter."""
    from agentmem.config import PROJECT_NAME
    from agentmem.note import document, records

    record = records.parse(data)
    if record is not None and record.id == note_id and PROJECT_NAME.match(record.project):
        return Entry(note_id, None, record.project, record.path(), record.created, damaged=problem)
    meta = document.parse(data).meta
    project = meta.get("project")
    if meta.get("id") != note_id or not isinstance(project, str) or not PROJECT_NAME.match(project):
        raise InvalidInput(f"pending entry {folder} is damaged ({problem}) and its note does not name its ID and "
                           "project; it was left untouched")
    created = meta.get("created")
    return Entry(note_id, None, project, document.note_path(project, note_id),
                 created if isinstance(created, str) else "", damaged=problem)


def list_entries(machine: str | os.PathLike) -> list[Entry]:
    """Every pending entry on this machine, oldest first: damaged ones too, rebuilt from their note
    (`Entry.damaged`). Folders with no usable note are left out (see `unreadable`), never deleted."""
    return [entry for _, entry, _ in _scan(machine) if entry is not None]


def project_notes(machine: str | os.PathLike, store: StoreDescription, project: str) -> dict[str, bytes]:
    """The bytes of this machine's pending notes of `project` bound for `store`, by ID, oldest first (one read
    each). A damaged entry (its store unknown) counts for every store: its note is never hidden."""
    return {entry.id: data for _, entry, data in _scan(machine, with_data=True)
            if _bound_for(entry, store, project) and entry.path.endswith(layout.NOTE_SUFFIX)}


def project_records(machine: str | os.PathLike, store: StoreDescription, project: str) -> dict[str, bytes]:
    """The bytes of this machine's pending records of `project` bound for `store` (note/records.py), by
    record ID; a damaged entry's too, as `project_notes`."""
    return {entry.id: data for _, entry, data in _scan(machine, with_data=True)
            if _bound_for(entry, store, project) and not entry.path.endswith(layout.NOTE_SUFFIX)}


def _bound_for(entry: Entry | None, store: StoreDescription, project: str) -> bool:
    """Whether a pending entry goes to `store`'s `project` (the same project of another store is another
    place: the cache and index of each store are its own)."""
    return entry is not None and entry.project == project and (entry.store is None or entry.store == store)


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


def record_failure(machine: str | os.PathLike, entry: Entry, error: errors.AgentmemError) -> None:
    """Count a failed upload in the entry (its last error said by `pending`)."""
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
    return _rebound(machine, entry, store)


def rebind(machine: str | os.PathLike, entry: Entry, store: StoreDescription) -> Entry:
    """Send an intact entry to `store` from now on (`save --retry ID --personal`: a team note the team
    refuses becomes the member's own), its bytes untouched: one atomic rewrite of entry.json, so the entry
    is bound for the old store or the new one, never neither. Its attempts start again."""
    if entry.damaged is not None or entry.store is None:
        raise InvalidInput(f"pending note {entry.id} has no recorded destination to change ({entry.damaged})")
    return _rebound(machine, entry, store)


def _rebound(machine: str | os.PathLike, entry: Entry, store: StoreDescription) -> Entry:
    """The entry bound for `store` from now on, its attempts counted afresh: a new entry.json, written
    atomically beside the untouched note."""
    bound = Entry(entry.id, store, entry.project, entry.path, entry.created)
    write_atomic(os.path.join(_entry_dir(machine, entry.id), ENTRY_FILE), _entry_bytes(bound))
    return bound


def remove(machine: str | os.PathLike, note_id: str) -> None:
    folder = _entry_dir(machine, note_id)
    doomed = os.path.join(os.path.dirname(folder), f"{TMP_PREFIX}del-{note_id}.{os.urandom(4).hex()}")
    try:
        os.rename(folder, doomed)
    except FileNotFoundError:
        return  # another process finished it first
    _rmtree(doomed, ignore_errors=True)
