"""Editing config.toml: one edit at a time, comments kept, and committed alone when asked.

Every edit goes through `update` (tomlkit, so the user's comments and layout survive,
written atomically) under the machine's config lock, so concurrent edits all land.
A malformed file, or one left with `copier update` conflict markers, is never
rewritten. `update_and_commit` also commits the change by itself on top of the
machine folder's HEAD, so `map` and `hooks install` leave the tree as clean as they
found it and never commit the user's unrelated edits.
"""

from __future__ import annotations

import os

from agentmem.config import canonical, check_no_conflict, check_project_name, helper_words, too_broad
from agentmem.errors import Command, InvalidInput, NextStep
from agentmem.fsutil import read_bytes, write_atomic
from agentmem.paths import config_path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable

    from tomlkit import TOMLDocument

MAX_LISTED = 10  # mapped directories an "is not mapped" error names
LOCK_FILE = ".config.lock"  # Windows only: there a folder cannot be locked, so a file beside config.toml is
_lock_depth: dict[str, int] = {}
_lock_fds: dict[str, int] = {}


class locked:
    """Hold the machine's config lock: one config.toml edit (read, change, write, commit) at a time
    across processes, so concurrent edits (`agentmem map` x 12) all land. Re-entrant within a
    process. On Linux and macOS it is flock on the machine folder itself (no lock file to leave
    behind; released if the holder dies); on Windows msvcrt's lock on a `.config.lock` file."""

    def __init__(self, machine: str | os.PathLike):
        self.folder = os.path.abspath(os.fspath(machine))

    def __enter__(self) -> locked:
        depth = _lock_depth.get(self.folder, 0)
        if depth == 0:
            os.makedirs(self.folder, exist_ok=True)
            fd = _lock(self.folder)
            _lock_fds[self.folder] = fd
        _lock_depth[self.folder] = depth + 1
        return self

    def __exit__(self, *exc: object) -> None:
        depth = _lock_depth.pop(self.folder) - 1
        if depth:
            _lock_depth[self.folder] = depth
        else:
            os.close(_lock_fds.pop(self.folder))  # closing the descriptor releases the lock


