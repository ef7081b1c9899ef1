"""What a project's notes cache holds, by file name, kept in a file beside it: one read instead of a listing.

A refresh compares the store's names with the cache's as sets (replica/fetch_plan.py), and at 100k notes listing
the cache folder cost as much as listing the store's (issue W, item 1). `names` in the project's cache folder
holds the names in `notes/` (hidden ones aside) and the folder signature (store/dirwatch.py) they are true
for. A reader takes them only while the folder's signature is that one. A writer records a change only when
the names it started from were true and its own writes were the folder's only change since (`Session`);
anything else that changes the folder (a person, a crash half-way) moves the signature, so the next reader
lists the folder and records what it found.

The file: a header line (format, filesystem), the names one per line, then change records, each a line
starting with NUL: {"from": signature, "to": signature, "add": [...], "drop": [...]}, the first with no
"from". Each record must start where the one before ended, or the file is not read. A small change (a
save, a note that arrived) is appended as one record, O(change); a large one, or many records, rewrite the
file. A `Session` is one process's writes, kept apart from other agentmem writers' (see there); `Cached` is
one refresh's view (the names, from the file or listed, and its session).
"""

from __future__ import annotations

import json
import os
from itertools import filterfalse

from agentmem.fsutil import read_bytes, write_atomic
from agentmem.paths import NAMES_FILE, NAMES_GEN, NAMES_LOCK, notes_folder
from agentmem.store import dirwatch

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see paths.py)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

MAX_RECORDS = 64  # appended records a reader parses before the file is written whole again
APPEND_MAX = 256  # names a change may carry in an appended record; a larger one rewrites the file
_TAIL = 64 * 1024  # bytes read from the end of the file to find the last record before appending


def _path(pdir: str) -> str:
    return os.path.join(pdir, NAMES_FILE)


def _sig(value: object) -> list | None:
    return value if isinstance(value, list) and len(value) == 5 else None


def read(pdir: str, sig: list | None) -> tuple[list[str], bool] | None:
    """(the names in the notes folder, whether a `.json` file is among them) if the kept file is true for the
    folder signature `sig`; else None. A list, not a set: a set of 100k fresh names costs as much again, and
    the callers compare with sets of their own."""
    if sig is None:
        return None
    try:
        data = read_bytes(_path(pdir))
    except OSError:
        return None
    start = data.find(b"\n") + 1  # the names are cut out once: 3 MB at 100k notes
    end = data.find(b"\0", start)
    if start <= 0 or end < start:
        return None
    try:
        if json.loads(data[:start]).get("v") != 2:
            return None
        names = data[start:end - 1].decode().split("\n") if end - 1 > start else []
        changes = [json.loads(line) for line in data[end + 1:].split(b"\n\0")]
    except (ValueError, AttributeError, UnicodeDecodeError):
        return None
    at, is_json = None, None
    delta: dict[str, bool] = {}  # name -> whether the records leave it there
    for change in changes:
        if not isinstance(change, dict) or change.get("from") != at or _sig(change.get("to")) is None:
            return None
        if at is None:
            is_json = bool(change.get("json"))
        else:
            more, less = change.get("add"), change.get("drop")
            if not isinstance(more, list) or not isinstance(less, list):
                return None
            delta.update(dict.fromkeys(less, False))
            delta.update(dict.fromkeys(more, True))
            is_json = is_json or any(isinstance(n, str) and n.endswith(".json") for n in more)
        at = change["to"]
    if at != sig:
        return None
    if delta:  # walked in C: no Python step per name
        names = [*filterfalse(delta.__contains__, names), *(n for n, there in delta.items() if there)]
    return names, bool(is_json)


