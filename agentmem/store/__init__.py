"""Storage backends. Both implement `Store` (see base.py); `open_store` picks one from a description.

The bucket backend is imported only when a bucket store is opened, so the
folder-store and cache-only paths never import huggingface_hub.
"""

from __future__ import annotations

from agentmem.errors import InvalidInput
from agentmem.store.base import ObjectInfo, Store, StoreDescription, check_object_path

__all__ = ["ObjectInfo", "Store", "StoreDescription", "check_object_path", "open_store"]


def open_store(desc: StoreDescription, *, timeout: float | None = None) -> Store:
    """Open the store a description names. `timeout` bounds a bucket store's network time in seconds."""
    if desc.kind == "folder":
        from agentmem.store.folder import FolderStore

        return FolderStore(desc.location)
    if desc.kind == "bucket":
        from agentmem.store.bucket import BucketStore  # heavy: huggingface_hub

        return BucketStore(desc.location, timeout=timeout)
    raise InvalidInput(f"unknown store kind {desc.kind!r}; expected 'folder' or 'bucket'")
