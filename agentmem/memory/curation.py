"""Keeping memory true without rewriting it: retract, pin, unpin (records) and purge (the one delete).

INV append-only: a retraction, pin or unpin is a new record (note/records.py) saved through the
pending path notes use (persisted before upload, retried with the same bytes: INV nothing-lost);
the note it names is never touched. A purge is the exception, for a note that must not exist (a
leaked credential, personal data): its record goes first, then the note's object is deleted from
the store, and its bytes leave this machine's cache, index and pending folder at once; every other
machine drops them when its next search brings the purge record. INV purged-gone: a purge is
pending work until the store no longer holds the note (uploads/delivery.py); `unfinished_purges` is
what `doctor` reports, each with the command that finishes it.

Library functions return data: the outcome, and any command to run next as an argument list
(`next`), which the front ends render (the CLI as an absolute, quoted command line).
"""

from __future__ import annotations

from agentmem import errors
from agentmem.errors import InvalidInput
from agentmem.note import document, records
from agentmem.replica.states import forget, project_states
from agentmem.search import follow
from agentmem.store.timeout import Deadline
from agentmem.uploads import delivery, pending

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Callable

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

    if isinstance(note_id, str) and not document.ALLOCATED.match(note_id):  # an allocated ID holds no credential
        screening.refuse_argument(note_id, "the note ID", action)
    return document.check_id(note_id)


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
        said = exc.words or errors.NextStep.of(exc.message)
        raise errors.SecretFound(errors.NextStep.of(*(p.replace("refusing to save", f"refusing to {action}")
                                                      if isinstance(p, str) else p for p in said.pieces)),
                                 hint="write the reason without the credential") from None
    return reason


def _existing_note(machine: str, cfg: Config, project: str, note_id: str, timeout: float | None,
                   step: Callable[[str], errors.Command]) -> dict:
    """The note's `read` answer (pending, cache or store); NotFound when the project has no such note,
    naming the project that has it with `step(that project)` (memory/locate.py)."""
    from agentmem.memory import recall

    return recall.read(machine, cfg, project, note_id, timeout=timeout, elsewhere=step)[0]


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
        raise InvalidInput(errors.NextStep("a retraction needs a reason ({}): say why the note is no longer true",
                                           errors.Option("reason", "TEXT")))
    reason = _screen_reason(reason, "retract")
    deadline = Deadline(timeout)  # INV bounded-network: the read's check and the record's upload share one
    _existing_note(machine, cfg, project, note_id, deadline.left(),
                   lambda other: errors.Command("retract", note_id, "--project", other, "--reason", "REASON"))
    states = project_states(machine, cfg.store, project)
    if note_id in states.retracted:
        return RecordOutcome("retract", note_id, project, states.retracted[note_id], None)
    record = records.build("retract", note_id, project, cfg.agent, reason)
    return RecordOutcome("retract", note_id, project, record.summary(), save_record(machine, cfg, record,
                                                                                     timeout=deadline.left()))


def pin(machine: str, cfg: Config, project: str, note_id: str, *, unpin: bool = False,
        timeout: float | None = None) -> RecordOutcome:
    """Pin a note into every session-start reminder of the project (or unpin it); latest record wins."""
    kind = "unpin" if unpin else "pin"
    note_id = _checked_id(note_id, kind)
    deadline = Deadline(timeout)
    _existing_note(machine, cfg, project, note_id, deadline.left(),
                   lambda other: errors.Command(kind, note_id, "--project", other))
    states = project_states(machine, cfg.store, project)
    if not unpin and note_id in states.retracted:
        raise InvalidInput(f"note {note_id} is retracted; a retracted note is not pinned")
    latest = states.pins.get(note_id)
    if (latest is not None and latest["kind"] == kind) or (unpin and latest is None):
        return RecordOutcome(kind, note_id, project, latest or {}, None)
    record = records.build(kind, note_id, project, cfg.agent)
    return RecordOutcome(kind, note_id, project, record.summary(),
                         save_record(machine, cfg, record, timeout=deadline.left()))


# -- purge ------------------------------------------------------------------------------------------

def purge_command(note_id: str, project: str, *, team: bool = False) -> errors.Command:
    """The command that purges (or finishes purging) a note without asking: what a purge left pending,
    an unfinished purge and a purge refused for want of a terminal all name."""
    return errors.Command("purge", note_id, "--project", project, *(["--team"] if team else []), "--yes")


