"""Proof that a folder changed only by this process's own writes, so that what it knew of the folder before
still holds after them, without listing it again, and other machines can follow them (store/journal.py) (issue
W, item 1).

A `Witness` watches a folder (Linux inotify) from before this process reads its signature
(store/dirwatch.py) until after its own writes. `seal(ours)` then answers the folder's new signature if
every entry created, deleted or renamed there meanwhile is one of `ours` (or hidden: temp files are in no
listing), else None. What held at the first signature (a cached listing of names, an index current with
the folder, a settled change token) then holds at the new one with `ours` applied.

A change made after the seal must still move the signature, or a later reader would take the folder for the
one sealed. A change stamps the folder with the kernel's coarse clock, which lags real time by at most one
tick, so `seal` first waits until the folder's time is `dirwatch.granule()` old (a few ticks) and reads the
signature again: any later change lands a tick or more after it. Only on filesystems whose folder times are
trusted and fine-grained (dirwatch.FINE_TYPES); elsewhere, and wherever inotify cannot be had (not Linux,
the per-user limit of inotify instances reached), there is no witness and callers list as before.
"""

from __future__ import annotations

import os
import sys
import time

from agentmem.store import dirwatch

# inotify(7): what a watch of a folder reports
_MOVED_FROM, _MOVED_TO, _CREATE, _DELETE = 0x40, 0x80, 0x100, 0x200
_DELETE_SELF, _MOVE_SELF, _UNMOUNT, _OVERFLOW, _IGNORED = 0x400, 0x800, 0x2000, 0x4000, 0x8000
_ONLYDIR, _DONT_FOLLOW = 0x01000000, 0x02000000
# Not IN_ATTRIB: watching attributes makes the kernel mark every cached entry of the folder (20 ms at 100k
# names), and a change of attributes (the folder's own times, a file's mode) changes no name.
_WATCHED = _MOVED_FROM | _MOVED_TO | _CREATE | _DELETE | _DELETE_SELF | _MOVE_SELF
_NAMED = _MOVED_FROM | _MOVED_TO | _CREATE | _DELETE  # entries appearing or leaving: the listing changes
_ITSELF = _DELETE_SELF | _MOVE_SELF | _UNMOUNT | _OVERFLOW | _IGNORED  # the folder itself, or events lost
_NONBLOCK, _CLOEXEC = 0o4000, 0o2000000
_HEADER = 16  # struct inotify_event: int wd; uint32 mask, cookie, len; then len bytes of name
_libc: list = []  # [libc's inotify calls, or None where there are none], once looked up


class _Libc:
    """libc's inotify calls through `_ctypes`, the C module under `ctypes`: importing the `ctypes` package
    builds its dozens of C types: 6.7 M instructions more of a save than the C module alone
    (docs/benchmarks.md, "Per-turn commands at 100k"). Both calls take ints and a bytes path and answer an
    int, so they need no argument types, and an int is what a call answers when no result type is set."""

    def __init__(self) -> None:
        import _ctypes

        class Call(_ctypes.CFuncPtr):
            _flags_ = _ctypes.FUNCFLAG_CDECL

        # None: this process's own symbols, libc's among them (as ctypes.CDLL(None)); the stubs want a path
        self._handle = _ctypes.dlopen(None, _ctypes.RTLD_LOCAL)  # type: ignore[arg-type]
        # any object with a `_handle` serves where the stubs want a CDLL; AttributeError where libc has no inotify
        self.inotify_init1 = Call(("inotify_init1", self))  # type: ignore[arg-type]
        self.inotify_add_watch = Call(("inotify_add_watch", self))  # type: ignore[arg-type]


def _inotify() -> _Libc | None:
    """libc's inotify calls (loaded once and only here), or None where there are none."""
    if not _libc:
        try:
            _libc.append(_Libc())
        except Exception:  # noqa: BLE001 - a C module's private surface on another Python: no witness, and
            _libc.append(None)  # a caller without one lists the folder, which is always right
    return _libc[0]


