"""What this member may do in the team store (`[team]`), found without writing a note into it.

Setup's "team" step and doctor's "team" check both ask `check(machine, cfg)`: the team store is
opened under the same identity rules as the member's own (INV store-identity: a store that is
not there is never taken for an empty one; a store this machine knew is never replaced by
another one at its location unless setup's `--new-store` says so), one project's prefix is
listed to prove the member reads it, and the answer says whether they may also write:

- a bucket: the Hub's answer through the rights probe (`store/rights.py`: whoami and one read),
  so the Hub's roles decide and nothing is written to find out;
- a folder: the folder's permissions for this account (`os.access`), no file written.

Nothing here creates a team bucket or folder: an admin of the organisation (or whoever shares
the folder) makes it. The one write setup may make is a missing identity marker in a team folder
it can write (`mark`), as setup does for the member's own folder store; never a note.

A team problem is the team's: setup still completes the member's personal store, and its
verdict stands (`machine/setup_report.py` says so).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from agentmem import errors
from agentmem.errors import Command
from agentmem.status import FAILED, OK, WARNING, Status
from agentmem.store.rights import NO_ACCESS, NOT_FOUND, READ_ONLY, READ_WRITE

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from agentmem.config import Config
    from agentmem.machine.setup_report import SetupReport
    from agentmem.store.base import Store, StoreDescription
    from agentmem.store.bucket import BucketStore

UNREACHABLE = "unreachable"  # offline, not authenticated, the Hub failing, another store there: see `detail`


@dataclass(frozen=True)
class TeamAccess:
    """The answer for the team store: `access` (one of the words above), the report's `status`, the
    one `line` a person reads ("team acme/team-memory: read only: ask ..."), and what to do about it
    (`fix`, words; `command`, a helper command) when something is wrong. `notes`: how many objects the
    listed project holds there (None: not listed); `marked`: setup gave the folder its marker."""

    store: StoreDescription
    access: str
    status: Status
    line: str
    fix: str | None = None  # what to do, in words
    command: Command | None = None  # and the helper command that does it, if one does
    project: str | None = None
    notes: int | None = None
    user: str | None = None
    marked: bool = False

    def to_json(self) -> dict:
        return {"store": self.store.to_dict(), "access": self.access, "status": self.status.value,
                "detail": self.line, "fix": self.fix,
                "command": list(self.command.args) if self.command else None,
                "project": self.project, "notes": self.notes, "user": self.user}


def check(machine: str | os.PathLike, cfg: Config, *, timeout: float | None = None, mark: bool = False,
          new_store: bool = False) -> TeamAccess | None:
    """The team store's reachability and this member's rights in it; None without `[team]`.

    `mark`: give an unmarked team folder this member can write its identity marker (setup);
    `new_store`: accept whatever store is at the team's location now (setup's `--new-store`).
    Never raises for the team store's own failures: they are the answer."""
    desc = cfg.team
    if desc is None:
        return None
    projects = list(cfg.projects.values())
    project = projects[0] if projects else None
    try:
        if desc.kind == "bucket":
            return _bucket(str(machine), desc, project, timeout, new_store)
        return _folder(str(machine), desc, project, timeout, mark, new_store)
    except errors.AgentmemError as exc:
        return _failure(desc, exc, project)


def _known(machine: str, desc: StoreDescription, new_store: bool) -> str | None:
    from agentmem.store import identity

    return None if new_store else identity.recorded(machine, desc)


def _accept(machine: str, desc: StoreDescription, found: str | None) -> None:
    """Record the team store's identity (INV store-identity); when it is another one than recorded
    (`--new-store`), what the cache knew of the old one's changes goes."""
    from agentmem.store import identity

    if found is None:
        return
    if identity.recorded(machine, desc) != found:
        from agentmem.memory import sync

        sync.forget_changes(machine, desc)
    identity.record(machine, desc, found)


def _listed(store: Store | BucketStore, project: str | None) -> int | None:
    """Read the team store: list the project's prefix (a failure raises as what it is)."""
    if project is None:
        return None
    from agentmem.store import layout

    return len(store.list(layout.project_prefix(project)))


