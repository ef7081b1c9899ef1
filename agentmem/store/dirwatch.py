"""Knowing in O(1) whether a folder store's notes folder changed, and when that answer can be trusted.

Adding or removing a file changes its folder's modification and change times
(mtime, ctime), so one `stat` of the notes folder tells a search whether to list
it. The signature compared is (device, inode, mtime, ctime, size): the inode
catches a folder replaced by another, ctime catches a sync tool that sets mtime
back to a remote value (no tool can set ctime), and on several filesystems the
folder's size moves with its entries too.

Two things make a bare comparison wrong, and both are handled here:

- Coarse timestamps. Filesystems store times in granules (2 s on FAT, one
  kernel tick on ext4), so a second change landing in the granule of the first
  leaves the signature as it was. A signature is therefore *settled* only when
  a listing started at least RACY_SECONDS after this machine first saw it: any
  change sharing the granule happened before that listing, which saw it. Until
  then every search lists again (git's "racy timestamp" rule, with elapsed local
  time instead of clock comparisons). On filesystems with nanosecond times
  (FINE_TYPES) the granule is one clock tick, so a listing begun FINE_SECONDS
  after the folder's time settles it at once (`listing_settles`).
- Filesystems whose folder times do not reflect other machines' changes when
  read: NFS and SMB clients cache attributes for up to a minute, FUSE mounts (sshfs,
  rclone, most sync clients' virtual drives) for their attribute timeout. There,
  and on any filesystem type not known to be local, every search lists the
  folder's names (no `stat` per file). `AGENTMEM_FOLDER_CHECK=list` forces that
  everywhere.

Only Linux says what filesystem a folder is on without a subprocess
(`/proc/self/mountinfo`); elsewhere the folder is listed on every search.
"""

from __future__ import annotations

import os
import sys
import time

# Seconds. The widest timestamp granule of a local filesystem is FAT's 2 s; one more
# for wall-clock steps between two processes' readings.
RACY_SECONDS = 3.0

# Filesystem types whose folder times change, for every reader on this machine, when an
# entry is added or removed, and are read uncached (mountinfo's type field).
LOCAL_TYPES = frozenset({
    "ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "ramfs", "zfs", "f2fs", "jfs", "reiserfs",
    "bcachefs", "nilfs2", "overlay", "vfat", "msdos", "exfat", "ntfs3", "hfsplus", "hfs", "apfs",
})
ENV_CHECK = "AGENTMEM_FOLDER_CHECK"  # "list": never trust folder times

# Filesystem types that stamp times from the kernel clock in nanoseconds, so that two changes share a
# folder time only when they land within one clock tick. The stamp is read from the kernel's coarse clock,
# which is never ahead of time.time() and lags it by at most one tick (1 ms at HZ=1000, 10 ms at HZ=100).
# So a listing begun FINE_SECONDS after the folder's own time saw every change that time can hide: the
# signature is settled at once, and a change costs one listing, not a listing on every search for
# RACY_SECONDS (issue 26, item 8). FINE_SECONDS is five ticks at the slowest clock; tests/test_cache.py
# measures the lag on the machine it runs on. A time with no fraction of a second (ext4 made with 128-byte
# inodes keeps whole seconds) falls back to RACY_SECONDS. The folder time and `now` come from the same
# clock: these are local filesystems (folder times of the others are never trusted).
FINE_TYPES = frozenset({"ext4", "xfs", "btrfs", "tmpfs", "ramfs", "zfs", "f2fs", "bcachefs", "overlay", "apfs",
                        "ntfs3"})
FINE_SECONDS = 0.05
# The ticks of the kernel's coarse clock (CLOCK_REALTIME_COARSE, what stamps folder times) after which a
# folder time is settled, where the kernel says how long its tick is: a stamp lags the clock by at most one
# tick, so three leave a margin of two (4 ms ticks here: 12 ms, not FINE_SECONDS' 50; docs/benchmarks.md).
GRANULE_TICKS = 3
_CLOCK_REALTIME_COARSE = 5  # Linux's clock ID (time has no name for it)
_granule: float | None = None


def granule() -> float:
    """Seconds after a folder's time (on a FINE_TYPES filesystem) past which no change can carry that time:
    GRANULE_TICKS ticks of the kernel's coarse clock, at most FINE_SECONDS (all of it where the tick is
    unknown)."""
    global _granule
    if _granule is None:
        tick = None
        if sys.platform.startswith("linux"):
            try:
                tick = time.clock_getres(_CLOCK_REALTIME_COARSE)
            except (OSError, AttributeError):
                tick = None
        _granule = FINE_SECONDS if not tick or tick <= 0 else min(FINE_SECONDS, GRANULE_TICKS * tick)
    return _granule


