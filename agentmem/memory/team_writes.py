"""A member the team store does not let write: the one refusal they get, and nothing left behind.

Every write into the team store (`save --team`, `promote`, retract/pin/unpin/purge `--team`, `import
--team --apply`; `publish-skill --team` keeps a frozen copy instead) goes through the pending path as any
write does. When the team store refuses it as not
allowed (the Hub's 403 for a member with the read role or a token that may not write it, a folder's
permission denied: `NoAccess`, not this machine's own `NotWritable`), what was kept for the upload is
removed and the member gets one line, the same for every command (`read_only`), in the words setup's
team check uses ("read only: ask an admin of acme for the write role"). Any other failure (offline, the
Hub failing) leaves the write pending for the team store, as every write.

A team note saved while offline is pending before the team could refuse it (INV nothing-lost). When a retry
is then refused (`waits_for_person`: the team refusing this member, or, on a bucket, the Hub's not found,
its answer to whoever may not see a private bucket), the entry stays pending and its answer names both ways
out (`refusal`): the write role from whoever grants it, or `save --retry ID --personal`, which sends the
same bytes to the member's own store instead (`to_personal`). The Stop hook leaves such an entry alone
until a person acts (uploads/delivery.py `retry_all`).
"""

from __future__ import annotations

import os

from agentmem import errors

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Callable

    from agentmem.config import Config
    from agentmem.store.base import StoreDescription
    from agentmem.uploads.pending import Entry, Outcome


def read_only(store: StoreDescription, action: str) -> errors.NoAccess:
    """The one line for a member who may only read the team store: `action` says what was not done
    ("saved", "pinned", ...), so "nothing was saved"."""
    return errors.NoAccess(f"team {store.location} is read only for you: {_grant(store)}; nothing was {action}")


def _grant(store: StoreDescription) -> str:
    """Whom a member asks for the right to write the team store."""
    if store.kind == "bucket":
        return f"ask an admin of {store.location.split('/', 1)[0]} for the write role"
    return "ask whoever manages that folder for write permission on it"


def refused(problem: errors.AgentmemError | None) -> bool:
    """Whether a failed upload is the store refusing this member's writes (not this machine's own)."""
    return isinstance(problem, errors.NoAccess) and not isinstance(problem, errors.NotWritable)


def settle(machine: str, where: Config, outcome: Outcome | None, action: str) -> None:
    """After a write to `where`'s store: when it is the team's and refused this member's write, the write's
    pending entry goes and `read_only` is raised; otherwise nothing (saved, or pending as any write)."""
    if where.scope != "team" or outcome is None or outcome.status != "pending" or not refused(outcome.error):
        return
    from agentmem.uploads import pending

    pending.remove(machine, outcome.entry.id)
    raise read_only(where.store, action)


def waits_for_person(entry: Entry, team: StoreDescription | None) -> bool:
    """Whether a pending entry is bound for the team store `team` and its last attempt was the team
    refusing this member (`refused`: no access, not this machine's own not writable) or, on a bucket, not
    found: retrying it again changes nothing until a person acts."""
    if team is None or entry.store is None or entry.store != team or not entry.last_error:
        return False
    kind = entry.last_error.get("error")
    return kind == errors.NoAccess.kind or (kind == errors.NotFound.kind and team.kind == "bucket")


def movable(entry: Entry, data: bytes) -> bool:
    """Whether `save --retry ID --personal` may send this pending entry to the member's own store: a note
    (a record acts on the team's notes), and not a promotion (its original is the member's own already)."""
    from agentmem.note import document

    return _is_note(entry) and not document.parse(data).meta.get("promoted_from")


def _is_note(entry: Entry) -> bool:
    """Whether a pending entry is a note (else a record: a retraction, pin or purge)."""
    from agentmem.store.layout import NOTE_SUFFIX

    return entry.path.endswith(NOTE_SUFFIX)


def refusal(entry: Entry, team: StoreDescription, *, keep_own: bool = True) -> errors.AgentmemError:
    """The answer for an entry that `waits_for_person`: what is true, and both ways out as next steps (the
    write role, then a retry; or, `keep_own`, the note sent to the member's own store)."""
    what = "note" if _is_note(entry) else "record"
    stays = f"{what} {entry.id} was not sent and stays pending on this machine"
    ways: list[str | errors.NextStep] = [
        errors.NextStep.of(f"{_grant(team)}, then retry it: `", entry.retry_step(), "`")]
    if keep_own:
        ways.append(errors.NextStep.of("or keep it as your own note: `",
                                       errors.Command("save", "--retry", entry.id, "--personal"), "`"))
    if entry.last_error and entry.last_error.get("error") == errors.NotFound.kind:
        return errors.NotFound(f"team bucket {team.location} is not found for this account (the Hub's answer "
                               f"when a private bucket is not yours to see): {stays}", hint=ways)
    return errors.NoAccess(f"team {team.location} is read only for you: {stays}", hint=ways)


def held(machine: str, team: StoreDescription | None, entries: list[Entry]) -> dict[str, errors.AgentmemError]:
    """By entry ID, the answer (`refusal`) for each of `entries` that `waits_for_person`; `--personal` is
    offered for a note it may move (`movable`)."""
    from agentmem.uploads import pending

    out: dict[str, errors.AgentmemError] = {}
    for entry in entries:
        if team is None or not waits_for_person(entry, team):
            continue
        try:
            keep_own = movable(entry, pending.load(machine, entry.id)[1])
        except (errors.AgentmemError, OSError):
            keep_own = False
        out[entry.id] = refusal(entry, team, keep_own=keep_own)
    return out


