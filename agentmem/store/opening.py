"""Opening the store a description names: the one place that knows both backends.

Apart from base.py so that the backends, which build on base.py's interface, and the function that
picks one never import each other both ways.
"""

from __future__ import annotations

from agentmem.errors import InvalidInput
from agentmem.store.base import Store, StoreDescription

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Callable


def open_store(desc: StoreDescription, *, timeout: float | None = None, identity: str | None = None,
               remember: Callable[[str], None] | None = None) -> Store:
    """Open the store a description names. `timeout` bounds its network (or network drive) time in
    seconds; `identity` and `remember` are described on `Store`.

    Neither backend imports anything heavy on opening: the bucket backend imports
    huggingface_hub only for a transfer or a listing, so a search that finds nothing new
    never does.
    """
    if desc.kind == "folder":
        from agentmem.store.folder import FolderStore

        return FolderStore(desc.location, timeout=timeout, identity=identity,  # type: ignore[return-value]
                           remember=remember, team=desc.team)
    if desc.kind == "bucket":
        from agentmem.store.bucket import BucketStore

        return BucketStore(desc.location, timeout=timeout, identity=identity,  # type: ignore[return-value]
                           remember=remember)
    raise InvalidInput(f"unknown store kind {desc.kind!r}; expected 'folder' or 'bucket'")