class Witness:
    """Watches one folder's entries from construction until `seal` or `close`. `sig` is the folder's
    signature read once the watch was in place (None: the folder is missing, or there is no witness)."""

    def __init__(self, folder: str, fs_type: str) -> None:
        self.folder, self.fs_type = folder, fs_type
        self.fd = -1
        self.sig: list | None = None
        if not (dirwatch.trusted_type(fs_type) and fs_type in dirwatch.FINE_TYPES):
            return
        lib = _inotify() if sys.platform.startswith("linux") else None
        if lib is None:
            return
        fd = lib.inotify_init1(_NONBLOCK | _CLOEXEC)
        if fd < 0:
            return  # EMFILE: the per-user limit of inotify instances; no witness, callers list
        if lib.inotify_add_watch(fd, os.fsencode(folder), _WATCHED | _ONLYDIR | _DONT_FOLLOW) < 0:
            os.close(fd)
            return
        self.fd = fd
        try:
            self.sig = dirwatch.signature(folder)
        except OSError:
            self.sig = None
        if self.sig is None or self.sig[2] % 1_000_000_000 == 0:  # whole seconds: not a fine-grained time
            self.close()

    @property
    def watching(self) -> bool:
        return self.fd >= 0 and self.sig is not None

    def _foreign(self, ours: set[str]) -> bool:
        """Whether any entry other than `ours` (hidden names aside) appeared or left, or the folder itself
        changed, since the watch began (reading every event queued so far)."""
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                return False
            except OSError:
                return True
            at = 0
            while at + _HEADER <= len(chunk):
                mask = int.from_bytes(chunk[at + 4:at + 8], sys.byteorder)
                size = int.from_bytes(chunk[at + 12:at + 16], sys.byteorder)
                name = os.fsdecode(chunk[at + _HEADER:at + _HEADER + size].rstrip(b"\0"))
                at += _HEADER + size
                if mask & _ITSELF:
                    return True
                if mask & _NAMED and name not in ours and not name.startswith("."):
                    return True

    def seal(self, ours: set[str]) -> list | None:
        """The folder's signature now, if only `ours` changed its entries since the watch began and no later
        change can share its time (waiting at most `dirwatch.granule()` for that); else None. Ends the watch."""
        if not self.watching:
            return None
        try:
            sig = dirwatch.settled_signature(self.folder)  # a change made now could carry the same time
            if sig is None:
                return None
            if self._foreign(ours) or dirwatch.signature(self.folder) != sig:
                return None
            return sig
        except OSError:
            return None
        finally:
            self.close()

    def close(self) -> None:
        if self.fd >= 0:
            # The kernel's teardown of an inotify instance waits out a grace period (10-16 ms here), which a
            # thread can wait while this process goes on with its work.
            import threading

            threading.Thread(target=os.close, args=(self.fd,), daemon=True).start()
            self.fd = -1

    def __enter__(self) -> Witness:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Watched:
    """A folder store's notes folder watched (store/folder.py `watch`) while this process writes to it; `token`
    is the change token this machine's last refresh kept (None: none)."""

    def __init__(self, witness: Witness, token: dict | None) -> None:
        self.witness, self.token = witness, token

    def seal(self, ours: set[str]) -> dict | None:
        """After this process's writes (the file names `ours`): when they were the folder's only change since
        the watch began, they go into the store's journal (store/journal.py), and, when `token` was settled
        and the folder then as it saw it, the change token covering them is returned; else None. Ends the
        watch."""
        from agentmem.store import journal

        before = self.witness.sig
        sig = self.witness.seal(ours)
        if sig is None or before is None:
            return None
        journal.append(self.witness.folder, before, sig, ours)
        if not dirwatch.unchanged(self.token, before, self.witness.fs_type) or self.token is None:
            return None
        return {"v": 1, "sig": sig, "seen": time.time(), "settled": True, "fs": [sig[0], self.witness.fs_type],
                "journal": self.token.get("journal")}

    def close(self) -> None:
        self.witness.close()
