"""The storage interface every backend implements, and the object-path rules they share.

INV append-only: `put` of bytes to a path that already holds the same bytes is a
no-op; a path that holds different bytes is never replaced (Conflict). `delete` exists
for one purpose, a purge (a note that must not exist); nothing else calls it.
INV complete-listing: `list` returns every object under a prefix or raises; it
never returns a partial listing as if it were complete.
INV store-identity: a store that is not there (an unmounted drive, a replaced
folder, a vanished bucket) raises; it is never answered as an empty store.
"""

from __future__ import annotations

import re
import zlib

from agentmem import patterns
from agentmem.errors import InvalidInput

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see paths.py)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

# A path segment: no separators, no leading dot (so no `..`, no hidden temp files),
# printable ASCII letters, digits and a few punctuation marks.
_SEGMENT = patterns.compile(r"^[A-Za-z0-9_][A-Za-z0-9._@+-]{0,199}$")
MAX_PATH_LENGTH = 1024
# Bytes. The most `get` reads unless told less: agentmem writes nothing larger than 1 MiB
# (a skill file; notes are <= 64 KiB), so anything far beyond is not ours.
MAX_OBJECT = 16 * 1024 * 1024


def check_object_path(path: str) -> str:
    """Return `path` if it is a safe relative object path, else raise InvalidInput."""
    if not isinstance(path, str) or not path or len(path) > MAX_PATH_LENGTH:
        raise InvalidInput(f"invalid object path {path!r}")
    parts = path.split("/")
    for part in parts:
        if not _SEGMENT.match(part):
            raise InvalidInput(f"invalid object path {path!r}: bad segment {part!r}")
    return path


_KEYS: dict[tuple[str, str], str] = {}  # (kind, location) -> StoreDescription.key, made once a process


class StoreDescription:
    """Where memory lives, as saved in config and in pending entries. Never holds a credential.

    kind: "folder" (location = absolute folder path) or "bucket" (location = "namespace/name").
    `team`: described as a member's team store (config.py `scoped("team")`), which setup never creates:
    only what a store tells a person to do depends on it, never its identity (not compared, not saved).
    Plain class rather than a dataclass: the per-turn paths avoid importing dataclasses (~8 ms).
    """

    __slots__ = ("kind", "location", "team")

    def __init__(self, kind: str, location: str, *, team: bool = False):
        self.kind = kind
        self.location = location
        self.team = team

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StoreDescription) and (self.kind, self.location) == (other.kind, other.location)

    def __hash__(self) -> int:
        return hash((self.kind, self.location))

    def __repr__(self) -> str:
        return f"StoreDescription({self.kind!r}, {self.location!r})"

    @property
    def key(self) -> str:
        """A stable, filesystem-safe name for this store, used for its cache folder."""
        # Made once per store a process: a search asks for it about 26 times, each a re.sub.
        known = _KEYS.get((self.kind, self.location))
        if known is None:
            # crc32 rather than hashlib: this runs on every search and hashlib's import costs ~3 ms;
            # with the readable tail beside it, two stores of one machine never share a key in practice.
            digest = f"{zlib.crc32(f'{self.kind}:{self.location}'.encode()):08x}"
            tail = re.sub(r"[^A-Za-z0-9._-]+", "-", self.location).strip("-.")[-40:] or "store"
            known = _KEYS[(self.kind, self.location)] = f"{self.kind}-{tail}-{digest}"
        return known

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

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ObjectInfo) and (self.path, self.size) == (other.path, other.size)

    def __hash__(self) -> int:
        return hash((self.path, self.size))

    def __repr__(self) -> str:
        return f"ObjectInfo({self.path!r}, {self.size})"


class Listed:
    """An object named by `Store.changes`: its path, and its size where the store said it for free."""

    __slots__ = ("path", "size")

    def __init__(self, path: str, size: int | None):
        self.path, self.size = path, size

    def __repr__(self) -> str:
        return f"Listed({self.path!r}, {self.size})"


