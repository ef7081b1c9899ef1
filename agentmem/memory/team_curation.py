"""Retract, pin, unpin, purge and review in either of a member's stores: their own, or the team's.

Each runs the library's own call (`memory/curation.py`, `memory/review.py`) on a config scoped to the
store it acts on (`cfg.scoped("team")`), so a record reaches the team store through the same pending
path as any record, and every member's next search takes it as every record is taken today.

Which store: the team's when the caller says so (`--team`, MCP `scope`); without it, the
member's own, unless this machine holds the note only in the team's store (its cache, or a note pending
for it) and not in the member's own: then the team's, said in the answer (`scope`), so an agent acting on
an ID a search gave need not know where the note lives. A machine without `[team]` acts exactly as before.

A member the team store refuses is refused in the one line every team write gives, with nothing left
behind (memory/team_writes.py). A purge asks first (the Hub's rights probe, the folder's permissions),
since a purge drops this machine's copy before its record is sent. Offline, a record stays pending for
the team store as any record does.
"""

from __future__ import annotations

from agentmem import errors

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from agentmem.config import Config
    from agentmem.memory.curation import Purged, RecordOutcome
    from agentmem.store.base import StoreDescription


def target(machine: str, cfg: Config, project: str, note_id: str, *, scope: str | None = None) -> Config:
    """The config whose store an action on `note_id` acts on: `scope` "team" or "personal" names it; None
    chooses (see the module's docstring)."""
    from agentmem.note import ids

    if scope == "team":
        return cfg.scoped("team")
    if scope not in (None, "personal"):
        raise errors.InvalidInput(errors.NextStep.of(errors.Option("scope"), " must be personal or team"))
    if scope == "personal" or cfg.team is None or not isinstance(note_id, str) or not ids.ID.match(note_id):
        return cfg  # a malformed ID is refused by the call itself, as before
    if held(machine, cfg.store, project, note_id):
        return cfg
    shared = cfg.scoped("team")
    return shared if held(machine, shared.store, project, note_id) else cfg


def held(machine: str, store: StoreDescription, project: str, note_id: str) -> bool:
    """Whether this machine knows `note_id` in `store`: cached, pending for it, or named by its records."""
    from agentmem.replica import cache
    from agentmem.replica.states import project_states
    from agentmem.uploads import pending

    if cache.read_cached(machine, store, project, note_id) is not None:
        return True
    if note_id in pending.project_notes(machine, store, project):
        return True
    states = project_states(machine, store, project)
    return note_id in states.purged or note_id in states.retracted or note_id in states.pins


def _elsewhere(machine: str, cfg: Config, project: str, note_id: str, scope: str | None,
               exc: errors.NotFound) -> errors.AgentmemError:
    """`exc`, unless `scope` named one of the member's stores and this machine holds the note in the other:
    then that, said as it is (memory/scopes.py `not_in_scope`)."""
    from agentmem.errors import NextStep, Option
    from agentmem.memory import scopes

    other = None if exc.located else scopes.other_store(machine, cfg, project, note_id, scope)
    if other is None:
        return exc
    hint = NextStep.of("without ", Option("team"), " the command acts on your own store") if other == "personal" \
        else NextStep.of("with ", Option("scope", "team"), " it acts on the team's store")
    return scopes.not_in_scope(note_id, project, "team" if other == "personal" else "personal", other, hint)


def scope_of(cfg: Config, where: Config) -> dict:
    """What an answer says of the store it acted on, with a team on this machine: {"scope"}; else nothing."""
    return {"scope": where.scope} if cfg.team is not None else {}


def _record(machine: str, where: Config, done: RecordOutcome, action: str) -> RecordOutcome:
    """`done`, unless the team store refused the record: then nothing is kept (memory/team_writes.py)."""
    from agentmem.memory import team_writes

    team_writes.settle(machine, where, done.outcome, action)
    return done