def write(pdir: str, sig: list, names: set[str], fs_type: str) -> None:
    """Keep `names` as the notes folder's at signature `sig`, the file written whole (derived: a failure
    only costs the next refresh a listing)."""
    kept = [n for n in names if n and "\n" not in n and "\0" not in n]  # neither is ever a note's name
    head = json.dumps({"v": 2, "fs": [sig[0], fs_type]}).encode()
    first = json.dumps({"from": None, "to": sig, "json": any(n.endswith(".json") for n in kept)}).encode()
    try:
        write_atomic(_path(pdir), head + b"\n" + "\n".join(kept).encode() + b"\n\0" + first + b"\n", durable=False)
    except OSError:
        pass


def append(pdir: str, before: list, after: list, added: set[str], removed: set[str]) -> bool:
    """Record that the notes folder went from `before` to `after` by adding `added` and removing `removed`,
    if the kept file ends at `before` and has room for another record; True if recorded."""
    if len(added) + len(removed) > APPEND_MAX or any("\n" in n or "\0" in n for n in added | removed):
        return False
    try:
        with open(_path(pdir), "rb") as fh:
            fh.seek(max(0, fh.seek(0, os.SEEK_END) - _TAIL))
            tail = fh.read()
        cut = tail.rfind(b"\n\0")
        last = json.loads(tail[cut + 2:]) if cut >= 0 and tail.endswith(b"\n") else None
        if not isinstance(last, dict) or last.get("to") != before or not isinstance(last.get("n", 0), int) \
                or last.get("n", 0) >= MAX_RECORDS:
            return False
        record = {"from": before, "to": after, "add": sorted(added), "drop": sorted(removed), "n": last.get("n", 0) + 1}
        with open(_path(pdir), "ab") as fh:  # one write at the end: a reader sees it whole or not at all
            fh.write(b"\0" + json.dumps(record).encode() + b"\n")
    except (OSError, ValueError):
        return False
    return True


def forget(pdir: str) -> None:
    try:
        os.unlink(_path(pdir))
    except FileNotFoundError:
        pass


def fs_type(pdir: str, ndir: str) -> str:
    """The notes folder's filesystem type: the kept file's while the device is the same (mountinfo costs a read)."""
    try:
        with open(_path(pdir), "rb") as fh:
            fs = json.loads(fh.readline()).get("fs")
    except (OSError, ValueError, AttributeError):
        fs = None
    try:
        dev = os.stat(ndir).st_dev
    except OSError:
        return "unknown"
    if isinstance(fs, list) and len(fs) == 2 and fs[0] == dev and isinstance(fs[1], str):
        return fs[1]
    return dirwatch.filesystem_type(ndir)


