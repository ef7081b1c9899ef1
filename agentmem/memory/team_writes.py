"""A member the team store does not let write: the one refusal they get, and nothing left behind.

Every write into the team store (`save --team`, `promote`, retract/pin/unpin/purge `--team`, `import
--team --apply`; `publish-skill --team` keeps a frozen copy instead) goes through the pending path as any
write does. When the team store refuses it as not
allowed (the Hub's 403 for a member with the read role or a token that may not write it, a folder's
permission denied: `NoAccess`, not this machine's own `NotWritable`), what was kept for the upload is
removed and the member gets one line, the same for every command (`read_only`), in the words setup's
team check uses ("read only: ask an admin of acme for the write role"). Any other failure (offline, the
Hub failing) leaves the write pending for the team store, as every write.
"""

from __future__ import annotations

import os

from agentmem import errors

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from agentmem.config import Config
    from agentmem.store.base import StoreDescription
    from agentmem.uploads.pending import Outcome


def read_only(store: StoreDescription, action: str) -> errors.NoAccess:
    """The one line for a member who may only read the team store: `action` says what was not done
    ("saved", "pinned", ...), so "nothing was saved"."""
    if store.kind == "bucket":
        ask = f"ask an admin of {store.location.split('/', 1)[0]} for the write role"
    else:
        ask = "ask whoever manages that folder for write permission on it"
    return errors.NoAccess(f"team {store.location} is read only for you: {ask}; nothing was {action}")


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
