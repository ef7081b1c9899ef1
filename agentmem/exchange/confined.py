"""Reading a folder someone else wrote without ever leaving it.

`import` reads another tool's memory folder (a repository can ship Cline's `memory-bank/`) and export
folders (copied from anywhere); `export` rereads the folder it updates. None of them is ours to trust.

INV confined-read: a file is opened below the folder's own descriptor, one path component at a time,
each with O_NOFOLLOW, so a symbolic link anywhere below the folder (to `~/.netrc`, to a linked folder)
is refused, never followed; only a regular file is read: a FIFO or a device is refused at once (opened
with O_NONBLOCK, checked with fstat before any read), so nothing blocks; and no read returns more than
its limit. The folder itself is taken as it resolves: it is the one the user named, or the tool's own.
"""

from __future__ import annotations

import os
import stat

_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
# Descriptor-relative opens (Linux, macOS, the BSDs): the component walk cannot be raced by a swapped link.
_AT = os.open in os.supports_dir_fd and os.scandir in os.supports_fd and bool(_NOFOLLOW)

LINK = "a symbolic link (import and export never follow a link)"
NOT_REGULAR = "not a regular file (a FIFO, a device or a socket is never read)"


class Refused(Exception):
    """A path inside the folder that is not read, and why in words (`reason`)."""

    def __init__(self, rel: str, reason: str):
        super().__init__(f"{rel}: {reason}")
        self.rel, self.reason = rel, reason


def parts_of(rel: str) -> list[str]:
    """The components of a relative path that stays inside its folder (no '', '.', '..', no backslash)."""
    parts = rel.split("/")
    if not rel or "\\" in rel or "\x00" in rel or any(p in ("", ".", "..") for p in parts):
        raise Refused(rel, "not a plain path inside the folder")
    return parts


def kind(root: str, name: str) -> str:
    """What the entry `name` directly inside `root` is, without following a link: 'file', 'folder',
    'link', 'other' or 'missing'."""
    if len(parts_of(name)) != 1:
        raise Refused(name, "not a name directly inside the folder")
    try:
        return _kind(os.lstat(os.path.join(root, name)).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return "missing"


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "folder"
    return "file" if stat.S_ISREG(mode) else "other"


def _why(exc: OSError, parent: int | str, name: str) -> str | None:
    """Why an open below the folder failed, when the answer is a link or a non-folder (else None)."""
    try:
        st = os.lstat(name, dir_fd=parent) if isinstance(parent, int) else os.lstat(os.path.join(parent, name))
    except OSError:
        return None
    found = _kind(st.st_mode)
    return LINK if found == "link" else (NOT_REGULAR if found == "other" else None)


def _open_folder(root: str, parts: list[str], rel: str) -> int:
    """A descriptor of the folder `parts` below `root`, every component a real folder (no link)."""
    fd = os.open(root, _FLAGS | _DIRECTORY)
    try:
        for i, part in enumerate(parts):
            try:
                inner = os.open(part, _FLAGS | _DIRECTORY | _NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                why = _why(exc, fd, part)
                if why is None:
                    raise
                raise Refused("/".join(parts[:i + 1]), why) from None
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def read(root: str, rel: str, limit: int) -> bytes:
    """At most `limit` bytes of the regular file `rel` inside `root` (one more than `limit` shows it is
    larger). Refused: a link on the way or at the end, anything but a regular file. FileNotFoundError
    when there is nothing there."""
    parts = parts_of(rel)
    if not _AT:
        return _read_by_path(root, parts, rel, limit)
    folder = _open_folder(root, parts[:-1], rel)
    try:
        try:
            fd = os.open(parts[-1], _FLAGS | _NOFOLLOW | _NONBLOCK, dir_fd=folder)
        except OSError as exc:
            why = _why(exc, folder, parts[-1])
            if why is None:
                raise
            raise Refused(rel, why) from None
    finally:
        os.close(folder)
    return _read_fd(fd, rel, limit)


def _read_fd(fd: int, rel: str, limit: int) -> bytes:
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Refused(rel, NOT_REGULAR)
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _read_by_path(root: str, parts: list[str], rel: str, limit: int) -> bytes:
    """Where descriptor-relative opens are missing (Windows): each component checked with lstat first."""
    here = root
    for i, part in enumerate(parts):
        here = os.path.join(here, part)
        found = _kind(os.lstat(here).st_mode)
        if found == "link":
            raise Refused("/".join(parts[:i + 1]), LINK)
        if found != ("file" if i == len(parts) - 1 else "folder"):
            raise Refused("/".join(parts[:i + 1]), NOT_REGULAR if i == len(parts) - 1 else "not a folder")
    return _read_fd(os.open(here, _FLAGS | _NOFOLLOW | _NONBLOCK), rel, limit)


def entries(root: str, rel: str = "") -> list[tuple[str, str]]:
    """(name, kind) of what the folder `rel` inside `root` holds, sorted by name; kind as `kind()` says.
    Refused when `rel` is (or passes through) a link."""
    if not _AT:
        here = root
        for i, part in enumerate(parts_of(rel) if rel else []):
            found = kind(here, part)
            if found != "folder":
                raise Refused("/".join(rel.split("/")[:i + 1]), LINK if found == "link" else "not a folder")
            here = os.path.join(here, part)
        with os.scandir(here) as it:
            return sorted((e.name, _kind(e.stat(follow_symlinks=False).st_mode)) for e in it)
    fd = _open_folder(root, parts_of(rel) if rel else [], rel)
    try:
        with os.scandir(fd) as it:
            return sorted((e.name, _kind(e.stat(follow_symlinks=False).st_mode)) for e in it)
    finally:
        os.close(fd)
