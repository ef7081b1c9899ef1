"""The storage interface every backend implements, and the object-path rules they share.

INV append-only: `put` of bytes to a path that already holds the same bytes is a
no-op; a path that holds different bytes is never replaced (Conflict).
INV complete-listing: `list` returns every object under a prefix or raises; it
never returns a partial listing as if it were complete.
"""

from __future__ import annotations

import re
import zlib

from agentmem.errors import InvalidInput

# A path segment: no separators, no leading dot (so no `..`, no hidden temp files),
# printable ASCII letters, digits and a few punctuation marks.
_SEGMENT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._@+-]{0,199}$")
MAX_PATH_LENGTH = 1024


def check_object_path(path: str) -> str:
    """Return `path` if it is a safe relative object path, else raise InvalidInput."""
    if not isinstance(path, str) or not path or len(path) > MAX_PATH_LENGTH:
        raise InvalidInput(f"invalid object path {path!r}")
    parts = path.split("/")
    for part in parts:
        if not _SEGMENT.match(part):
            raise InvalidInput(f"invalid object path {path!r}: bad segment {part!r}")
    return path


class StoreDescription:
    """Where memory lives, as saved in config and in pending entries. Never holds a credential.

    kind: "folder" (location = absolute folder path) or "bucket" (location = "namespace/name").
    Plain class rather than a dataclass: the per-turn paths avoid importing dataclasses (~8 ms).
    """

    __slots__ = ("kind", "location")

    def __init__(self, kind: str, location: str):
        self.kind = kind
        self.location = location

    def __eq__(self, other) -> bool:
        return isinstance(other, StoreDescription) and (self.kind, self.location) == (other.kind, other.location)

    def __hash__(self) -> int:
        return hash((self.kind, self.location))

    def __repr__(self) -> str:
        return f"StoreDescription({self.kind!r}, {self.location!r})"

    @property
    def key(self) -> str:
        """A stable, filesystem-safe name for this store, used for its cache folder."""
        # crc32 rather than hashlib: this runs on every search and hashlib's import costs ~3 ms;
        # with the readable tail beside it, two stores of one machine never share a key in practice.
        digest = f"{zlib.crc32(f'{self.kind}:{self.location}'.encode()):08x}"
        tail = re.sub(r"[^A-Za-z0-9._-]+", "-", self.location).strip("-.")[-40:] or "store"
        return f"{self.kind}-{tail}-{digest}"

    def label(self) -> str:
        return f"hf://buckets/{self.location}" if self.kind == "bucket" else self.location

    def to_dict(self) -> dict:
        return {"kind": self.kind, "location": self.location}

    @classmethod
    def from_dict(cls, data: dict) -> StoreDescription:
        kind, location = data.get("kind"), data.get("location")
        if kind not in ("folder", "bucket") or not isinstance(location, str) or not location:
            raise InvalidInput(f"invalid store description {data!r}")
        return cls(kind, location)


class ObjectInfo:
    __slots__ = ("path", "size")

    def __init__(self, path: str, size: int):
        self.path = path  # relative to the store root, "/"-separated
        self.size = size

    def __eq__(self, other) -> bool:
        return isinstance(other, ObjectInfo) and (self.path, self.size) == (other.path, other.size)

    def __hash__(self) -> int:
        return hash((self.path, self.size))

    def __repr__(self) -> str:
        return f"ObjectInfo({self.path!r}, {self.size})"


class Store:
    """The interface each backend provides (FolderStore, BucketStore); documentation, not a base class."""

    description: StoreDescription

    def put(self, path: str, data: bytes) -> None:
        """Store `data` at `path` atomically and append-only (see INV append-only)."""
        raise NotImplementedError

    def get(self, path: str) -> bytes:
        """Return the bytes at `path`; raise NotFound if there are none."""
        raise NotImplementedError

    def info(self, path: str) -> ObjectInfo | None:
        """Return the object's info, or None if it does not exist."""
        raise NotImplementedError

    def list(self, prefix: str) -> list[ObjectInfo]:
        """Every object whose path starts with `prefix` + "/" (recursively), or raise."""
        raise NotImplementedError


def open_store(desc: StoreDescription, *, timeout: float | None = None) -> Store:
    """Open the store a description names. `timeout` bounds a bucket store's network time in seconds.

    The bucket backend is imported only when a bucket store is opened, so the
    folder-store and cache-only paths never import huggingface_hub.
    """
    if desc.kind == "folder":
        from agentmem.store.folder import FolderStore

        return FolderStore(desc.location)  # type: ignore[return-value]
    if desc.kind == "bucket":
        from agentmem.store.bucket import BucketStore  # heavy: huggingface_hub

        return BucketStore(desc.location, timeout=timeout)  # type: ignore[return-value]
    raise InvalidInput(f"unknown store kind {desc.kind!r}; expected 'folder' or 'bucket'")
