"""Which store setup chose, and who can reach it: said plainly in the setup report.

A bucket is reachable from any machine logged in to Hugging Face with access to
it. A folder store is only as shared as the folder: a network file system
(NFS, SMB, sshfs, ...) is seen by every machine that mounts it, while a folder
on a local disk is seen by this machine alone, unless a sync tool (Syncthing,
Dropbox, ...) copies it elsewhere, which no file system reports.
"""

from __future__ import annotations

import os

from agentmem.store.base import StoreDescription

# File system types that other machines can mount (Linux /proc/self/mounts names).
NETWORK_FILESYSTEMS = frozenset({
    "nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "afs", "ceph", "glusterfs", "lustre", "gpfs",
    "beegfs", "ocfs2", "gfs2", "davfs", "fuse.sshfs", "fuse.rclone", "fuse.s3fs", "fuse.gcsfuse",
    "fuse.juicefs", "fuse.glusterfs", "fuse.cephfs", "fuse.davfs2",
})


def _unescape(field: str) -> str:
    """/proc/self/mounts writes a space as \\040 (and tab, newline, backslash likewise)."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def filesystem_type(path: str, mounts: str = "/proc/self/mounts") -> str | None:
    """The type of the file system holding `path` (its longest mount point), or None if unknown."""
    target = os.path.realpath(path)  # a folder not created yet: its existing part, resolved, then the rest
    try:
        with open(mounts, encoding="utf-8", errors="replace") as f:
            table = [line.split() for line in f]
    except OSError:
        return None
    best: tuple[int, str] | None = None
    for fields in table:
        if len(fields) < 3:
            continue
        point = _unescape(fields[1])
        if target == point or target.startswith(point.rstrip("/") + "/"):
            if best is None or len(point) >= best[0]:
                best = (len(point), fields[2])
    return best[1] if best else None


def store_reach(desc: StoreDescription, mounts: str = "/proc/self/mounts") -> dict:
    """`{"kind", "location", "reach", "summary"}`; reach: bucket | network-folder | this-machine."""
    out = desc.to_dict()
    if desc.kind == "bucket":
        return out | {"reach": "bucket", "summary": (
            f"the private Hugging Face bucket {desc.location}: every machine logged in to Hugging Face "
            "with access to it reaches these notes")}
    fs = filesystem_type(desc.location, mounts)
    if fs is not None and fs in NETWORK_FILESYSTEMS:
        return out | {"reach": "network-folder", "summary": (
            f"the folder {desc.location} on a network file system ({fs}): machines that mount it reach "
            "these notes")}
    if fs in ("tmpfs", "ramfs"):
        where = f"in this machine's memory ({fs}; emptied at every restart)"
    else:
        where = f"on this machine's own disk ({fs})" if fs else "(file system not known)"
    return out | {"reach": "this-machine", "summary": (
        f"the folder {desc.location} {where}: only this machine reaches these notes, unless the folder "
        "is shared or synced with other machines; to share memory between machines, set them up with "
        "a Hugging Face bucket (answer bucket=hf) or a shared folder")}