class Purged:
    """What a purge did. `status`: purged (record confirmed, object gone from the store) or pending
    (removed here, but the record or the delete still has to reach the store: run `next` again)."""

    __slots__ = ("note", "project", "record", "status", "deleted", "removed_here", "problem", "next", "others")

    def __init__(self, note: str, project: str, record: dict):
        self.note, self.project, self.record = note, project, record
        self.status = "pending"
        self.deleted: bool | None = None  # True: deleted now; False: the store did not hold it; None: not asked
        self.removed_here: list[str] = []  # cache, index, pending: where this machine held its bytes
        self.problem: errors.AgentmemError | None = None
        self.next: list[str] = list(purge_command(note, project).args)
        self.others: list[dict] = []  # this machine's earlier unfinished purges, finished (or tried) after it

    def to_json(self) -> dict:
        out: dict = {"status": self.status, "note": self.note, "project": self.project, "record": self.record,
                     "deleted_from_store": self.deleted, "removed_here": self.removed_here}
        if self.problem is not None:
            out["reason"] = {"error": self.problem.kind, "message": self.problem.one_line()}
        if self.status == "pending":
            out["next"] = self.next
        if self.others:
            out["other_purges"] = self.others
        return out


def purge(machine: str, cfg: Config, project: str, note_id: str, *, reason: str | None = None,
          timeout: float | None = None) -> Purged:
    """Delete a note that must not exist, everywhere. Running it again finishes an interrupted purge.

    INV purged-gone: the purge is pending work until the store no longer holds the note: its record's
    entry leaves pending/ only then (uploads/delivery.py), whichever path delivers it. A purge that
    finishes also finishes this machine's other unfinished purges, within what is left of the budget."""
    from agentmem.store import identity

    note_id = _checked_id(note_id, "purge")
    reason = _screen_reason(reason, "purge")
    deadline = Deadline(timeout)
    store_desc = cfg.store
    states = project_states(machine, store_desc, project)
    waiting = _waiting_purges(machine, store_desc, project)
    here = _held_here(machine, store_desc, project, note_id)
    data = None  # the note's bytes, read once: for its digest in the purge record
    if note_id not in states.purged and not here:  # read into memory, never cached: it is to be purged
        try:
            data = _stored_bytes(machine, cfg, project, note_id, deadline)
        except errors.NotFound:
            raise _elsewhere(machine, cfg, project, note_id, deadline) from None
        except errors.Unreadable:  # there, but not a note a read takes (over 1 MiB, a FIFO): purged all the same
            pass
    unsent = waiting.get(note_id)  # a purge record still pending here
    summary = states.purged.get(note_id)  # cached, or pending here
    if summary is None:
        digest = _digest_of(data or _local_bytes(machine, cfg, project, note_id))
        record = records.build("purge", note_id, project, cfg.agent, reason, digest=digest)
        summary, unsent = record.summary(), record.id
        entry = pending.Entry(id=record.id, store=store_desc, project=project, path=record.path(),
                              created=record.created)
        pending.persist(machine, entry, record.render())  # INV nothing-lost: the purge survives a crash
    done = Purged(note_id, project, summary)
    done.removed_here = here
    outcome = _deliver_pending(machine, unsent, deadline) if unsent is not None else None
    if outcome is not None:  # the record's delivery forgets, puts, deletes: the whole purge
        if outcome.status != "saved":
            done.problem = outcome.error
            return done
        done.deleted = outcome.deleted
    else:  # the record is in the store already (or another process just delivered it): the delete is left
        forget(machine, store_desc, project, [note_id], follow.update)  # gone from this machine at once
        try:
            store = identity.open_known(machine, store_desc, timeout=deadline.left())
            done.deleted = store.delete(document.note_path(project, note_id))
        except errors.AgentmemError as exc:
            done.problem = exc
            return done
    done.status = "purged"
    done.others = _finish_others(machine, store_desc, note_id, deadline)
    return done


def title_of(machine: str, cfg: Config, project: str, note_id: str, *, timeout: float | None = None) -> str | None:
    """The title of the note a purge would delete, for the question a person is asked first: from this
    machine, else read from the store into memory (never cached), each credential shown as
    `[REDACTED:<kind>]`. None when no copy is left to name (an unfinished purge). NotFound, naming the
    project that holds it, when the project has no such note."""
    from agentmem.replica import redacted_copies

    note_id = _checked_id(note_id, "purge")
    deadline = Deadline(timeout)
    data = _local_bytes(machine, cfg, project, note_id)
    if data is None:
        try:
            data = _stored_bytes(machine, cfg, project, note_id, deadline)
        except errors.NotFound:
            if note_id in project_states(machine, cfg.store, project).purged:
                return None
            raise _elsewhere(machine, cfg, project, note_id, deadline) from None
    return document.parse(redacted_copies.clean(data)[0]).title


def _local_bytes(machine: str, cfg: Config, project: str, note_id: str) -> bytes | None:
    """The note's bytes on this machine (pending, else cached), or None."""
    from agentmem.replica import cache

    return (pending.project_notes(machine, cfg.store, project).get(note_id)
            or cache.read_cached(machine, cfg.store, project, note_id))


