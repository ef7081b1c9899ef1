"""Keeping memory true without rewriting it: retract, pin, unpin (records) and purge (the one delete).

INV append-only: a retraction, pin or unpin is a new record (memory/records.py) saved through the
pending path notes use (persisted before upload, retried with the same bytes: INV nothing-lost);
the note it names is never touched. A purge is the exception, for a note that must not exist (a
leaked credential, personal data): its record goes first, then the note's object is deleted from
the store, and its bytes leave this machine's cache, index and pending folder at once; every other
machine drops them when its next search brings the purge record.

Library functions return data: the outcome, and any command to run next as an argument list
(`next`), which the front ends render (the CLI as an absolute, quoted command line).
"""

from __future__ import annotations

from agentmem import errors
from agentmem.errors import InvalidInput
from agentmem.memory import delivery, notes, pending, records
from agentmem.memory.states import forget, project_states
from agentmem.search import follow

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from agentmem.config import Config
    from agentmem.store.base import StoreDescription


class RecordOutcome:
    """What saving one record did: the upload outcome, or `unchanged` (the state was already so)."""

    __slots__ = ("kind", "note", "project", "record", "outcome")

    def __init__(self, kind: str, note: str, project: str, record: dict, outcome: pending.Outcome | None):
        self.kind, self.note, self.project, self.record, self.outcome = kind, note, project, record, outcome

    @property
    def status(self) -> str:
        return "unchanged" if self.outcome is None else self.outcome.status

    def to_json(self) -> dict:
        out = {"status": self.status, "kind": self.kind, "note": self.note, "project": self.project,
               "record": self.record}
        if self.outcome is not None:
            done = self.outcome.to_json()
            out |= {"path": done["path"], "store": done["store"]}
            out |= {k: done[k] for k in ("retry", "reason") if k in done}
        return out


def _checked_id(note_id: str, action: str) -> str:
    from agentmem.safety import screening

    if isinstance(note_id, str) and not notes.ALLOCATED.match(note_id):  # an allocated ID holds no credential
        screening.refuse_argument(note_id, "the note ID", action)
    return notes.check_id(note_id)


def _screen_reason(reason: str | None, action: str) -> str | None:
    """INV no-credentials: a record's reason is screened like a note's fields (refused, never stored)."""
    if reason is None:
        return None
    from agentmem.safety import credentials, screening

    if isinstance(reason, str):
        try:
            reason.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInput("the reason is not valid UTF-8 text (undecodable bytes)") from None
    try:
        screening.screen({"reason": reason}, known=credentials.env_secrets())
    except errors.SecretFound as exc:
        raise errors.SecretFound(exc.message.replace("refusing to save", f"refusing to {action}"),
                                 hint="write the reason without the credential") from None
    return reason


def _existing_note(machine: str, cfg: Config, project: str, note_id: str, timeout: float | None) -> dict:
    """The note's `read` answer (pending, cache or store); NotFound when the project has no such note."""
    from agentmem.memory import recall

    return recall.read(machine, cfg, project, note_id, timeout=timeout)[0]


def save_record(machine: str, cfg: Config, record: records.Record, *, timeout: float | None = None) -> pending.Outcome:
    """Persist a record as pending, then upload it (INV nothing-lost: on disk before any upload)."""
    data = record.render()
    entry = pending.Entry(id=record.id, store=cfg.store, project=record.project, path=record.path(),
                          created=record.created)
    pending.persist(machine, entry, data)
    return delivery.deliver(machine, entry, data, timeout=timeout, index=follow.update)


def retract(machine: str, cfg: Config, project: str, note_id: str, reason: str | None, *,
            timeout: float | None = None) -> RecordOutcome:
    """Retract a note: hidden from every machine's search from its next search on, still readable, marked."""
    note_id = _checked_id(note_id, "retract")
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidInput("a retraction needs a reason (--reason TEXT): say why the note is no longer true")
    reason = _screen_reason(reason, "retract")
    _existing_note(machine, cfg, project, note_id, timeout)
    states = project_states(machine, cfg.store, project)
    if note_id in states.retracted:
        return RecordOutcome("retract", note_id, project, states.retracted[note_id], None)
    record = records.build("retract", note_id, project, cfg.agent, reason)
    return RecordOutcome("retract", note_id, project, record.summary(), save_record(machine, cfg, record,
                                                                                     timeout=timeout))