class Session:
    """One process's writes to a project's notes cache folder, from before the first to after the last, kept
    apart from every other agentmem writer's so that the kept names (and the index's folder time) can follow
    them without a listing.

    Writers take turns at `names.gen` (an exclusive lock held a moment) to begin and to end. Beginning, a
    writer bumps the generation in it, holds `names.lock` shared until it ends (the lock goes with a crashed
    process), and waits until the folder's time is `dirwatch.granule()` old, so its writes stamp a time no
    recorded signature carries. A writer that found no other writer holding `names.lock` (`maintains`) may,
    ending, record the folder's new signature: only if the generation is still its own (no writer began
    since; those already under way when it began made it not a maintainer). Writes agentmem does not make
    (a person's, a crash's) move the signature, so readers list again.
    """

    def __init__(self, pdir: str) -> None:
        self.pdir, self.ndir = pdir, notes_folder(pdir)
        try:
            os.makedirs(self.ndir, exist_ok=True)  # a new cache: its first names are kept too
        except OSError:
            pass  # a read-only sandbox: nothing is kept, nothing fails
        self.fs_type = fs_type(pdir, self.ndir)
        self.before: list | None = None  # the folder's signature at the start, when this session maintains
        self.gen = ""
        self.lock = -1
        if not (dirwatch.trusted_type(self.fs_type) and self.fs_type in dirwatch.FINE_TYPES):
            return  # folder times that cannot be trusted to a tick: readers list, nothing to keep
        try:
            import fcntl

            self.lock = os.open(os.path.join(pdir, NAMES_LOCK), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            with _turn(pdir) as state:
                try:
                    fcntl.flock(self.lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    alone = True
                except BlockingIOError:
                    alone = False
                fcntl.flock(self.lock, fcntl.LOCK_SH)  # from EX: no writer begins while this one has the turn
                self.gen = os.urandom(8).hex()
                state.write(self.gen)
                sig = dirwatch.settled_signature(self.ndir)
                self.before = sig if alone and sig is not None else None
        except (OSError, ImportError):
            self.close()
            self.before = None

    @property
    def maintains(self) -> bool:
        return self.before is not None

    def end(self, added: Iterable[str], removed: Iterable[str], record: Callable[[list], object] | None = None,
            *, names: Callable[[], set[str]] | None = None) -> list | None:
        """After this session's writes (the file names `added` and `removed`): when they were the folder's only
        change, the folder's signature now, with the change recorded in the kept names (appended; with
        `names`, the folder's names before them, written whole when appending is not possible) and
        `record(after)` called while no writer can begin (the index's folder time); else None."""
        if not self.maintains or self.before is None:
            self.close()
            return None
        before = self.before
        try:
            with _turn(self.pdir) as state:
                if state.read() != self.gen:
                    return None  # another writer began since this one did
                after = dirwatch.signature(self.ndir)
                if after is None:
                    return None
                added, removed = set(added), set(removed)
                if after != before and not append(self.pdir, before, after, added, removed) and names is not None:
                    write(self.pdir, after, (names() - removed) | added, self.fs_type)
                elif after == before and names is not None and read(self.pdir, after) is None:
                    write(self.pdir, after, names(), self.fs_type)
                if record is not None:
                    record(after)
                return after
        except OSError:
            return None
        finally:
            self.close()

    def close(self) -> None:
        if self.lock >= 0:
            os.close(self.lock)  # releases names.lock
            self.lock = -1


class _turn:  # noqa: N801 - used like a function: `with _turn(pdir) as state:`
    """`names.gen` held exclusively: the moment in which a writer begins or ends."""

    def __init__(self, pdir: str) -> None:
        self.path = os.path.join(pdir, NAMES_GEN)

    def __enter__(self) -> _turn:
        import fcntl

        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(self.fd)
            raise
        return self

    def read(self) -> str:
        return os.pread(self.fd, 64, 0).decode("ascii", "replace")

    def write(self, gen: str) -> None:
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, gen.encode(), 0)

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)  # releases the lock


class Cached:
    """One refresh's view of a project's notes cache folder: `names` (hidden ones aside unless `listed`),
    `json` (whether a `.json` file is among them), `listed` (True when the folder was listed, temp files
    included), read when first asked (a refresh told its changes by a feed never asks), and the session of
    the refresh's writes (`session`)."""

    def __init__(self, pdir: str) -> None:
        self.session = Session(pdir)
        self._names: list[str] | set[str] | None = None
        self.json = self.listed = False

    @property
    def names(self) -> list[str] | set[str]:
        if self._names is None:
            ndir = self.session.ndir
            kept = read(self.session.pdir, self.session.before or dirwatch.signature(ndir))
            self.listed = kept is None
            if kept is None:
                try:
                    self._names = set(os.listdir(ndir))
                except FileNotFoundError:
                    self._names = set()
                self.json = ".json" in "\n".join(self._names)  # one scan in C
            else:
                self._names, self.json = kept
        return self._names

    @property
    def before(self) -> list | None:
        return self.session.before

    def end(self, added: Iterable[str], removed: Iterable[str],
            record: Callable[[list], object] | None = None) -> list | None:
        """`Session.end`; the names are written whole, when a record cannot be appended, only if this refresh
        read them."""
        def names() -> set[str]:
            return {n for n in self.names if not n.startswith(".")} if self.listed else set(self.names)

        return self.session.end(added, removed, record, names=names if self._names is not None else None)

    def close(self) -> None:
        self.session.close()
