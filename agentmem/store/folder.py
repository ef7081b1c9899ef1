"""The folder store: memory in a plain directory (local disk, a synced or a network drive).

The embedded default: it needs no account. Writes are atomic and append-only
through a hard link from a complete temp file, so concurrent writers on one
filesystem never clobber each other and readers never see a partial object.
"""

from __future__ import annotations

import os

from agentmem.errors import Conflict, InvalidInput, NoAccess, NotFound, Offline, RemoteError
from agentmem.fsutil import TMP_PREFIX, create_exclusive_atomic, read_bytes
from agentmem.store.base import ObjectInfo, StoreDescription, check_object_path


class FolderStore:
    def __init__(self, location: str | os.PathLike):
        # os.path, not pathlib: a search that refreshes from a folder store stays off pathlib's import.
        root = os.path.expanduser(os.fspath(location))
        if not os.path.isabs(root):
            raise InvalidInput(f"a folder store needs an absolute path, not {str(location)!r}")
        self.root = os.path.normpath(root)
        self.description = StoreDescription("folder", self.root)

    def _available(self) -> None:
        # A missing root is created on first write; a root that exists but is not a
        # folder, or a parent that vanished (an unmounted drive), is an outage.
        if os.path.exists(self.root) and not os.path.isdir(self.root):
            raise InvalidInput(f"folder store {self.root} is not a directory")
        if not os.path.exists(os.path.dirname(self.root)):
            raise Offline(f"folder store {self.root} is not reachable (its parent folder is missing)")

    def _file(self, path: str) -> str:
        return os.path.join(self.root, *check_object_path(path).split("/"))

    def _inside(self, target: str) -> bool:
        """False when a symbolic link planted in the store leads `target` outside it."""
        root = os.path.realpath(self.root)
        real = os.path.realpath(target)
        return real == root or real.startswith(root.rstrip(os.sep) + os.sep)

    def _contained(self, target: str, path: str) -> str:
        if not self._inside(os.path.dirname(target)):
            raise RemoteError(f"{path} in folder store {self.root} leads outside the store (a symbolic link)")
        return target

    def put(self, path: str, data: bytes) -> None:
        target = self._file(path)
        self._available()
        self._contained(target, path)
        try:
            created = create_exclusive_atomic(target, data)
        except PermissionError as exc:
            raise NoAccess(f"cannot write to folder store {self.root}: {exc.strerror}") from None
        except OSError as exc:
            raise Offline(f"cannot write to folder store {self.root}: {exc.strerror}") from None
        if not created:
            try:
                existing = read_bytes(target)
            except OSError as exc:
                raise Offline(f"cannot read {path} in folder store {self.root}: {exc.strerror}") from None
            if existing != data:
                raise Conflict(f"{path} already exists in the store with different content")

    def get(self, path: str) -> bytes:
        target = self._file(path)
        if not self._inside(target):
            raise NotFound(f"{path} is not in the store")
        try:
            return read_bytes(target)
        except FileNotFoundError:
            raise NotFound(f"{path} is not in the store") from None
        except IsADirectoryError:
            raise NotFound(f"{path} is not in the store") from None
        except PermissionError as exc:
            raise NoAccess(f"cannot read {path} in folder store {self.root}: {exc.strerror}") from None
        except OSError as exc:
            raise Offline(f"cannot read {path} in folder store {self.root}: {exc.strerror}") from None

    def info(self, path: str) -> ObjectInfo | None:
        target = self._file(path)
        if not self._inside(target):
            return None
        try:
            st = os.stat(target)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise Offline(f"cannot reach {path} in folder store {self.root}: {exc.strerror}") from None
        if not os.path.isfile(target):
            return None
        return ObjectInfo(path, st.st_size)

    def list(self, prefix: str) -> list[ObjectInfo]:
        base = self._file(prefix)
        self._available()
        out: list[ObjectInfo] = []
        if not os.path.exists(base):
            return out
        self._contained(os.path.join(base, "x"), prefix)

        def onerror(exc: OSError) -> None:
            raise exc

        try:
            for dirpath, dirnames, filenames in os.walk(base, onerror=onerror, followlinks=False):
                dirnames[:] = [d for d in dirnames if not d.startswith(".")]
                rel_dir = os.path.relpath(dirpath, self.root).replace(os.sep, "/")
                for name in filenames:
                    if name.startswith(".") or name.startswith(TMP_PREFIX):
                        continue
                    full = os.path.join(dirpath, name)
                    if os.path.islink(full):
                        continue
                    out.append(ObjectInfo(f"{rel_dir}/{name}", os.stat(full).st_size))
        except OSError as exc:
            raise Offline(f"cannot list {prefix} in folder store {self.root}: {exc.strerror}") from None
        out.sort(key=lambda o: o.path)
        return out
