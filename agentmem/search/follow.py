"""The ranked index following the cache: the observer that callers of a cache change pass it.

The cache (memory/, below search/) never imports search; whoever changes it and wants the index
as current passes `update` as the cache's `index` observer. It imports the ranked engine (and
sqlite3) only once a change arrives, so a save that stays pending, or a search that finds nothing
new, costs what it cost when the cache told the index itself.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Iterable


def update(pdir: str, added: Iterable[str], removed: Iterable[str], *, scrub: bool = False,
           settled: tuple[int, int] | None = None) -> None:
    """Tell the project's index which notes arrived or left its cache (see ranked.update). `settled` = (the
    notes folder's mtime before, after): these were its only changes (replica/kept_names.py), so the index records
    the new time with them and its next open is one stat."""
    from agentmem.search import ranked

    ranked.update(pdir, added, removed, scrub=scrub, settled=settled)