def _stored_bytes(machine: str, cfg: Config, project: str, note_id: str, deadline: Deadline) -> bytes:
    """The note's bytes read from the store into memory (never cached); NotFound when it holds none."""
    from agentmem.replica.fetch_plan import MAX_CACHED_OBJECT
    from agentmem.store import identity

    store = identity.open_known(machine, cfg.store, timeout=deadline.left())
    return store.get(document.note_path(project, note_id), MAX_CACHED_OBJECT)


def _digest_of(data: bytes | None) -> str | None:
    """The content digest the purge record keeps of the note's body (INV purged-stays-gone: an import of the
    same memory is refused); None when no copy of the note was read."""
    return records.content_digest(document.parse(data).body) if data is not None else None


def _waiting_purges(machine: str, store: StoreDescription, project: str) -> dict[str, str]:
    """This machine's pending purge records of `project` bound for `store`: note ID -> record ID."""
    return {r.note: r.id for r in map(records.parse, pending.project_records(machine, store, project).values())
            if r is not None and r.kind == "purge"}


def _deliver_pending(machine: str, record_id: str, deadline: Deadline) -> pending.Outcome | None:
    try:
        entry, data = pending.load(machine, record_id)
    except errors.NotFound:  # another process delivered it meanwhile
        return None
    return delivery.deliver(machine, entry, data, timeout=deadline.left(), index=follow.update)


def _finish_others(machine: str, store_desc: StoreDescription, done_note: str, deadline: Deadline) -> list[dict]:
    """Deliver this machine's other pending purges to the same store (each its whole purge): {note, project,
    status[, reason]}. Stops at the first the store does not finish: the rest wait as they were."""
    out: list[dict] = []
    for entry in pending.list_entries(machine):
        if entry.purges is None or entry.purges == done_note or entry.store != store_desc:
            continue
        outcome = _deliver_pending(machine, entry.id, deadline)
        if outcome is None:
            continue
        item: dict = {"note": entry.purges, "project": entry.project, "status": "purged" if outcome.status == "saved"
                else "pending", "record": entry.id}
        if outcome.error is not None:
            item["reason"] = {"error": outcome.error.kind, "message": outcome.error.one_line()}
        out.append(item)
        if outcome.status != "saved":
            break
    return out


def _elsewhere(machine: str, cfg: Config, project: str, note_id: str, deadline: Deadline) -> errors.NotFound:
    from agentmem.memory import locate

    return locate.not_in_project(machine, cfg, project, note_id,
                                 lambda other: errors.Command("purge", note_id, "--project", other),
                                 timeout=deadline.left())


def unfinished_purges(machine: str, cfg: Config, projects: list[str], *, timeout: float | None = None) -> list[dict]:
    """Purges that are not finished (INV purged-gone), for `doctor`: this machine's pending purge records
    ({note, project, record, problem, command}), and purge records in the cache of `projects` whose note the
    store still holds (a purge another machine or tool left half done). Asks the store one `info` per cached
    purge (purges are few), within `timeout`; a store that cannot be asked leaves that part unsaid."""
    from agentmem.replica import cache
    from agentmem.store import identity

    out: list[dict] = []
    waiting: set[tuple[str, str]] = set()
    for entry in pending.list_entries(machine):
        if entry.purges is None:
            continue
        waiting.add((entry.project, entry.purges))
        why = entry.last_error["message"] if entry.last_error else "not delivered yet"
        out.append({"note": entry.purges, "project": entry.project, "record": entry.id, "problem": why,
                    "command": list(entry.retry_step().args)})
    deadline = Deadline(timeout)
    store = None
    for project in projects:
        purged = records.states(cache.project_dir(machine, cfg.store, project)).purged
        for note_id in sorted(n for n in purged if (project, n) not in waiting):
            try:
                store = store or identity.open_known(machine, cfg.store, timeout=deadline.left())
                held = store.info(document.note_path(project, note_id)) is not None
            except errors.AgentmemError:
                return out
            if held:
                out.append({"note": note_id, "project": project, "record": purged[note_id]["record"],
                            "problem": "the store still holds the note",
                            "command": list(purge_command(note_id, project).args)})
    return out


def _held_here(machine: str, store_desc: StoreDescription, project: str, note_id: str) -> list[str]:
    """Where this machine holds the note's bytes: its cache (and so the index), its pending folder, a memory
    view page it wrote."""
    from agentmem.replica import cache

    out = []
    if cache.read_cached(machine, store_desc, project, note_id) is not None:
        out += ["cache", "index"]
    if note_id in pending.project_notes(machine, store_desc, project):
        out.append("pending")
    from agentmem.view import written

    if written.holding(machine, [note_id]):
        out.append("view")
    return out