def _held(notes: int | None, project: str | None) -> str:
    return "" if notes is None else f" ({notes} object(s) of project {project} there)"


# -- a bucket: the Hub's rights ---------------------------------------------------------------------


def _bucket(machine: str, desc: StoreDescription, project: str | None, timeout: float | None,
            new_store: bool) -> TeamAccess:
    from agentmem.store import rights
    from agentmem.store.bucket import BucketStore

    bucket = desc.location
    org = bucket.split("/")[0]
    store = BucketStore(bucket, timeout=timeout, identity=_known(machine, desc, new_store))
    found = rights.probe(store, machine)  # whoami and one read; records the user's name (author stamps)
    who = found.user
    if found.answer == rights.NOT_FOUND:
        if found.role is None:
            return TeamAccess(desc, NOT_FOUND, FAILED, f"team {bucket}: not found: it does not exist or you "
                              f"({who}) are not a member of {org}",
                              f"ask an admin of {org} to add {who} to the organization (or check the team's "
                              "bucket ID)", project=project, user=who)
        return TeamAccess(desc, NOT_FOUND, FAILED, f"team {bucket}: not found: {org} has no bucket of that name",
                          f"ask an admin of {org} to create the private bucket {bucket} (or check the team's "
                          "bucket ID)", project=project, user=who)
    if found.answer == rights.NO_ACCESS:
        if (found.token or "").startswith("fine-grained"):
            return TeamAccess(desc, NO_ACCESS, FAILED, f"team {bucket}: no access: this machine's fine-grained "
                              f"token has no permission on it", f"give the token read access to {bucket} (write "
                              "to save to it) on the Hub's token settings", project=project, user=who)
        return TeamAccess(desc, NO_ACCESS, FAILED, f"team {bucket}: no access: ask an admin of {org} to add "
                          f"you ({who}) to the organization", f"ask an admin of {org} for the read or write role",
                          project=project, user=who)
    store.verify()  # the bucket this machine knew (INV store-identity), and private
    notes = _listed(store, project)
    _accept(machine, desc, store.identity)
    if found.answer == rights.READ_ONLY:
        if found.role is None or found.role not in ("owner", "write", "admin", "member"):
            words = f"ask an admin of {org} for the write role to save to it"
        else:
            words = (f"this machine's token may not write it; log in with a token that may write {bucket} "
                     "to save to it")
        return TeamAccess(desc, READ_ONLY, WARNING, f"team {bucket}: read only: {words}", words,
                          project=project, notes=notes, user=who)
    return TeamAccess(desc, READ_WRITE, OK, f"team {bucket}: read and write{_held(notes, project)}",
                      project=project, notes=notes, user=who)


# -- a folder: the file system's permissions --------------------------------------------------------


def _owner(path: str) -> str:
    """Who owns `path`, as words for "ask ... for access"."""
    try:
        import pwd

        return f"its owner ({pwd.getpwuid(os.stat(path).st_uid).pw_name})"
    except (ImportError, KeyError, OSError):
        return "whoever shares it"


def _folder(machine: str, desc: StoreDescription, project: str | None, timeout: float | None, mark: bool,
            new_store: bool) -> TeamAccess:
    from agentmem.store import folder as folders
    from agentmem.store.opening import open_store

    root = desc.location
    known = _known(machine, desc, new_store)
    if not os.path.lexists(root):
        if known is not None:
            return TeamAccess(desc, NOT_FOUND, FAILED, f"team {root}: not found: the folder is not there (an "
                              "unmounted drive or a moved folder?); this machine used a team store there before",
                              "mount the drive or share that holds it", project=project)
        return TeamAccess(desc, NOT_FOUND, FAILED, f"team {root}: not found: the folder does not exist or this "
                          "machine cannot see it (setup never creates a team folder)",
                          "ask whoever shares the team's folder to create it, or mount the drive that holds it",
                          project=project)
    if not os.path.isdir(root):
        return TeamAccess(desc, NOT_FOUND, FAILED, f"team {root}: not found: it is not a folder",
                          "check the team's folder in config.toml ([team] location)", project=project)
    if not os.access(root, os.R_OK | os.X_OK):
        owner = _owner(root)
        return TeamAccess(desc, NO_ACCESS, FAILED, f"team {root}: no access: this account cannot read the "
                          f"folder; ask {owner} for access", f"ask {owner} for read access (write to save to it)",
                          project=project)
    writable = _writable(root, project)
    marked = False
    if mark and writable and known is None and folders.read_marker(root) is None:
        folders.write_marker(root)  # the store's identity, as setup gives the member's own folder; no note
        marked = True
    store = open_store(desc, timeout=timeout, identity=known)
    notes = _listed(store, project)
    _accept(machine, desc, store.identity)
    done = "; marked it as an agentmem store" if marked else ""
    if not writable:
        words = f"ask {_owner(root)} for write permission to save to it"
        return TeamAccess(desc, READ_ONLY, WARNING, f"team {root}: read only: {words}", words, project=project,
                          notes=notes, marked=marked)
    return TeamAccess(desc, READ_WRITE, OK, f"team {root}: read and write{_held(notes, project)}{done}",
                      project=project, notes=notes, marked=marked)


