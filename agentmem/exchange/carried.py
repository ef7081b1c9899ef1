"""The notes' states an export carries and an import applies: retract, pin, unpin and purge records.

An export writes each record of a project, as the store holds it, to `<project>/records/<record file>`
and lists it in the manifest (`records`: ID, kind, note, project, path, SHA-256), so a round trip keeps
what was retracted, pinned, unpinned and purged. An import sends each record under its own ID through
the paths the library's own commands use (`curation.save_record`; a purge finished by `curation.purge`,
which deletes the note from the store and this machine), and is idempotent by record ID. Nothing purged
ever returns: a note whose ID a purge record names is refused (`importing.plan`).
"""

from __future__ import annotations

import os

from agentmem.note import ids, records

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable

    from agentmem.config import Config
    from agentmem.note.records import Record, States
    from agentmem.uploads.pending import Outcome

FOLDER = "records"
TEAM_FOLDER = "@team"  # the team's notes of a project: `@team/<project>/` (a project name starts [a-z0-9])


def folder_of(project: str, scope: str = "personal") -> str:
    """The export's folder of a project's notes (and records) in the store of `scope`."""
    return project if scope == "personal" else f"{TEAM_FOLDER}/{project}"


def relpath(record: Record, scope: str = "personal") -> str:
    """Where an export keeps the record: beside its project's notes (the team's: under `@team/`)."""
    return f"{folder_of(record.project, scope)}/{FOLDER}/{record.file}"


def of_project(machine: str, cfg: Config, project: str) -> list[tuple[Record, bytes]]:
    """The project's records on this machine, oldest first: those the store confirmed (cached) and those
    still pending here, each with its bytes."""
    from agentmem.fsutil import read_bytes
    from agentmem.replica import cache
    from agentmem.uploads import pending

    pdir = cache.project_dir(machine, cfg.store, project)
    found: dict[str, tuple[Record, bytes]] = {}
    for name in records.cached_files(pdir):
        try:
            data = read_bytes(os.path.join(records.records_dir(pdir), name), records.MAX_RECORD_BYTES + 1)
        except OSError:
            continue
        record = records.parse(data, name)
        if record is not None and record.project == project:
            found[record.id] = (record, data)
    for data in pending.project_records(machine, cfg.store, project).values():
        record = records.parse(data)
        if record is not None and record.project == project and record.id not in found:
            found[record.id] = (record, data)
    return [found[k] for k in sorted(found)]


def manifest_entry(record: Record, sha256: str, scope: str = "personal") -> dict:
    return {"id": record.id, "kind": record.kind, "note": record.note, "project": record.project,
            "path": relpath(record, scope), "sha256": sha256} | ({"scope": scope} if scope != "personal" else {})


def held_ids(machine: str, cfg: Config, project: str) -> set[str]:
    """The record IDs the project already has here: cached (the store's) or pending."""
    from agentmem.replica import cache
    from agentmem.uploads import pending

    pdir = cache.project_dir(machine, cfg.store, project)
    out = {m.group(1) for name in records.cached_files(pdir) if (m := ids.RECORD_FILE.match(name))}
    return out | set(pending.project_records(machine, cfg.store, project))


def check_entry(entry: object) -> dict:
    """A manifest's record entry, or ValueError saying what is wrong with it."""
    if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str)
                                              for k in ("id", "kind", "note", "project", "path", "sha256")):
        raise ValueError("a malformed record entry")
    if entry.get("scope", "personal") not in ("personal", "team"):
        raise ValueError("a record entry of an unknown scope")
    if entry["kind"] not in ids.RECORD_KINDS:
        raise ValueError(f"a record of unknown kind {entry['kind'][:20]!r}")
    ids.check_id(entry["id"])
    ids.check_id(entry["note"])
    return entry


def parsed(entry: dict, data: bytes) -> Record | None:
    """The record the entry's file holds, when it is the one the entry names (ID, kind, note, project)."""
    record = records.parse(data, ids.record_file(entry["id"], entry["kind"]))
    if record is None or (record.note, record.project) != (entry["note"], entry["project"]):
        return None
    return record


def already(record: Record, states: States, held: set[str]) -> bool:
    """Whether the store already says what the record says: the record itself, or (retract, purge) an
    earlier one of the same kind for the note."""
    if record.id in held:
        return True
    if record.kind == "retract":
        return record.note in states.retracted
    return record.kind == "purge" and record.note in states.purged


def apply(machine: str, cfg: Config, record: Record, *, timeout: float | None = None,
          settle: Callable[[Outcome], None] | None = None) -> dict:
    """Send one record through the library's own record paths; its outcome as `saved` lists it.
    `settle(outcome)`: told each record's upload outcome first (it may raise: a refused team write)."""
    from agentmem.memory import curation
    from agentmem.uploads import pending

    if record.kind != "purge":
        outcome = curation.save_record(machine, cfg, record, timeout=timeout)
        if settle is not None:
            settle(outcome)
        return outcome.to_json() | {"kind": record.kind, "note": record.note}
    # A purge: the record persisted as pending first (INV nothing-lost), then `purge` finishes it as it
    # finishes any interrupted purge: sends the record, deletes the note from the store and this machine.
    entry = pending.Entry(id=record.id, store=cfg.store, project=record.project, path=record.path(),
                          created=record.created)
    pending.persist(machine, entry, record.render())
    done = curation.purge(machine, cfg, record.project, record.note, timeout=timeout)
    out: dict = {"status": "saved" if done.status == "purged" else "pending", "id": record.id, "kind": "purge",
           "note": record.note, "project": record.project}
    if done.status != "purged":
        out["next"] = done.next
        if done.problem is not None:
            out["reason"] = {"error": done.problem.kind, "message": done.problem.one_line()}
    return out
