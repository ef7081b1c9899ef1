"""The folder store: memory in a plain directory (local disk, a synced or a network drive).

The embedded default: it needs no account. Writes are atomic and append-only
through a hard link from a complete temp file, so concurrent writers on one
filesystem never clobber each other and readers never see a partial object.

INV store-identity: a folder store carries a marker (`.agentmem-store`, an ID
written once when the store is created). A missing root, a missing marker where
this machine saw one, or another store's marker is an unreachable store
(Offline): nothing is read as empty, and no write recreates the folder. A store
made before markers existed (no marker, and this machine never saw one) works as
before until `agentmem setup` marks it.

Every operation runs within the invocation's network budget (a hung network
drive makes it Offline, never a hang), and only regular files of object size are
read (a FIFO, a device or a huge file is Unreadable, never a hang or a
MemoryError).
"""

from __future__ import annotations

import os
import stat
import time

from agentmem import errors
from agentmem.errors import Command, Conflict, InvalidInput, NextStep, NoAccess, NotFound, Offline, Unreadable
from agentmem.fsutil import STALE_TEMP_SECONDS, TMP_PREFIX, create_exclusive_atomic
from agentmem.store import budget as network_budget
from agentmem.store import dirwatch, layout
from agentmem.store.base import MAX_OBJECT, Changes, Listed, ObjectInfo, StoreDescription, check_object_path
from agentmem.store.marker import MARKER, MARKER_LIMIT, create_store, read_marker, write_marker  # noqa: F401 - re-exported

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see paths.py)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import TypeVar

    from agentmem.store.witness import Watched

    T = TypeVar("T")


def new_store_hint(team: bool = False) -> NextStep:
    """What to do about a folder store that is missing or not the one this machine used; `team`: a missing
    team's folder, which setup never creates (machine/team_access.py)."""
    if team:
        return NextStep("mount the drive or share that holds it and try again; a team's folder is created by "
                        "whoever shares it, never by setup")
    return NextStep("mount the drive or share that holds it and try again; if a new store there is what you "
                    "want, run `{}`", Command("setup", "--new-store"))


_LISTED_SUFFIXES = (layout.NOTE_SUFFIX, layout.RECORD_SUFFIX)  # notes, and the records beside them (note/records.py)
_Objects = list[ObjectInfo]  # the method `list` hides the builtin inside the class
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
_OBJECT_ERRNOS = {"EACCES", "EPERM", "ELOOP", "ENXIO", "EISDIR"}  # about this object, not the store


