"""Machines set up once per session by a real `copier copy`, and a fresh copy of one for each test.

A real copy (Copier's render, the helper venv, `agentmem setup`, the commits) takes 1.5-4 s on
this 2-core box. Tests whose subject is the copy itself (what it writes, keeps, prints or
refuses) run their own. Tests whose subject comes after it (an update, setup rerun, an upgrade,
an agent CLI run) only need a machine as a copy leaves it; they take one from
`machine_snapshots`:

    def test_x(copied_laptop):       # the standard one: tests/template_kit.py copy_laptop
        m = copied_laptop.m

    def test_y(machine_snapshots):   # any other world, named, built by build(root) -> anything
        world = machine_snapshots.restore("my-world", build)

The first `restore` of a name calls `build(root)`, which sets up a whole world under `root` (the
template repo, the user's home with its machine folder, the store: everything the machine's
files name by absolute path), and keeps a pristine copy of it. Every later `restore` of that
name undoes what the previous test did at `root`, putting the pristine world back at the SAME
path, so every absolute path recorded in it stays true: the launcher's shebang and
`.venv/bin/python` link, the venv's `.pth`, config.toml's helper command, projects and store,
the managed blocks and skills naming the helper, `.copier-answers.yml`'s template path, git's
history. Each test gets its own deep copy of what `build` returned (Machine objects with their
env dicts), to change as it likes. Two worlds a test uses together need two names (each its
own root), or one world holding both machines.

The world is not under the test's `tmp_path`: use the paths `build` returned. Only `root` is put
back: whatever else `build` used (a session-scoped template repo, say) the tests must leave alone.
A machine that differs (other answers, other files there before the copy) is another name, built
once too. Tests run one at a time per process (each xdist worker would have its own snapshots),
so a root is never in use by two tests at once.

Restoring is cheap because it puts back only what the last test changed. After each restore
every entry's inode and ctime are noted; the next restore walks the world and replaces from the
pristine copy each entry whose inode or ctime is not the one noted (written, replaced, renamed or
chmodded: the kernel sets ctime on each, and no program can set it back), removes what the test
added and puts back what it removed, then resets the folders' modes and times. An untouched entry
is byte for byte the pristine one, so a machine with 2,400 files in its helper venv comes back in
a fraction of a second, not the seconds a full copy takes.
"""

from __future__ import annotations

import copy
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


class Snapshots:
    def __init__(self, base: Path):
        self.base = base
        self.worlds: dict[str, Any] = {}  # name -> what build returned
        self.pristine: dict[str, dict[str, os.stat_result]] = {}  # name -> the pristine copy's entries
        self.noted: dict[str, dict[str, tuple[int, int]]] = {}  # name -> (inode, ctime) of each entry at its root

    def restore(self, name: str, build: Callable[[Path], Any]) -> Any:
        """The world `name` at its root as `build` left it; `build(root)` runs on the first call only."""
        root, pristine = self.base / name, self.base / ".pristine" / name
        if name not in self.worlds:
            root.mkdir(parents=True)
            self.worlds[name] = build(root)
            pristine.parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(root, pristine, symlinks=True)
            self.pristine[name] = _entries(pristine)
        else:
            _put_back(root, pristine, self.pristine[name], self.noted[name])
        self.noted[name] = {rel: (st.st_ino, st.st_ctime_ns) for rel, st in _entries(root).items()}
        return copy.deepcopy(self.worlds[name])


def _entries(root: Path) -> dict[str, os.stat_result]:
    """Every entry below `root` (not following symlinks) by its relative path, "" for `root` itself."""
    found = {"": os.lstat(root)}
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        for entry in dirs + files:
            path = entry if rel == "." else os.path.join(rel, entry)
            found[path] = os.lstat(os.path.join(root, path))
    return found


def _put_back(root: Path, pristine: Path, want: dict[str, os.stat_result], noted: dict[str, tuple[int, int]]) -> None:
    have = _entries(root)
    for rel in sorted(set(have) - set(want), key=lambda r: r.count(os.sep), reverse=True):
        _remove(root / rel)  # added by the test (deepest first)
    for rel in sorted(want, key=lambda r: (r.count(os.sep), r)):  # parents before their entries
        src, dest, st = pristine / rel, root / rel, want[rel]
        now = have.get(rel)
        if now is not None and stat.S_IFMT(now.st_mode) == stat.S_IFMT(st.st_mode) and (
                stat.S_ISDIR(st.st_mode) or (now.st_ino, now.st_ctime_ns) == noted.get(rel)):
            continue  # untouched (a folder's own entries are checked one by one)
        if now is not None and os.path.lexists(dest):
            _remove(dest)
        if stat.S_ISDIR(st.st_mode):
            dest.mkdir()
        elif stat.S_ISLNK(st.st_mode):
            os.symlink(os.readlink(src), dest)
        else:
            shutil.copy2(src, dest)
    for rel in sorted((r for r, st in want.items() if stat.S_ISDIR(st.st_mode)), key=lambda r: r.count(os.sep),
                      reverse=True):  # folders' modes and times last, deepest first
        now, st = os.lstat(root / rel), want[rel]
        if (now.st_mode, now.st_mtime_ns) != (st.st_mode, st.st_mtime_ns):
            shutil.copystat(pristine / rel, root / rel)


def _remove(path: Path) -> None:
    """Remove a file, link or whole folder, including read-only folders a test may have left."""

    def writable_then_retry(func, target, _exc):
        os.chmod(os.path.dirname(target), stat.S_IRWXU)
        if not os.path.islink(target) and os.path.isdir(target):
            os.chmod(target, stat.S_IRWXU)
        func(target)

    if path.is_symlink() or not path.is_dir():
        try:
            path.unlink()
        except PermissionError:
            os.chmod(path.parent, stat.S_IRWXU)
            path.unlink()
    else:
        shutil.rmtree(path, onerror=writable_then_retry)


@pytest.fixture(scope="session")
def machine_snapshots(tmp_path_factory) -> Snapshots:
    """Worlds set up once per session by a real copier copy, restored fresh for each test (see above)."""
    return Snapshots(tmp_path_factory.mktemp("snapshots"))


@pytest.fixture
def copied_laptop(machine_snapshots):
    """A laptop with the user's own files, set up by a real `copier copy` of v1.0.0 for Codex and
    Claude Code (tests/template_kit.py copy_laptop): one copy per session, put back for each test."""
    from tests.template_kit import copy_laptop

    return machine_snapshots.restore("copied-laptop", copy_laptop)
