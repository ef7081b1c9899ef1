"""The session's machine snapshots (tests/fixtures_machines.py) give each test the pristine world back."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path

from tests.fixtures_machines import Snapshots


def _state(root: Path) -> dict:
    """Every entry below `root`: its kind, mode and mtime, a file's bytes (digest), a link's target."""
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            st, rel = os.lstat(path), os.path.relpath(path, root)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("folder", st.st_mode, st.st_mtime_ns)
            else:
                out[rel] = ("file", st.st_mode, st.st_mtime_ns, hashlib.sha256(Path(path).read_bytes()).hexdigest())
    return out


def _build(root: Path) -> dict:
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "f.txt").write_text("one")
    (root / "a" / "g.txt").write_text("two")
    os.symlink("b/f.txt", root / "a" / "link")
    (root / "ro").mkdir()
    return {"root": root, "env": {"HOME": str(root)}}


def test_a_restored_world_is_the_pristine_one_whatever_the_last_test_wrote_moved_or_chmodded(tmp_path):
    snapshots = Snapshots(tmp_path)
    world = snapshots.restore("w", _build)
    root = world["root"]
    pristine = _state(root)
    world["env"]["HOME"] = "changed by the test"

    (root / "a" / "b" / "f.txt").write_text("ONE")  # in place, same size
    g = root / "a" / "g.txt"
    os.utime(g, ns=(1, g.stat().st_mtime_ns))  # same mtime set back: only its ctime tells
    os.chmod(g, 0o600)
    os.unlink(root / "a" / "link")
    os.symlink("g.txt", root / "a" / "link")
    (root / "new").mkdir()
    (root / "new" / "x").write_text("x")
    (root / "ro" / "y").write_text("y")
    os.chmod(root / "ro", 0o500)
    os.rename(root / "a" / "b", root / "a" / "moved")

    again = snapshots.restore("w", _build)
    assert _state(root) == pristine
    assert again["env"] == {"HOME": str(root)}  # each test gets its own copy of what build returned

    inode = g.stat().st_ino
    snapshots.restore("w", _build)  # nothing changed: nothing is copied
    assert _state(root) == pristine and g.stat().st_ino == inode

    g.unlink()
    g.mkdir()  # a file became a folder, a folder a file
    shutil.rmtree(root / "a" / "b")
    (root / "a" / "b").write_text("file")
    snapshots.restore("w", _build)
    assert _state(root) == pristine