class FolderStore:
    # A batch may be read on another thread while the caller works (replica/catching_up.py read_ahead): every
    # call keeps to this store's own budget, not a budget held by the calling thread as the Hub's requests do.
    reads_ahead = True

    def __init__(self, location: str | os.PathLike, *, timeout: float | None = None, identity: str | None = None,
                 remember: Callable[[str], object] | None = None, team: bool = False) -> None:
        # os.path, not pathlib: a search that refreshes from a folder store stays off pathlib's import.
        root = os.path.expanduser(os.fspath(location))
        if not os.path.isabs(root):
            raise InvalidInput(f"a folder store needs an absolute path, not {str(location)!r}")
        self.root = os.path.normpath(root)
        self.description = StoreDescription("folder", self.root, team=team)
        self.expected = identity
        self.identity: str | None = None
        self._remember = remember
        self._checked = False
        self._timeout = timeout
        self._budget: network_budget.Budget | None = None
        self._stuck = False
        self._fs: str | None = None  # the folder's filesystem type, once a change check has read it

    # -- the budget ---------------------------------------------------------------------

    def _bounded(self, fn: Callable[..., T], *args: object) -> T:
        """Run one operation on the folder within the invocation's budget (a hung drive is Offline)."""
        if self._stuck:
            raise Offline(f"folder store {self.root} stopped answering earlier in this command")
        if self._budget is None:
            self._budget = network_budget.Budget(network_budget.resolve_timeout(self._timeout))
        budget = self._budget
        try:
            result = network_budget.call_within(budget, fn, *args)
        except errors.BudgetSpent:
            self._stuck = True
            if self._fs in dirwatch.LOCAL_TYPES:  # a local disk does not hang: it was busy, or there was much to read
                raise Offline(f"folder store {self.root} (a local {self._fs} disk) did not finish within "
                              f"{budget.seconds:g} s", hint=NextStep("`{}` fetches a long catch-up in one go",
                                                                     Command("sync"))) from None
            raise Offline(f"folder store {self.root} did not answer within {budget.seconds:g} s "
                          "(a network drive that hangs?)") from None
        if self.identity is not None and self.expected is None and self._remember is not None:
            remember, self._remember = self._remember, None
            remember(self.identity)
        return result

    # -- identity -----------------------------------------------------------------------

    def _check(self) -> None:
        """Prove the folder is the store (see INV store-identity). Runs once per opened store."""
        if self._checked:
            return
        try:
            st = os.stat(self.root)
        except FileNotFoundError:
            raise Offline(f"folder store {self.root} is not there (an unmounted drive or a moved folder?)",
                          hint=new_store_hint(self.description.team)) from None
        except OSError as exc:
            raise _classify(exc, f"cannot reach folder store {self.root}") from None
        if not stat.S_ISDIR(st.st_mode):
            raise InvalidInput(f"folder store {self.root} is not a directory")
        found = read_marker(self.root)
        if found is None and self.expected is not None:
            raise Offline(f"folder store {self.root} has no {MARKER} marker any more: the folder was replaced "
                          "or is not the store this machine used", hint=new_store_hint())
        if found is not None and self.expected is not None and found != self.expected:
            raise Offline(f"folder store {self.root} is another store (marker {found[:12]}, this machine "
                          f"used {self.expected[:12]})", hint=new_store_hint())
        self.identity = found
        self._checked = True

    # -- paths --------------------------------------------------------------------------

    def _file(self, path: str) -> str:
        return os.path.join(self.root, *check_object_path(path).split("/"))

    def _inside(self, target: str) -> bool:
        """False when a symbolic link planted in the store leads `target` outside it."""
        root = os.path.realpath(self.root)
        real = os.path.realpath(target)
        return real == root or real.startswith(root.rstrip(os.sep) + os.sep)

    def _contained(self, target: str, path: str) -> str:
        if not self._inside(os.path.dirname(target)):
            raise errors.RemoteError(f"{path} in folder store {self.root} leads outside the store (a symbolic link)")
        return target

    def _make_below_root(self, folder: str) -> None:
        """Create `folder`'s missing parts below the root, never the root itself (INV store-identity)."""
        rel = os.path.relpath(folder, self.root)
        current = self.root
        for part in [] if rel == "." else rel.split(os.sep):
            current = os.path.join(current, part)
            try:
                os.mkdir(current)
            except FileExistsError:
                pass

    # -- Store --------------------------------------------------------------------------

    def put(self, path: str, data: bytes) -> None:
        target = self._file(path)
        self._bounded(self._put, path, target, data)

    def _put(self, path: str, target: str, data: bytes) -> None:
        self._check()
        self._contained(target, path)
        try:
            self._make_below_root(os.path.dirname(target))
            created = create_exclusive_atomic(target, data)
        except PermissionError as exc:
            raise NoAccess(f"cannot write to folder store {self.root}: {exc.strerror}") from None
        except OSError as exc:
            raise Offline(f"cannot write to folder store {self.root}: {exc.strerror}") from None
        if not created:
            try:
                existing = self._read(path, target, MAX_OBJECT)
            except NotFound:
                raise Offline(f"{path} in folder store {self.root} appeared and vanished during the write") from None
            if existing != data:
                raise Conflict(f"{path} already exists in the store with different content")

    def delete(self, path: str) -> bool:
        """Unlink the object (a purge); True if it was there. The folder's signature moves, so every
        machine's next search lists it and drops the note."""
        target = self._file(path)
        return self._bounded(self._delete, path, target)

    def _delete(self, path: str, target: str) -> bool:
        self._check()
        self._contained(target, path)
        try:
            st = os.lstat(target)
        except (FileNotFoundError, NotADirectoryError):
            return False
        except OSError as exc:
            raise _classify(exc, f"cannot reach {path} in folder store {self.root}") from None
        if not stat.S_ISREG(st.st_mode):
            raise Unreadable(f"{path} in folder store {self.root} is not a regular file; not deleted")
        try:
            os.unlink(target)
        except FileNotFoundError:
            return False
        except PermissionError as exc:
            raise NoAccess(f"cannot delete {path} in folder store {self.root}: {exc.strerror}") from None
        except OSError as exc:
            raise Offline(f"cannot delete {path} in folder store {self.root}: {exc.strerror}") from None
        return True

    def get(self, path: str, limit: int = MAX_OBJECT) -> bytes:
        target = self._file(path)
        return self._bounded(self._get, path, target, limit)

    def get_many(self, paths: list[str], limit: int = MAX_OBJECT) -> dict[str, bytes | errors.AgentmemError]:
        """What `get` would return or raise for each of `paths`, read in one call within the budget: a
        catch-up reads a batch of notes without a worker thread each (0.7 ms a note; issue W, item 3)."""
        targets = [(path, self._file(path)) for path in paths]
        return self._bounded(self._get_many, targets, limit)

    def _get_many(self, targets: list[tuple[str, str]], limit: int) -> dict[str, bytes | errors.AgentmemError]:
        self._check()
        out: dict[str, bytes | errors.AgentmemError] = {}
        inside: dict[str, bool] = {}  # each folder resolved once: the realpath of every file was most of a read
        for path, target in targets:
            folder = os.path.dirname(target)
            if folder not in inside:
                inside[folder] = self._inside(folder)
            try:
                # A file is opened without following a link (O_NOFOLLOW), so in a folder inside the store it is
                # the store's; a link is read as `get` reads it, to say what it is.
                out[path] = self._read(path, target, limit) if inside[folder] else self._get(path, target, limit)
            except Unreadable as exc:
                try:
                    is_link = stat.S_ISLNK(os.lstat(target).st_mode)
                except OSError:
                    is_link = False
                try:
                    out[path] = self._get(path, target, limit) if is_link else exc
                except errors.AgentmemError as again:
                    out[path] = again
            except errors.AgentmemError as exc:
                out[path] = exc
        return out

    def _get(self, path: str, target: str, limit: int) -> bytes:
        self._check()
        if not self._inside(target):
            raise NotFound(f"{path} is not in the store")
        return self._read(path, target, limit)

    def _read(self, path: str, target: str, limit: int) -> bytes:
        """The bytes of a regular file of at most `limit` bytes. Opening never blocks (O_NONBLOCK: a FIFO)."""
        where = f"{path} in folder store {self.root}"
        try:
            fd = os.open(target, _READ_FLAGS)
        except (FileNotFoundError, NotADirectoryError):
            raise NotFound(f"{path} is not in the store") from None
        except OSError as exc:
            raise _classify(exc, f"cannot read {where}") from None
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                raise NotFound(f"{path} is not in the store")
            if not stat.S_ISREG(st.st_mode):
                raise Unreadable(f"{where} is not a regular file ({_file_kind(st.st_mode)}); not read")
            if st.st_size > limit:
                raise Unreadable(f"{where} is too large ({st.st_size} bytes, over {_size(limit)}); not read",
                                 too_large=True)
            chunks, total = [], 0
            while True:
                chunk = os.read(fd, min(1 << 20, limit + 1 - total))
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
                if total > limit:
                    raise Unreadable(f"{where} is too large (over {_size(limit)}); not read", too_large=True)
            return b"".join(chunks)
        except OSError as exc:
            raise _classify(exc, f"cannot read {where}") from None
        finally:
            os.close(fd)

    def info(self, path: str) -> ObjectInfo | None:
        target = self._file(path)
        return self._bounded(self._info, path, target)

    def _info(self, path: str, target: str) -> ObjectInfo | None:
        self._check()
        if not self._inside(target):
            return None
        try:
            st = os.stat(target, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise _classify(exc, f"cannot reach {path} in folder store {self.root}") from None
        return ObjectInfo(path, st.st_size) if stat.S_ISREG(st.st_mode) else None

    def sizes(self, paths: list[str]) -> dict[str, int]:
        """The sizes of those of `paths` that are regular files (one bounded call for all of them)."""
        folders: dict[str, str] = {}  # each folder's path checked once, then each name alone
        targets = []
        for path in paths:
            head, _, name = path.rpartition("/")
            if head not in folders:
                folders[head] = self._file(head) if head else self.root
            targets.append((path, os.path.join(folders[head], check_object_path(name))))
        return self._bounded(self._sizes, targets)

    def _sizes(self, targets: list[tuple[str, str]]) -> dict[str, int]:
        self._check()
        out = {}
        for path, target in targets:
            try:
                st = os.stat(target, follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                out[path] = st.st_size
        return out

    def list(self, prefix: str) -> list[ObjectInfo]:
        """Every regular file below `prefix/`, with its size. INV complete-listing."""
        base = self._file(prefix)
        return self._bounded(self._list, prefix, base)

    def _list(self, prefix: str, base: str) -> _Objects:
        self._check()
        if not os.path.isdir(base):
            return []  # nothing was ever written below this prefix
        self._contained(os.path.join(base, "x"), prefix)
        out: _Objects = []
        pending = [(base, prefix)]
        try:
            while pending:
                folder, rel = pending.pop()
                with os.scandir(folder) as entries:
                    for entry in entries:
                        if entry.name.startswith("."):
                            continue  # temp files, the marker, anything hidden
                        if entry.is_dir(follow_symlinks=False):
                            pending.append((entry.path, f"{rel}/{entry.name}"))
                        elif entry.is_file(follow_symlinks=False):
                            out.append(ObjectInfo(f"{rel}/{entry.name}", entry.stat(follow_symlinks=False).st_size))
        except OSError as exc:
            raise _classify(exc, f"cannot list {prefix} in folder store {self.root}", store_level=True) from None
        out.sort(key=lambda o: o.path)
        return out

    def changes(self, prefix: str, token: dict | None, *, wait: float | None = None) -> Changes:
        """One `stat` of the prefix's folder when nothing changed; its names otherwise (see dirwatch).
        `wait` is not applied: a big folder's listing may rightly take longer (see base.Store)."""
        base = self._file(prefix)
        return self._bounded(self._changes, prefix, base, token)

    def _changes(self, prefix: str, base: str, token: dict | None) -> Changes:
        self._check()
        now = time.time()  # before the stat: see dirwatch.next_token
        try:
            sig = dirwatch.signature(base)
        except OSError as exc:
            raise _classify(exc, f"cannot reach {prefix} in folder store {self.root}", store_level=True) from None
        fs_type = self._fs = dirwatch.known_type(token, sig, base if sig is not None else self.root)
        if dirwatch.unchanged(token, sig, fs_type):
            return Changes(Changes.SAME, token or {}, "unchanged (one stat)")
        from agentmem.store import journal  # only now: a search that finds nothing new makes its one stat alone

        # Where the journal ends, read before the signature the new token keeps: a link from it comes later
        mark = journal.cursor(base) if dirwatch.trusted_type(fs_type) and fs_type in dirwatch.FINE_TYPES else None
        if mark is not None and sig is not None and isinstance(token, dict) and token.get("settled") is True:
            followed = journal.follow(base, token.get("sig"), sig, token.get("journal"))  # type: ignore[arg-type]
            if followed is not None:  # other agentmem writers' witnessed saves, leading exactly to `sig`
                added, at = followed
                new = {"v": 1, "sig": sig, "seen": now, "settled": True, "fs": [sig[0], fs_type], "journal": at}
                return Changes(Changes.DELTA, new, f"journal ({len(added)} new)",
                               added=[Listed(layout.object_path(prefix, name), None) for name in added])
        pause = dirwatch.settle_wait(now, sig[2], fs_type) if sig is not None else 0.0
        if pause:  # changed a moment ago: a listing begun now would be done again by the next search
            time.sleep(pause)
        now = time.time()
        try:
            sig = dirwatch.signature(base)
        except OSError as exc:
            raise _classify(exc, f"cannot reach {prefix} in folder store {self.root}", store_level=True) from None
        new_token = dirwatch.next_token(token, sig, fs_type, now)
        if mark is not None:
            new_token["journal"] = mark
        how = "listing" if dirwatch.trusted_type(fs_type) else f"listing ({fs_type}: folder times not trusted)"
        names = self._names(prefix, base) if sig is not None else set()
        return Changes(Changes.FULL, new_token, how, names=names, prefix=prefix,
                       regular=lambda some: self._regular(base, some))

    def watch(self, prefix: str, token: dict | None) -> Watched | None:
        """A witness of this process's own writes below `prefix` (its own `put`s), begun before them. `seal`
        records them in the store's journal when they were the folder's only change (store/journal.py: other
        machines' next search follows them without a listing), and, when the change token `token` (what the
        last refresh kept) is settled and the folder was exactly as it saw it, gives the token that covers
        them too, so this machine's next search is one stat (issue W, item 1). None where nothing can be
        proved (no inotify, folder times not trusted to a tick)."""
        base = self._file(prefix)
        return self._bounded(self._watch, base, token)

    def _watch(self, base: str, token: dict | None) -> Watched | None:
        from agentmem.store.witness import Watched, Witness

        self._check()
        try:
            sig = dirwatch.signature(base)
        except OSError:
            return None
        if sig is None:
            return None
        witness = Witness(base, dirwatch.known_type(token, sig, base))
        if not witness.watching:
            witness.close()
            return None
        return Watched(witness, token)

    def _names(self, prefix: str, base: str) -> set[str]:
        """The note and record file names directly in `base` (and, where no name is hidden, any stray beside
        them: nothing looks at those): one os.listdir and no Python step per file (issue 26, item 8: 100k names
        cost ~4x more through scandir and a Listed each).
        Links and folders among them are told apart by `_regular`, asked only for names new to the caller.
        Sweeps stale temp files."""
        self._contained(os.path.join(base, "x"), prefix)
        try:
            every = os.listdir(base)
        except OSError as exc:
            raise _classify(exc, f"cannot list {prefix} in folder store {self.root}", store_level=True) from None
        if not every or min(every) >= "0":  # no hidden name (a temp file) to leave out or sweep, told in C
            return set(every)  # any stray that is no note or record among them is looked at by nothing
        out = {name for name in every if name.endswith(_LISTED_SUFFIXES) and not name.startswith(".")}
        temps = [name for name in every if name.startswith(TMP_PREFIX)] if len(out) != len(every) else []
        if temps:
            sweep_store_temp(base, temps)
        return out

    @staticmethod
    def _regular(base: str, names: Iterable[str]) -> set[str]:
        """Those of `names` in `base` that are not links or folders (FIFOs too: get() reports them)."""
        kept = set()
        for name in names:
            try:
                mode = os.lstat(os.path.join(base, name)).st_mode
            except OSError:
                continue  # gone since the listing
            if not stat.S_ISLNK(mode) and not stat.S_ISDIR(mode):
                kept.add(name)
        return kept


def sweep_store_temp(folder: str, names: list[str], older_than: float = STALE_TEMP_SECONDS) -> None:
    """Remove temp files a crashed writer left in a store folder, never one a live writer may own.

    Writers on other machines share the folder, so their process IDs mean nothing here and
    their clocks may differ: a temp file goes only when it is older than `older_than` both by
    this machine's clock and by the folder's own (its ctime, set by the same filesystem when a
    later entry changed). Best effort: a read-only share keeps its leftovers.
    """
    try:
        folder_ctime = os.stat(folder).st_ctime
    except OSError:
        return
    now = time.time()
    for name in names:
        path = os.path.join(folder, name)
        try:
            st = os.lstat(path)
            if stat.S_ISREG(st.st_mode) and now - st.st_mtime > older_than and folder_ctime - st.st_mtime > older_than:
                os.unlink(path)
        except OSError:
            continue


# -- helpers ------------------------------------------------------------------------------


def _classify(exc: OSError, what: str, *, store_level: bool = False) -> errors.AgentmemError:
    """An OSError as what it is: about one object (Unreadable), no access, or an unreachable store."""
    import errno

    name = errno.errorcode.get(exc.errno or 0, "")
    detail = f"{what}: {exc.strerror or name or type(exc).__name__}"
    if store_level:
        return NoAccess(detail) if isinstance(exc, PermissionError) else Offline(detail)
    if name in _OBJECT_ERRNOS:
        return Unreadable(detail)
    return Offline(detail)


def _file_kind(mode: int) -> str:
    for test, kind in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a link")):
        if test(mode):
            return kind
    return "a special file"


def _size(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MiB" if limit >= 1024 * 1024 and limit % (1024 * 1024) == 0 else f"{limit} bytes"
