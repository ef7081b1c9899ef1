"""What a refresh read from the store but could not write to the cache (an agent's read-only sandbox).

INV loud-unwritable: the notes that arrived are kept in memory and answer this one search
(search/find.py looks through them beside the cache and the pending notes), cached notes the
store no longer holds are left out of it, and the answer says nothing was cached and why
(`not_cached`). The refresh keeps its previous token, so the next one that can write caches them.
"""


class Uncached:
    """The notes that arrived (id -> bytes), the cached notes the store no longer holds, and `reason`."""

    __slots__ = ("notes", "gone", "reason")

    def __init__(self, why, notes: dict[str, bytes], gone: set[str]):
        self.notes, self.gone = notes, gone
        self.reason = f"nothing was cached: {why.one_line()}"
        if notes:
            self.reason += f"; {len(notes)} note(s) read from the store for this answer only"
