"""The folder store: memory in a plain directory (local disk, a synced or a network drive).

The embedded default: it needs no account. Writes are atomic and append-only
through a hard link from a complete temp file, so concurrent writers on one
filesystem never clobber each other and readers never see a partial object.
"""

from __future__ import annotations

import os
from pathlib import Path

from agentmem.errors import Conflict, InvalidInput, NoAccess, NotFound, Offline, RemoteError
from agentmem.fsutil import TMP_PREFIX, create_exclusive_atomic
from agentmem.store.base import ObjectInfo, StoreDescription, check_object_path


class FolderStore:
    def __init__(self, location: str | os.PathLike):
        root = Path(location).expanduser()
        if not root.is_absolute():
            raise InvalidInput(f"a folder store needs an absolute path, not {str(location)!r}")
        self.root = root
        self.description = StoreDescription("folder", str(root))

    def _available(self) -> None:
        # A missing root is created on first write; a root that exists but is not a
        # folder, or a parent that vanished (an unmounted drive), is an outage.
        if self.root.exists() and not self.root.is_dir():
            raise InvalidInput(f"folder store {self.root} is not a directory")
        if not self.root.parent.exists():
            raise Offline(f"folder store {self.root} is not reachable (its parent folder is missing)")

    def _file(self, path: str) -> Path:
        return self.root.joinpath(*check_object_path(path).split("/"))

    def _inside(self, target: Path) -> bool:
        """False when a symbolic link planted in the store leads `target` outside it."""
        root = os.path.realpath(self.root)
        real = os.path.realpath(target)
        return real == root or real.startswith(root.rstrip(os.sep) + os.sep)

    def _contained(self, target: Path, path: str) -> Path:
        if not self._inside(target.parent):
            raise RemoteError(f"{path} in folder store {self.root} leads outside the store (a symbolic link)")
        return target

    def put(self, path: str, data: bytes) -> None:
        target = self._file(path)
        self._available()
        self._contained(target, path)
        try:
            created = create_exclusive_atomic(target, data)
        except PermissionError as exc:
            raise NoAccess(f"cannot write to folder store {self.root}: {exc.strerror}")
        except OSError as exc:
            raise Offline(f"cannot write to folder store {self.root}: {exc.strerror}")
        if not created:
            try:
                existing = target.read_bytes()
            except OSError as exc:
                raise Offline(f"cannot read {path} in folder store {self.root}: {exc.strerror}")
            if existing != data:
                raise Conflict(f"{path} already exists in the store with different content")

    def get(self, path: str) -> bytes:
        target = self._file(path)
        if not self._inside(target):
            raise NotFound(f"{path} is not in the store")
        try:
            return target.read_bytes()
        except FileNotFoundError:
            raise NotFound(f"{path} is not in the store")
        except IsADirectoryError:
            raise NotFound(f"{path} is not in the store")
        except PermissionError as exc:
            raise NoAccess(f"cannot read {path} in folder store {self.root}: {exc.strerror}")
        except OSError as exc:
            raise Offline(f"cannot read {path} in folder store {self.root}: {exc.strerror}")

    def info(self, path: str) -> ObjectInfo | None:
        target = self._file(path)
        if not self._inside(target):
            return None
        try:
            st = target.stat()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise Offline(f"cannot reach {path} in folder store {self.root}: {exc.strerror}")
        if not target.is_file():
            return None
        return ObjectInfo(path, st.st_size)

    def list(self, prefix: str) -> list[ObjectInfo]:
        base = self._file(prefix)
        self._available()
        out: list[ObjectInfo] = []
        if not base.exists():
            return out
        self._contained(base / "x", prefix)

        def onerror(exc: OSError) -> None:
            raise exc

        try:
            for dirpath, dirnames, filenames in os.walk(base, onerror=onerror, followlinks=False):
                dirnames[:] = [d for d in dirnames if not d.startswith(".")]
                rel_dir = Path(dirpath).relative_to(self.root).as_posix()
                for name in filenames:
                    if name.startswith(".") or name.startswith(TMP_PREFIX):
                        continue
                    full = Path(dirpath, name)
                    if full.is_symlink():
                        continue
                    out.append(ObjectInfo(f"{rel_dir}/{name}", full.stat().st_size))
        except OSError as exc:
            raise Offline(f"cannot list {prefix} in folder store {self.root}: {exc.strerror}")
        out.sort(key=lambda o: o.path)
        return out
