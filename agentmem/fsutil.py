"""Atomic file operations. Every write agentmem makes goes through here.

INV atomic-write: a reader sees either the old file or the complete new one,
never a partial file; a crash leaves at worst a stray temp file whose name
starts with `.tmp-`, which every listing ignores.
"""

from __future__ import annotations

import os
from pathlib import Path

TMP_PREFIX = ".tmp-"


def temp_path_for(target: Path) -> Path:
    return target.with_name(f"{TMP_PREFIX}{target.name}.{os.getpid()}.{os.urandom(4).hex()}")


def fsync_dir(directory: Path) -> None:
    """Make a folder's entries (a rename into it) durable; best effort where unsupported."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomic(target: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Write `data` to `target` through a temp file in the same folder and a rename."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path_for(target)
    try:
        with open(tmp, "xb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            tmp.unlink()
        except FileNotFoundError:
            pass
        raise
    fsync_dir(target.parent)


def create_exclusive_atomic(target: Path, data: bytes) -> bool:
    """Place `data` at `target` only if nothing is there yet. Returns False if something was.

    Uses a hard link from a complete temp file, so the target appears whole or
    not at all and two writers can never both win.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path_for(target)
    with open(tmp, "xb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    try:
        os.link(tmp, target)
        created = True
    except FileExistsError:
        created = False
    except OSError:
        # Filesystems without hard links: fall back to an exclusive rename check.
        if target.exists():
            created = False
        else:
            os.replace(tmp, target)
            fsync_dir(target.parent)
            return True
    finally:
        try:
            tmp.unlink()
        except FileNotFoundError:
            pass
    if created:
        fsync_dir(target.parent)
    return created


def read_text_limited(path: Path, limit: int) -> bytes:
    """Read at most `limit` + 1 bytes, so a caller can tell an oversized file without loading it."""
    with open(path, "rb") as fh:
        return fh.read(limit + 1)