def held_retry(machine: str, cfg: Config, outcome: Outcome) -> errors.AgentmemError | None:
    """The answer for a retry (CLI or MCP) whose note stays pending because the team refused this member
    (`held`: both ways out), or None: saved, or pending for any other reason."""
    if outcome.status != "pending":
        return None
    return held(machine, team_of(cfg), [outcome.entry]).get(outcome.entry.id)


def team_of(cfg: Config | None) -> StoreDescription | None:
    """The team store `cfg` names, or None: no config, no team, or a `[team]` that cannot be used (then no
    entry is told apart as held: each is retried and listed as on a machine without a team)."""
    if cfg is None:
        return None
    try:
        return cfg.team
    except errors.AgentmemError:
        return None


def machine_team(machine: str | os.PathLike) -> StoreDescription | None:
    """`team_of` this machine's config (one that cannot be read: None)."""
    from agentmem import config

    try:
        return team_of(config.load(machine))
    except (errors.AgentmemError, OSError):
        return None


def to_personal(machine: str, cfg: Config, note_id: str, *, timeout: float | None = None,
                index: Callable[..., object] | None = None) -> Outcome | None:
    """`save --retry ID --personal`: the pending note bound for this machine's team store is bound for the
    member's own store from now on, its bytes untouched (uploads/pending.py `rebind`); None then. Anything
    else is refused in one line, nothing changed.

    An earlier upload may have reached the team store with its reply lost: moving the note then would put one
    ID in both stores. So the team store is asked first, where it can be (a member with the read role reads
    it): holding these very bytes, the note is delivered already (its entry goes; the "saved" outcome is
    returned, nothing sent to the member's own store); holding other bytes under that ID, `Conflict`, nothing
    changed. A store that cannot be asked (offline; a bucket not found for this account) changes nothing of
    this: the note is moved."""
    from agentmem.uploads import delivery, pending

    entry, data = pending.load(machine, note_id)
    team = cfg.team
    unchanged = "; nothing was changed"
    if entry.store is None:
        raise errors.InvalidInput(
            errors.NextStep.of(f"pending note {note_id}'s destination is unknown ({entry.damaged}): ",
                               errors.Option("personal"), " moves only a note bound for the team store"
                               f"{unchanged}"),
            hint=errors.NextStep.of("send it with `", entry.retry_step(), "`"))
    if team is None or entry.store != team:
        bound = "this machine's team store" if team is not None else "a team store (this machine has none)"
        raise errors.InvalidInput(errors.NextStep.of(
            f"pending note {note_id} is bound for {entry.store.label()}, not {bound}: ",
            errors.Option("personal"), f" moves only a team note to your own store{unchanged}"))
    if not _is_note(entry):
        raise errors.InvalidInput(errors.NextStep.of(
            f"pending {note_id} is a record of the team's notes (a retraction, pin or purge), not a note: ",
            errors.Option("personal"), f" moves only a note{unchanged}"))
    if not movable(entry, data):
        raise errors.InvalidInput(errors.NextStep.of(
            f"pending note {note_id} is the team's copy of one of your own notes (a promotion), which is in your "
            "own store already: ", errors.Option("personal"), f" moves only a note of the team's{unchanged}"))
    there = _team_copy(machine, team, entry.path, timeout)
    if there == data:
        return delivery.confirmed_already(machine, entry, data, index=index)
    if there is not None:
        raise errors.Conflict(errors.NextStep.of(
            f"the team's store {team.label()} holds other bytes under note ID {note_id} than the note pending "
            "here, so ", errors.Option("personal"), f" would leave one ID naming two notes{unchanged}"))
    pending.rebind(machine, entry, cfg.store)
    return None


def kept_own(machine: str, cfg: Config, note_id: str) -> dict | None:
    """After `--personal` delivered a note (its pending entry gone): the "saved" answer when this machine's
    cache of the member's own store holds the note, in any configured project, or None. Nothing is sent."""
    from agentmem.note.document import note_path
    from agentmem.replica import cache

    for project in sorted(cfg.project_names()):
        if cache.read_cached(machine, cfg.store, project, note_id) is not None:
            return {"status": "saved", "id": note_id, "project": project, "path": note_path(project, note_id),
                    "store": cfg.store.to_dict(), "scope": "personal", "already_personal": True}
    return None


def _team_copy(machine: str, team: StoreDescription, path: str, timeout: float | None) -> bytes | None:
    """The bytes the team store holds at `path`, or None: it holds none there, or it cannot be asked
    (offline, not found for this account, no read access). Reads, never writes."""
    from agentmem.store import identity

    try:
        return identity.open_known(machine, team, timeout=timeout).get(path)
    except (errors.AgentmemError, OSError):
        return None


def may_write(machine: str, store: StoreDescription, project: str, timeout: float | None) -> bool:
    """False only when the store is known to refuse this member's writes: a bucket the Hub's rights probe
    answers read-only (or no access) for, a folder whose permissions forbid writing. Asked before a write
    that changes this machine first (a purge drops its copy before its record is sent). A store that cannot
    be asked is not refused here: the write stays pending for it as any write."""
    if store.kind == "folder":
        from agentmem.store import layout

        project_dir = os.path.join(store.location, *layout.project_prefix(project).strip("/").split("/"))
        folders = [store.location, project_dir]
        if os.path.isdir(project_dir):
            folders += [os.path.join(project_dir, n) for n in os.listdir(project_dir)]
        return all(os.access(p, os.W_OK) for p in folders if os.path.isdir(p))
    from agentmem.store import identity, rights

    try:
        opened = identity.open_known(machine, store, timeout=timeout)
        answer = rights.probe(opened, machine).answer  # type: ignore[arg-type]
    except errors.AgentmemError:
        return True
    return answer not in (rights.READ_ONLY, rights.NO_ACCESS)
