"""A folder store's identity marker (`.agentmem-store`): an ID written once, when the store is created, and
read by every operation's first check (store/folder.py; INV store-identity)."""

from __future__ import annotations

import os
import stat
import time

from agentmem.errors import Command, NextStep, Offline
from agentmem.fsutil import create_exclusive_atomic

MARKER = ".agentmem-store"
MARKER_LIMIT = 4096
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)


def read_marker(root: str) -> str | None:
    """The store ID in `root`'s marker, None if there is none; Offline if it is not one agentmem wrote."""
    import json

    path = os.path.join(root, MARKER)
    try:
        fd = os.open(path, _READ_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Offline(f"folder store {root}: cannot read its {MARKER} marker ({exc.strerror})") from None
    try:
        st = os.fstat(fd)
        raw = os.read(fd, MARKER_LIMIT + 1) if stat.S_ISREG(st.st_mode) else b""
    except OSError as exc:
        raise Offline(f"folder store {root}: cannot read its {MARKER} marker ({exc.strerror})") from None
    finally:
        os.close(fd)
    try:
        data = json.loads(raw) if 0 < len(raw) <= MARKER_LIMIT else None
    except ValueError:
        data = None
    store_id = data.get("id") if isinstance(data, dict) and data.get("agentmem") == "store" else None
    if not isinstance(store_id, str) or not 8 <= len(store_id) <= 64 or not store_id.isalnum():
        raise Offline(f"folder store {root} carries a {MARKER} marker that agentmem did not write",
                      hint=NextStep(f"if this folder is the store, remove {path} and run `{{}}`", Command("setup")))
    return store_id


def write_marker(root: str) -> str:
    """Give `root` (an existing folder) its marker; returns the store ID (another writer's, if it won)."""
    import json

    store_id = os.urandom(16).hex()
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    body = json.dumps({"agentmem": "store", "id": store_id, "created": when}, sort_keys=True) + "\n"
    if create_exclusive_atomic(os.path.join(root, MARKER), body.encode()):
        return store_id
    found = read_marker(root)
    if found is None:
        raise Offline(f"folder store {root}: its {MARKER} marker vanished while it was written")
    return found


def create_store(root: str) -> str:
    """Make a new folder store at `root` (its parents too) and mark it; returns its ID."""
    os.makedirs(root, exist_ok=True)
    found = read_marker(root)
    return found if found is not None else write_marker(root)