def retract(machine: str, cfg: Config, project: str, note_id: str, reason: str | None, *, scope: str | None = None,
            timeout: float | None = None) -> tuple[RecordOutcome, Config]:
    """`curation.retract` in the store `target` chooses; (the outcome, the config it acted with)."""
    from agentmem.memory import curation

    where = target(machine, cfg, project, note_id, scope=scope)
    try:
        done = curation.retract(machine, where, project, note_id, reason, timeout=timeout)
    except errors.NotFound as exc:
        raise _elsewhere(machine, cfg, project, note_id, scope, exc) from None
    return _record(machine, where, done, "retracted"), where


def pin(machine: str, cfg: Config, project: str, note_id: str, *, unpin: bool = False, scope: str | None = None,
        timeout: float | None = None) -> tuple[RecordOutcome, Config]:
    """`curation.pin` (or unpin) in the store `target` chooses; (the outcome, the config it acted with)."""
    from agentmem.memory import curation

    where = target(machine, cfg, project, note_id, scope=scope)
    try:
        done = curation.pin(machine, where, project, note_id, unpin=unpin, timeout=timeout)
    except errors.NotFound as exc:
        raise _elsewhere(machine, cfg, project, note_id, scope, exc) from None
    return _record(machine, where, done, "unpinned" if unpin else "pinned"), where


def purge(machine: str, cfg: Config, project: str, note_id: str, *, reason: str | None = None, scope: str | None = None,
          timeout: float | None = None) -> tuple[Purged, Config]:
    """`curation.purge` in the store `target` chooses, after making sure a team store lets this member
    write (a purge drops this machine's copy first); (what it did, the config it acted with)."""
    from agentmem.memory import curation, team_writes

    where = target(machine, cfg, project, note_id, scope=scope)
    if where.scope == "team" and not team_writes.may_write(machine, where.store, project, timeout):
        raise team_writes.read_only(where.store, "purged")
    try:
        done = curation.purge(machine, where, project, note_id, reason=reason, timeout=timeout)
    except errors.NotFound as exc:
        raise _elsewhere(machine, cfg, project, note_id, scope, exc) from None
    if where.scope == "team":
        done.next = list(curation.purge_command(note_id, project, team=True).args)
    return done, where


def review(machine: str, cfg: Config, project: str, *, scope: str | None = None,
           timeout: float | None = None) -> dict:
    """The review queue: of the store `scope` names ("team", "personal"); None: of the member's own store
    and, with a team on this machine, the team's too. With a team each item carries `scope`, and a team
    item's retract, pin, unpin and purge commands carry `--team`."""
    from agentmem.memory import review as queue

    if scope == "team":
        return _scoped_queue(queue.queue(machine, cfg.scoped("team"), project, timeout=timeout), "team")
    if scope not in (None, "personal"):
        raise errors.InvalidInput(errors.NextStep.of(errors.Option("scope"), " must be personal or team"))
    own = queue.queue(machine, cfg, project, timeout=timeout)
    if cfg.team is None:
        return own
    if scope == "personal":
        return _scoped_queue(own, "personal")
    shared = _scoped_queue(queue.queue(machine, cfg.scoped("team"), project, timeout=timeout), "team")
    own = _scoped_queue(own, "personal")
    merged = dict(own)
    merged["items"] = own["items"] + shared["items"]
    merged["notes"] = own["notes"] + shared["notes"]
    merged["left_out"] = {k: own["left_out"].get(k, 0) + shared["left_out"].get(k, 0)
                          for k in set(own["left_out"]) | set(shared["left_out"])}
    for key in set(own) | set(shared):
        if isinstance(own.get(key), bool) or isinstance(shared.get(key), bool):
            merged[key] = bool(own.get(key)) or bool(shared.get(key))
    return merged


def _scoped_queue(out: dict, scope: str) -> dict:
    """Each item of a queue marked with its scope; in the team's, each command with `--team`."""
    for item in out.get("items", []):
        item["scope"] = scope
        if scope == "team":
            for command in item.get("commands", []):
                argv = command.get("argv")
                if isinstance(argv, list) and argv and argv[0] in ("retract", "pin", "unpin", "purge"):
                    command["argv"] = [*argv, "--team"]
    return out
