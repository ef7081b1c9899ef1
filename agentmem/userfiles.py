"""The one rule for every file and folder agentmem edits in a user's home.

Instruction files (AGENTS.md, CLAUDE.md, ...), hook files (hooks.json,
settings.json, ...) and skill folders all go through here before a write.

INV user-files:
- a symbolic link is followed and its target is written, so a dotfiles link stays a link;
- a link that leads nowhere (the file's own, or one of the folders above it) is refused:
  writing through it would create folders and a file wherever it happens to point;
- a file or folder the user made read-only (no write permission bit at all, or not
  writable by this user) is left exactly as it was, and the caller says so. Root
  could write it anyway; the mode bits say the owner does not want it changed.

Reading never needs this: a missing or dangling file simply reads as absent.
"""

from __future__ import annotations

import os

from agentmem.errors import InvalidInput, NoAccess
from agentmem.fsutil import write_atomic

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from pathlib import Path


class Change:
    """What one edit of a managed entry in a user's file did (codex_config, claude_config)."""

    __slots__ = ("path", "changed", "detail")

    def __init__(self, path: Path, changed: bool, detail: str) -> None:
        self.path, self.changed, self.detail = path, changed, detail

    def to_json(self) -> dict:
        return {"file": str(self.path), "changed": self.changed, "detail": self.detail}


def _dangling(path: str) -> str | None:
    """The first existing-but-broken entry on the way to `path` (a link leading nowhere), if any."""
    current = os.path.abspath(path)
    while True:
        if os.path.lexists(current):
            return None if os.path.exists(current) else current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def dangling(path: str | os.PathLike) -> bool:
    """True when a link on the way to `path` leads nowhere."""
    return _dangling(os.fspath(path)) is not None


def resolve(path: str | os.PathLike) -> str:
    """The real path a write to `path` must go to. Raises InvalidInput for a dangling link on the way."""
    path = os.fspath(path)
    broken = _dangling(path)
    if broken is not None:
        raise InvalidInput(
            f"{broken} is a symbolic link to {os.path.realpath(broken)}, which does not exist; "
            f"agentmem does not create files through it, so {path} was left as it was",
            hint="create the link's target or remove the link, then run this again",
        )
    real = os.path.realpath(path)
    parent = _existing_ancestor(os.path.dirname(real))
    if parent is not None and not os.path.isdir(parent):
        raise InvalidInput(f"{parent} is not a folder, so {path} cannot be written; nothing was changed")
    return real


def _existing_ancestor(folder: str) -> str | None:
    while folder and not os.path.lexists(folder):
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return folder or None


def is_read_only(path: str | os.PathLike) -> bool:
    """True when the user made `path` read-only: no write bit at all, or not writable by us."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return False
    return not (mode & 0o222) or not os.access(path, os.W_OK)


def check_writable(path: str | os.PathLike, *, shown: str | os.PathLike | None = None,
                   folder: bool = False) -> None:
    """Raise NoAccess when the resolved `path` is read-only, or the folder its atomic write (a temp
    file and a rename beside it) needs is. With `folder`, `path` is a folder agentmem writes into.
    `shown` is the path the user knows it by (a link, for instance)."""
    path = os.fspath(path)
    name = os.fspath(shown) if shown is not None else path
    if os.path.lexists(path) and is_read_only(path):
        blocked: str | None = path
    elif folder and os.path.lexists(path):
        blocked = None
    else:
        above = _existing_ancestor(os.path.dirname(path))
        blocked = above if above is not None and is_read_only(above) else None
    if blocked is not None:
        what = name if blocked == path else f"the folder {blocked}"
        raise NoAccess(
            f"{what} is read-only; agentmem left {name} as it was",
            hint="make it writable (chmod u+w) and run this again, or leave it so",
        )


def write_file(path: str | os.PathLike, data: bytes, *, new_mode: int = 0o644) -> str:
    """Write `data` to the file `path` stands for (through links), keeping an existing file's mode.

    Returns the real path written. Refuses dangling links and read-only files (see module docstring).
    """
    real = resolve(path)
    check_writable(real, shown=path)
    try:
        mode = os.stat(real).st_mode & 0o777
    except FileNotFoundError:
        mode = new_mode
    write_atomic(real, data, mode=mode)
    return real


def prepare_folder(path: str | os.PathLike) -> str:
    """Check that agentmem may create or replace entries in the folder `path` (a runtime's skill
    folder); returns its real path. Same rule as files: links followed, dangling ones refused,
    a read-only folder left alone."""
    real = resolve(path)
    check_writable(real, shown=path, folder=True)
    return real
