"""Saving a note: validate, screen for credentials, persist as pending, upload (what `save` and MCP run).

INV no-credentials: every field is screened before anything is written.
INV nothing-lost: the note is in pending/ before its upload starts (`pending.persist`).
"""

from __future__ import annotations

from agentmem import errors
from agentmem.note import document
from agentmem.search import follow
from agentmem.store.timeout import Deadline
from agentmem.uploads import delivery, pending

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Iterable

    from agentmem.config import Config


class Saved:
    """What one save did: the upload outcome, and what `redact` replaced (kind and field)."""

    __slots__ = ("outcome", "redacted")

    def __init__(self, outcome: pending.Outcome, redacted: list[dict]):
        self.outcome, self.redacted = outcome, redacted

    def to_json(self, with_redacted: bool = False) -> dict:
        out = self.outcome.to_json()
        if with_redacted:
            out["redacted"] = self.redacted
        return out


def save(machine: str, cfg: Config, project: str, body: str, *, title: str | None = None, kind: str = "note",
         tags: Iterable[str] = (), sources: Iterable[str] = (), session: str | None = None, corrects: str | None = None,
         review_by: str | None = None, redact: bool = False, timeout: float | None = None,
         agent: str | None = None) -> Saved:
    """Save one note of `project` to the configured store; a failed upload leaves it pending. `agent`: who
    wrote it, when not this machine's configured agent (an imported memory names the tool it came from)."""
    from agentmem.safety import credentials, screening

    agent = agent or cfg.agent
    # Every field that reaches the note or its pending entry; identifiers are refused, never redacted.
    fields, redacted = screening.screen(
        {"body": body, "title": title, "tag": list(tags), "source": list(sources), "session": session,
         "corrects": corrects, "kind": kind, "project": project, "agent": agent, "review_by": review_by},
        redact_found=redact,
        known=credentials.env_secrets(),
        fixed=("corrects", "kind", "project", "agent", "review_by"),
    )
    deadline = Deadline(timeout)  # INV bounded-network: the correction's check and the upload share one budget
    if corrects is not None:
        _check_corrects(machine, cfg, project, corrects, deadline)
    note = document.build(
        body=fields["body"],
        title=fields["title"],
        kind=kind,
        project=project,
        agent=agent,
        sources=fields["source"],
        tags=fields["tag"],
        session=fields["session"],
        corrects=corrects,
        review_by=review_by,
    )
    data = note.render()
    entry = pending.Entry(
        id=note.id,
        store=cfg.store,
        project=project,
        path=document.note_path(project, note.id),
        created=note.created,
    )
    pending.persist(machine, entry, data)  # INV nothing-lost: safe on disk before any upload
    outcome = delivery.deliver(machine, entry, data, timeout=deadline.left(), index=follow.update)
    if isinstance(outcome.error, errors.UnsafeBucket):
        # A bucket that became public: nothing was written to it (put checks first). The save stops as
        # setup does; the note stays pending here, sent by a retry once the bucket is private again.
        from agentmem.store.bucket import private_again

        raise errors.UnsafeBucket(
            f"refusing to save to bucket {cfg.store.location}: it is public, so note {note.id} was not uploaded "
            "and nothing was written to the bucket; the note is kept on this machine (pending)",
            hint=errors.NextStep(f"{private_again(cfg.store.location)}; then run `{{}}`", entry.retry_step()))
    return Saved(outcome, redacted)


def _check_corrects(machine: str, cfg: Config, project: str, corrects: str, deadline: Deadline) -> None:
    """A correction names a note of its project that exists: on this machine (pending, cached) or in the
    store. Refused, before anything is written, when the ID is malformed, purged, another project's, or in
    no project; a store that cannot be asked now leaves the ID as given (the save still waits safely)."""
    from agentmem.memory import locate
    from agentmem.replica import cache
    from agentmem.replica.states import project_states
    from agentmem.store import identity

    document.check_id(corrects)
    if corrects in pending.project_notes(machine, cfg.store, project) or cache.read_cached(machine, cfg.store, project,
                                                                                 corrects) is not None:
        return
    if corrects in project_states(machine, cfg.store, project).purged:
        raise errors.InvalidInput(errors.NextStep.of(errors.Option("corrects", corrects), f": that note of project "
                                                     f"{project} was purged; nothing was written"))
    try:
        store = identity.open_known(machine, cfg.store, timeout=deadline.left())
        if store.info(document.note_path(project, corrects)) is not None:
            return
    except errors.AgentmemError:
        return
    other = locate.project_of(machine, cfg, corrects, but=project, timeout=deadline.left())
    if other is not None:
        raise errors.InvalidInput(errors.NextStep.of(
            errors.Option("corrects", corrects), f": that is a note of project {other}, not {project}; a correction "
            "is saved in its note's project (", errors.Option("project", other), "); nothing was written"))
    raise errors.InvalidInput(errors.NextStep.of(errors.Option("corrects", corrects), f": no note with that ID in "
                                                 f"project {project}, on this machine or in the store; nothing was "
                                                 "written"))