def signature(folder: str) -> list | None:
    """The folder's change signature, or None if it does not exist. Raises OSError otherwise."""
    try:
        st = os.stat(folder)
    except FileNotFoundError:
        return None
    return [st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size]


def filesystem_type(folder: str) -> str:
    """The type of the filesystem holding `folder` ("ext4", "nfs4", "fuse.sshfs"), or "unknown"."""
    if not sys.platform.startswith("linux"):
        return "unknown"
    try:
        with open("/proc/self/mountinfo", "rb") as fh:
            table = fh.read().decode("utf-8", "replace")
    except OSError:
        return "unknown"
    real = os.path.realpath(folder)
    best, best_type = -1, "unknown"
    for line in table.splitlines():
        # "36 35 98:0 /root /mount/point opts [optional...] - fstype source superopts"
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(" "), right.split(" ")
        if not sep or len(fields) < 5 or not tail:
            continue
        point = _unescape(fields[4])
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= best:  # later lines mount over earlier ones at the same point
            best, best_type = len(point), tail[0]
    return best_type


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash in paths as octal escapes."""
    if "\\" not in field:
        return field
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def trusted_type(fs_type: str) -> bool:
    return fs_type in LOCAL_TYPES and os.environ.get(ENV_CHECK, "auto") != "list"


def known_type(token: dict | None, sig: list | None, folder: str) -> str:
    """The filesystem type, reusing the token's while the device is the same (mountinfo costs a read)."""
    fs = token.get("fs") if isinstance(token, dict) else None
    if sig is not None and isinstance(fs, list) and len(fs) == 2 and fs[0] == sig[0] and isinstance(fs[1], str):
        return fs[1]
    return filesystem_type(folder)


def unchanged(token: dict | None, sig: list | None, fs_type: str) -> bool:
    """True when the folder is exactly as a settled earlier listing saw it (nothing to list)."""
    return (isinstance(token, dict) and token.get("v") == 1 and token.get("sig") == sig
            and token.get("settled") is True and trusted_type(fs_type))


def listing_settles(began: float, mtime_ns: int, fs_type: str) -> bool:
    """Whether a listing begun at `began` (time.time(), before the stat) saw every change that the folder
    time `mtime_ns` can hide, without waiting RACY_SECONDS: on a FINE_TYPES filesystem, FINE_SECONDS after it."""
    return (fs_type in FINE_TYPES and mtime_ns % 1_000_000_000 != 0
            and began - mtime_ns / 1e9 >= granule())


def settled_signature(folder: str) -> list | None:
    """The folder's signature once its time is `granule()` old (waiting for that): a change made after this
    stamps a later time. None if the folder is missing or its time has no fraction of a second (not fine-
    grained: no wait can settle it). replica/kept_names.py and store/witness.py record folders with it."""
    while True:
        sig = signature(folder)
        if sig is None or sig[2] % 1_000_000_000 == 0:
            return None
        young = granule() - (time.time() - sig[2] / 1e9)
        if young <= 0:
            return sig
        time.sleep(young)


def settle_wait(began: float, mtime_ns: int, fs_type: str) -> float:
    """Seconds to wait before a listing begun at `began` so that it settles the folder time `mtime_ns`
    (`listing_settles`); 0.0 when it settles already or never can. At most `granule()`: waiting that
    long once after a change costs less than listing a big folder again on the next search."""
    if fs_type not in FINE_TYPES or mtime_ns % 1_000_000_000 == 0:
        return 0.0
    young = began - mtime_ns / 1e9
    return granule() - young if 0.0 <= young < granule() else 0.0


def trusted_mtime(began_ns: int, mtime_ns: int, folder: str, racy_ns: int) -> int:
    """The folder time a derived view (the index, the corrections) may record as covering a listing begun at
    `began_ns` (time.time_ns(), before the stat), or 0 (list again next time): settled by `listing_settles`,
    or older than `racy_ns` by the clock after the listing."""
    if mtime_ns > 0 and listing_settles(began_ns / 1e9, mtime_ns, filesystem_type(folder)):
        return mtime_ns
    return mtime_ns if time.time_ns() - mtime_ns > racy_ns else 0


def next_token(token: dict | None, sig: list | None, fs_type: str, now: float) -> dict:
    """The token to keep after a listing that started at `now` (local time, taken before the stat)."""
    seen = now
    if isinstance(token, dict) and token.get("v") == 1 and token.get("sig") == sig:
        earlier = token.get("seen")
        seen = float(earlier) if isinstance(earlier, (int, float)) else now
    settled = trusted_type(fs_type) and ((0 <= now - seen and now - seen >= RACY_SECONDS)
                                         or (sig is not None and listing_settles(now, sig[2], fs_type)))
    dev = sig[0] if sig is not None else None
    return {"v": 1, "sig": sig, "seen": seen, "settled": settled, "fs": [dev, fs_type]}
