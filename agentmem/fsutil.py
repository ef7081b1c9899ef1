"""Atomic file operations. Every write agentmem makes goes through here.

INV atomic-write: a reader sees either the old file or the complete new one,
never a partial file; a crash leaves at worst a stray temp file whose name
starts with `.tmp-`, which every listing ignores.
"""

from __future__ import annotations

import os
import sys

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


def write_atomic(target: str | os.PathLike, data: bytes, *, mode: int = 0o644, durable: bool = True) -> None:
    """Write `data` to `target` through a temp file in the same folder and a rename.

    `durable=False` skips the fsyncs: still atomic for readers and crashes of the process,
    for derived files a power cut may lose (a cache's state, written on every search).
    """
    target = os.fspath(target)
    os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
    tmp = temp_path_for(target)
    try:
        with open(tmp, "xb") as fh:
            fh.write(data)
            if durable:
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
    if durable:
        fsync_dir(os.path.dirname(target) or ".")


def fsync_file(path: str | os.PathLike) -> None:
    """Make a file written without its fsync (`write_atomic(durable=False)`) durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Flush:
    """Many files written without their fsyncs, made durable together: each file, then each folder whose
    entries changed (a rename into it, a removal, a folder made in it). Exactly those: a run that wrote
    nothing flushes nothing, and nothing else on the machine is waited for (`os.sync` flushes every disk).
    The files' fsyncs run a few at a time, which lets the file system commit them together (an fsync each,
    one after another, cost 0.25-0.3 ms a file on the shared machine: docs/benchmarks.md, export reruns)."""

    WORKERS = 8
    WHOLE_FILE_SYSTEM = 2000

    def __init__(self) -> None:
        self.files: list[str] = []
        self.folders: set[str] = set()

    def wrote(self, path: str) -> None:
        self.files.append(path)
        self.folders.add(os.path.dirname(path))

    def removed(self, path: str) -> None:
        self.folders.add(os.path.dirname(path))

    def makedirs(self, folder: str) -> None:
        """`os.makedirs(folder, exist_ok=True)`, noting the parent of each folder it made."""
        if os.path.isdir(folder):
            return
        parent = os.path.dirname(folder)
        if parent and parent != folder:
            self.makedirs(parent)
        try:
            os.mkdir(folder)
        except FileExistsError:
            if not os.path.isdir(folder):
                raise
            return
        self.folders.update((folder, parent or "."))

    def done(self) -> None:
        """fsync what was noted, then forget it. Raises what an fsync raised (a disk error is no success).

        Past `WHOLE_FILE_SYSTEM` files (a first export of a big store), one `syncfs` of each file system they
        are on (Linux) costs far less than an fsync each (100k files: about 10 s more than one sync, measured
        for issue W): it flushes that file system only, never every disk as `os.sync` does."""
        files, folders = self.files, sorted(self.folders, key=len, reverse=True)  # the deepest first
        self.files, self.folders = [], set()
        if len(files) > self.WHOLE_FILE_SYSTEM and sync_file_systems(folders):
            return
        if len(files) > self.WORKERS:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(self.WORKERS) as pool:
                list(pool.map(fsync_file, files))
        else:
            for path in files:
                fsync_file(path)
        for folder in folders:
            fsync_dir(folder)


def sync_file_systems(folders: list[str]) -> bool:
    """`syncfs` of each file system `folders` are on (every written file is in one of them); False where
    the call does not exist (not Linux), and nothing was flushed. Raises what syncfs reports (Linux 5.8+
    reports a write-back error of that file system)."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        call = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return False
    by_device: dict[int, str] = {}
    for folder in folders:
        by_device.setdefault(os.stat(folder).st_dev, folder)
    for folder in by_device.values():
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            if call(fd) != 0:
                err = ctypes.get_errno()
                raise OSError(err, os.strerror(err), folder)
        finally:
            os.close(fd)
    return True


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
# its temp file within seconds, a 100k-note index rebuild, the slowest, included; docs/benchmarks.md).
STALE_TEMP_SECONDS = 3600.0


def sweep_temp(folder: str | os.PathLike, older_than: float = STALE_TEMP_SECONDS, *, dirs: bool = False) -> None:
    """Remove the stale temp files (`.tmp-*`) directly inside `folder`; never a complete file.

    With `dirs`, stale temp folders too (a pending entry being staged or deleted), and the
    temp files inside each entry folder. A temp entry whose name carries the ID of a process
    still running on this machine is kept at any age: its writer may be alive (suspended).
    """
    import time

    try:
        names = os.listdir(folder)
    except OSError:
        return
    now = time.time()
    for name in names:
        if not name.startswith(TMP_PREFIX):
            if dirs and not name.startswith("."):
                sweep_temp(os.path.join(folder, name), older_than)  # an entry folder: only its temp files
            continue
        path = os.path.join(folder, name)
        try:
            st = os.lstat(path)
            if now - st.st_mtime <= older_than or _writer_alive(name):
                continue
            if os.path.isdir(path) and not os.path.islink(path):
                if dirs:
                    import shutil

                    shutil.rmtree(path, ignore_errors=True)
            else:
                os.unlink(path)
        except OSError:
            pass


def _writer_alive(name: str) -> bool:
    """Whether the temp name's `.<pid>.<random>` tail names a live process of this machine."""
    parts = name.rsplit(".", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return False
    try:
        os.kill(int(parts[1]), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # alive, or we cannot tell: keep it
    return True


def read_state(path: str | os.PathLike) -> dict:
    """A small JSON record agentmem keeps in the machine folder (what it added where); {} when the
    file is missing or damaged: such records only say what to take out again, never hold a note."""
    import json

    try:
        data = json.loads(read_bytes(path))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_state(path: str | os.PathLike, state: dict) -> None:
    """Write such a record atomically; an empty one removes the file."""
    import json

    if state:
        write_atomic(path, (json.dumps(state, indent=2, sort_keys=True) + "\n").encode())
    else:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def read_bytes(path: str | os.PathLike, limit: int = -1) -> bytes:
    """A file's bytes, or at most its first `limit` bytes."""
    with open(path, "rb") as fh:
        return fh.read(limit)