class Changes:
    """What changed below a prefix since the state a `token` describes (what `Store.changes` returns).

    kind SAME: nothing changed. DELTA: exactly `added` (Listed: size None when unknown) and
    `removed` (paths) changed. FULL: `listing` is the complete listing (INV complete-listing); the
    caller reconciles against it. `token` is the state to hand back next time, once every change
    was applied: a caller that stops part-way keeps its previous token, so nothing is skipped.
    `how` says in a few words how the store was asked (for reports and benchmarks). `warnings`: lines
    about the store a person must hear on every answer (a bucket that became public).
    """

    SAME, DELTA, FULL = "same", "delta", "full"
    __slots__ = ("kind", "_listing", "added", "removed", "token", "how", "warnings", "names", "prefix", "regular")

    def __init__(self, kind: str, token: dict, how: str, *, listing: list[Listed] | None = None,
                 added: list[Listed] | None = None, removed: list[str] | None = None,
                 warnings: list[str] | None = None, names: set[str] | None = None, prefix: str = "",
                 regular: Callable[[Iterable[str]], set[str]] | None = None):
        self.kind, self.token, self.how = kind, token, how
        self.warnings = warnings if warnings is not None else []
        self._listing = listing
        self.added = added if added is not None else []
        self.removed = removed if removed is not None else []
        # A FULL answer may instead name the objects directly below `prefix` by file name alone (a folder
        # store: one os.listdir, compared by the caller as sets, so that a change costs what it changed and
        # not one Python step per note; issue 26, item 8). `regular(names)`: those of `names` that are
        # objects the store would list (not links or folders); the caller asks it for the names new to it.
        self.names, self.prefix, self.regular = names, prefix, regular

    @property
    def listing(self) -> list[Listed]:
        """The complete listing (FULL); built from `names` when the store gave names alone."""
        if self._listing is None:
            if self.names is None:
                self._listing = []
            else:
                kept = self.regular(self.names) if self.regular is not None else self.names
                self._listing = [Listed(f"{self.prefix}/{name}", None) for name in sorted(kept)]
        return self._listing

    def __repr__(self) -> str:
        count = len(self.names) if self.names is not None else len(self.listing)
        return f"Changes({self.kind!r}, {self.how!r}, +{len(self.added)} -{len(self.removed)} ={count})"


class Store:
    """The interface each backend provides (FolderStore, BucketStore); documentation, not a base class.

    `identity` is what proves the store is the one this machine knew: a folder store's marker ID,
    a bucket's creation time. A backend opened with an expected identity raises Offline when the
    store at the location is another one (or none), and calls `remember(found)` the first time it
    proves an identity no one expected.
    """

    description: StoreDescription
    identity: str | None

    def put(self, path: str, data: bytes) -> None:
        """Store `data` at `path` atomically and append-only (see INV append-only)."""
        raise NotImplementedError

    def get(self, path: str, limit: int = MAX_OBJECT) -> bytes:
        """Return the bytes at `path`; NotFound if there are none, Unreadable if they are not an object
        agentmem could have written (not a regular file, larger than `limit`, not readable)."""
        raise NotImplementedError

    def info(self, path: str) -> ObjectInfo | None:
        """Return the object's info, or None if it does not exist."""
        raise NotImplementedError

    def list(self, prefix: str) -> list[ObjectInfo]:
        """Every object whose path starts with `prefix` + "/" (recursively), with sizes, or raise."""
        raise NotImplementedError

    def delete(self, path: str) -> bool:
        """Remove the object at `path`; True if there was one. The one exception to append-only, used only
        by `agentmem purge` for a note that must not exist. Raises like `put`."""
        raise NotImplementedError

    def changes(self, prefix: str, token: dict | None, *, wait: float | None = None) -> Changes:
        """The notes directly below `prefix` that changed since `token` (None: never looked), at a
        cost that does not grow with the store when nothing changed. Raises like `list`.

        `wait`: the seconds the caller waits for the store to answer the check (a search); a bucket
        that has not answered by then raises NoAnswer. A folder store's check is a stat or a
        listing of the folder, bounded by the budget alone."""
        raise NotImplementedError