def _lock(folder: str) -> int:
    """An open descriptor holding the exclusive lock."""
    import sys

    if sys.platform == "win32":
        import msvcrt

        fd = os.open(os.path.join(folder, LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o600)
        while True:
            try:
                msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # itself retries for about 10 s
                return fd
            except OSError:
                continue
    import fcntl

    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _edited(machine: str | os.PathLike, change: Callable[[TOMLDocument], object]) -> tuple[str, str]:
    """(current text, text after `change(doc)`) of config.toml, through tomlkit. Writes nothing."""
    import tomlkit

    path = config_path(machine)
    try:
        text = read_bytes(path).decode("utf-8")
    except FileNotFoundError:
        text = ""
    except UnicodeDecodeError:
        raise InvalidInput(f"{path} is not UTF-8 text; fix or remove it, nothing was changed") from None
    check_no_conflict(path, text, machine=machine)
    try:
        doc = tomlkit.parse(text)
    except Exception as exc:  # tomlkit raises several parse error types
        raise InvalidInput(f"{path} is not valid TOML ({exc}); fix or remove it, nothing was changed") from None
    change(doc)
    return text, tomlkit.dumps(doc)


def update(machine: str | os.PathLike, change: Callable[[TOMLDocument], object]) -> bool:
    """Apply `change(doc)` to config.toml as a tomlkit document and write it atomically, under the
    config lock. True if the file changed.

    Comments and formatting the user wrote survive; a malformed or conflicted file is never rewritten.
    """
    with locked(machine):
        before, after = _edited(machine, change)
        if after == before:
            return False
        write_atomic(config_path(machine), after.encode("utf-8"))
        return True


def update_and_commit(machine: str | os.PathLike, change: Callable[[TOMLDocument], object],
                      message: str) -> tuple[bool, bool, str | None]:
    """`update`, then commit that change alone on top of the machine folder's HEAD (when it is a
    git repository): the user's other uncommitted edits, in config.toml or elsewhere, stay
    uncommitted. `change` is applied to HEAD's copy too, so it must only set what it means to set.

    Returns (changed, committed, why a commit could not be made or None).
    """
    with locked(machine):
        if not update(machine, change):
            return False, False, None
        committed, problem = _commit_alone(machine, change, message)
        return True, committed, problem


def _commit_alone(machine: str | os.PathLike, change: Callable[[TOMLDocument], object],
                  message: str) -> tuple[bool, str | None]:
    import subprocess

    import tomlkit

    from agentmem import repo

    try:
        head = repo.committed_text(machine, "config.toml")
        if head is None:
            return False, None  # not a git repository (or nothing committed yet): no tree to keep clean
        doc = tomlkit.parse(head)
        change(doc)
        return repo.commit_text(machine, "config.toml", tomlkit.dumps(doc), message), None
    except subprocess.CalledProcessError as exc:
        return False, f"git {exc.cmd[1] if len(exc.cmd) > 1 else ''} failed: {(exc.stderr or '').strip()[:200]}"
    except Exception as exc:  # HEAD's copy cannot take the change, or git is missing
        return False, f"{type(exc).__name__}: {exc}"


def _mapping_key(table: dict, root: str) -> str | None:
    """The key of `table` (a [projects] table) that names the directory `root`, however spelled."""
    for key in list(table.keys()):
        if isinstance(key, str) and os.path.isabs(os.path.expanduser(key)) and canonical(key) == root:
            return key
    return None


class Mapping:
    """What `map_directory` did."""

    def __init__(self, root: str, project: str, previous: str | None, changed: bool, committed: bool = False,
                 commit_problem: str | None = None):
        self.root, self.project, self.previous = root, project, previous
        self.changed, self.committed, self.commit_problem = changed, committed, commit_problem


def map_directory(machine: str | os.PathLike, directory: str | os.PathLike, project: str, *,
                  replace: bool = False, commit: bool = False) -> Mapping:
    """Map `directory` (canonicalised) to `project` in config.toml.

    A directory already mapped to another project is remapped only with `replace`; with `commit`,
    the change is committed alone (see `update_and_commit`).
    """
    check_project_name(project)
    root = canonical(directory)
    if not os.path.isdir(root):
        raise InvalidInput(f"{root} is not a directory")
    broad = too_broad(root)
    if broad:
        raise InvalidInput(f"{root} is {broad}: a project mapped there would claim every directory below it; "
                           "nothing was changed", hint="map the project's own checkout, e.g. ~/src/app")
    with locked(machine):
        found: list[str | None] = []
        _edited(machine, lambda doc: found.append(_mapped(machine, doc, root)[1]))
        previous = found[0]
        if previous == project:
            return Mapping(root, project, None, False)
        if previous is not None and not replace:
            raise InvalidInput(
                f"{root} is already mapped to project {previous}; nothing was changed",
                hint=NextStep(f"to map it to {project} instead, run `{{}}`",
                              Command("map", root, project, "--replace", helper=helper_words(_current_data(machine)))),
            )

        def change(doc: TOMLDocument) -> None:
            table, _, key = _mapped(machine, doc, root)
            table[key if key is not None else root] = project

        message = f"Map {root} to project {project}" + (f" (was {previous})" if previous else "")
        if commit:
            return Mapping(root, project, previous, *update_and_commit(machine, change, message))
        return Mapping(root, project, previous, update(machine, change))


def unmap_directory(machine: str | os.PathLike, directory: str | os.PathLike, *, commit: bool = False) -> Mapping:
    """Remove the mapping of `directory` (canonicalised; it need not exist any more) from config.toml; with
    `commit`, the change is committed alone (see `update_and_commit`). NotFound when it is not mapped.
    The project's notes stay in the store, and its other directories stay mapped."""
    from agentmem.errors import NotFound

    root = canonical(directory)
    with locked(machine):
        found: list[tuple[str | None, list[str]]] = []

        def look(doc: TOMLDocument) -> None:
            table = doc.get("projects")
            if not isinstance(table, dict):
                found.append((None, []))
                return
            key = _mapping_key(table, root)
            found.append((table.get(key) if key is not None else None, [k for k in table if isinstance(k, str)]))

        _edited(machine, look)
        project, keys = found[0]
        if project is None:
            listed = ", ".join(keys[:MAX_LISTED]) + (f" and {len(keys) - MAX_LISTED} more" if len(keys) > MAX_LISTED
                                                      else "")
            raise NotFound(f"{root} is not mapped to a project on this machine; nothing was changed",
                           hint=f"mapped: {listed}" if keys else "no directory is mapped")

        def change(doc: TOMLDocument) -> None:
            table = doc.get("projects")
            key = _mapping_key(table, root) if isinstance(table, dict) else None
            if isinstance(table, dict) and key is not None:
                del table[key]

        message = f"Unmap {root} (was project {project})"
        if commit:
            return Mapping(root, str(project), None, *update_and_commit(machine, change, message))
        return Mapping(root, str(project), None, update(machine, change))


def _mapped(machine: str | os.PathLike, doc: TOMLDocument, root: str) -> tuple[dict, str | None, str | None]:
    """(the [projects] table, created if missing; the project `root` maps to or None; its key or None)."""
    import tomlkit

    table = doc.get("projects")
    if table is None:
        table = tomlkit.table()
        doc["projects"] = table
    elif not isinstance(table, dict):
        raise InvalidInput(
            f"{config_path(machine)}: projects must be a table of directory = project; nothing was changed"
        )
    key = _mapping_key(table, root)
    return table, (table.get(key) if key is not None else None), key


def _current_data(machine: str | os.PathLike) -> dict:
    from agentmem import config

    try:
        return config.load(machine).data
    except InvalidInput:
        return {}