def pin(machine: str, cfg: Config, project: str, note_id: str, *, unpin: bool = False,
        timeout: float | None = None) -> RecordOutcome:
    """Pin a note into every session-start reminder of the project (or unpin it); latest record wins."""
    kind = "unpin" if unpin else "pin"
    note_id = _checked_id(note_id, kind)
    _existing_note(machine, cfg, project, note_id, timeout)
    states = project_states(machine, cfg.store, project)
    if not unpin and note_id in states.retracted:
        raise InvalidInput(f"note {note_id} is retracted; a retracted note is not pinned")
    latest = states.pins.get(note_id)
    if (latest is not None and latest["kind"] == kind) or (unpin and latest is None):
        return RecordOutcome(kind, note_id, project, latest or {}, None)
    record = records.build(kind, note_id, project, cfg.agent)
    return RecordOutcome(kind, note_id, project, record.summary(), save_record(machine, cfg, record, timeout=timeout))


# -- purge ------------------------------------------------------------------------------------------

class Purged:
    """What a purge did. `status`: purged (record confirmed, object gone from the store) or pending
    (removed here, but the record or the delete still has to reach the store: run `next` again)."""

    __slots__ = ("note", "project", "record", "status", "deleted", "removed_here", "problem", "next")

    def __init__(self, note: str, project: str, record: dict):
        self.note, self.project, self.record = note, project, record
        self.status = "pending"
        self.deleted: bool | None = None  # True: deleted now; False: the store did not hold it; None: not asked
        self.removed_here: list[str] = []  # cache, index, pending: where this machine held its bytes
        self.problem: errors.AgentmemError | None = None
        self.next: list[str] = ["purge", note, "--project", project, "--yes"]

    def to_json(self) -> dict:
        out = {"status": self.status, "note": self.note, "project": self.project, "record": self.record,
               "deleted_from_store": self.deleted, "removed_here": self.removed_here}
        if self.problem is not None:
            out["reason"] = {"error": self.problem.kind, "message": self.problem.one_line()}
        if self.status == "pending":
            out["next"] = self.next
        return out


def purge(machine: str, cfg: Config, project: str, note_id: str, *, reason: str | None = None,
          timeout: float | None = None) -> Purged:
    """Delete a note that must not exist, everywhere. Running it again finishes an interrupted purge."""
    from agentmem.store import identity

    note_id = _checked_id(note_id, "purge")
    reason = _screen_reason(reason, "purge")
    store_desc = cfg.store
    states = project_states(machine, store_desc, project)
    waiting = {r.note: r for r in map(records.parse, pending.project_records(machine, project).values())
               if r is not None and r.kind == "purge"}
    here = _held_here(machine, store_desc, project, note_id)
    if note_id not in states.purged and not here:  # asked without downloading what is to be purged
        store = identity.open_known(machine, store_desc, timeout=timeout)
        if store.info(notes.note_path(project, note_id)) is None:
            raise errors.NotFound(f"no note {note_id} in project {project}: not in the store, nor on this machine")
    unsent = waiting[note_id].id if note_id in waiting else None  # a purge record still pending here
    summary = states.purged.get(note_id)  # cached, or pending here
    if summary is None:
        record = records.build("purge", note_id, project, cfg.agent, reason)
        summary, unsent = record.summary(), record.id
        entry = pending.Entry(id=record.id, store=store_desc, project=project, path=record.path(),
                              created=record.created)
        pending.persist(machine, entry, record.render())  # INV nothing-lost: the purge survives a crash
    done = Purged(note_id, project, summary)
    done.removed_here = here
    forget(machine, store_desc, project, [note_id], follow.update)  # gone from this machine at once
    if unsent is not None:
        try:
            entry, data = pending.load(machine, unsent)
        except errors.NotFound:  # another process delivered it meanwhile
            pass
        else:
            outcome = delivery.deliver(machine, entry, data, timeout=timeout, index=follow.update)
            if outcome.status != "saved":
                done.problem = outcome.error
                return done
    try:
        store = identity.open_known(machine, store_desc, timeout=timeout)
        done.deleted = store.delete(notes.note_path(project, note_id))
    except errors.AgentmemError as exc:
        done.problem = exc
        return done
    done.status = "purged"
    return done


def _held_here(machine: str, store_desc: StoreDescription, project: str, note_id: str) -> list[str]:
    """Where this machine holds the note's bytes: its cache (and so the index), its pending folder."""
    from agentmem.memory import cache

    out = []
    if cache.read_cached(machine, store_desc, project, note_id) is not None:
        out += ["cache", "index"]
    if note_id in pending.project_notes(machine, project):
        out.append("pending")
    return out