def _writable(root: str, project: str | None) -> bool:
    """Whether this account may add files to the folder: the root, and the project's folders already in
    it (a save writes there). Asked of the file system; nothing is written."""
    from agentmem.store import layout

    places = [root]
    if project is not None:
        parts = layout.notes_prefix(project).split("/")
        places += [os.path.join(root, *parts[:n]) for n in range(1, len(parts) + 1)]
    return all(os.access(p, os.W_OK | os.X_OK) for p in places if os.path.isdir(p))


# -- failures the store raised ----------------------------------------------------------------------


def _failure(desc: StoreDescription, exc: errors.AgentmemError, project: str | None) -> TeamAccess:
    """A team store that did not answer as a store: one line saying what it is, and its fix."""
    access = {"no-access": NO_ACCESS, "not-found": NOT_FOUND}.get(exc.kind, UNREACHABLE)
    message = exc.words.text() if exc.words is not None else exc.message
    said = exc.kind.replace("-", " ")
    line = f"team {desc.location}: {message}" if message.startswith(said) else \
        f"team {desc.location}: {said}: {message}"
    commands = [c for step in exc.next for c in step.commands]
    if commands and commands[0].args == ("setup", "--new-store"):  # another store there (INV store-identity)
        return TeamAccess(desc, access, FAILED, line, "restore the team's store there, or accept the one there now",
                          commands[0], project=project)
    if commands:  # the hint's words, its command as data after them
        import re

        step = next(step for step in exc.next if step.commands)
        words = "".join(p for p in step.pieces if isinstance(p, str))
        words = re.sub(r"[\s,;:]*(?:and\s+)?(?:run\s+|with\s+)?``[\s,;:.]*$", "", words)
        return TeamAccess(desc, access, FAILED, line, words or None, commands[0], project=project)
    return TeamAccess(desc, access, FAILED, line, _FIXES.get(exc.kind) or errors.steps_line(exc.next) or None,
                      project=project)


_FIXES = {
    "offline": "check the network or the drive that holds the team's store; your own memory works meanwhile",
    "not-authenticated": "log in to Hugging Face (hf auth login) or set HF_TOKEN",
}


def setup_step(report: SetupReport, machine: str | os.PathLike, cfg: Config, new_store: bool = False) -> None:
    """Setup's "team" step, when `[team]` is set: the answer of `check`, its fix, and the answer in the
    report's JSON (`team`). A team problem is a step's status, never setup's verdict or exit status."""
    try:
        found = check(machine, cfg, timeout=cfg.network_timeout, mark=True, new_store=new_store)
    except errors.AgentmemError as exc:  # a malformed [team] table
        report.add("team", FAILED, exc.one_line())
        report.team = {"store": None, "access": UNREACHABLE, "status": FAILED.value, "detail": exc.one_line()}
        return
    if found is None:
        return
    detail = found.line
    if found.status != OK and found.fix and found.fix not in detail:
        detail += f"; {found.fix}"
    if found.command is not None:
        detail += f": `{Command(*found.command.args, helper=report.helper).line()}`"
    report.add("team", found.status, detail)
    report.team = found.to_json()
