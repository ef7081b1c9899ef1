"""Atomic file operations. Every write agentmem makes goes through here.

INV atomic-write: a reader sees either the old file or the complete new one,
never a partial file; a crash leaves at worst a stray temp file whose name
starts with `.tmp-`, which every listing ignores.
"""

from __future__ import annotations

import os

TMP_PREFIX = ".tmp-"


def temp_path_for(target: str | os.PathLike) -> str:
    folder, name = os.path.split(os.fspath(target))
    return os.path.join(folder, f"{TMP_PREFIX}{name}.{os.getpid()}.{os.urandom(4).hex()}")


def fsync_dir(directory: str | os.PathLike) -> None:
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


def write_atomic(target: str | os.PathLike, data: bytes, *, mode: int = 0o644) -> None:
    """Write `data` to `target` through a temp file in the same folder and a rename."""
    target = os.fspath(target)
    os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
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
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    fsync_dir(os.path.dirname(target) or ".")


def create_exclusive_atomic(target: str | os.PathLike, data: bytes) -> bool:
    """Place `data` at `target` only if nothing is there yet. Returns False if something was.

    Uses a hard link from a complete temp file, so the target appears whole or
    not at all and two writers can never both win.
    """
    target = os.fspath(target)
    folder = os.path.dirname(target) or "."
    os.makedirs(folder, exist_ok=True)
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
        if os.path.exists(target):
            created = False
        else:
            os.replace(tmp, target)
            fsync_dir(folder)
            return True
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
    if created:
        fsync_dir(folder)
    return created


# Seconds: a temp file this old belongs to a writer that crashed (a live writer renames or removes
# its temp file within seconds; the slowest, a 100k-note index rebuild, takes ~10 s, 2026-11-30).
STALE_TEMP_SECONDS = 3600.0


def sweep_temp(folder: str | os.PathLike, older_than: float = STALE_TEMP_SECONDS) -> None:
    """Remove the stale temp files (`.tmp-*`) directly inside `folder`; never a complete file."""
    import time

    try:
        names = os.listdir(folder)
    except OSError:
        return
    now = time.time()
    for name in names:
        if name.startswith(TMP_PREFIX):
            path = os.path.join(folder, name)
            try:
                if now - os.lstat(path).st_mtime > older_than and not os.path.isdir(path):
                    os.unlink(path)
            except OSError:
                pass


def read_bytes(path: str | os.PathLike, limit: int = -1) -> bytes:
    """A file's bytes, or at most its first `limit` bytes."""
    with open(path, "rb") as fh:
        return fh.read(limit)
