"""What an existing search index holds of a note, read without making it again (the memory view's search
postings: view/collect.py).

`stored_terms(pdir)` looks up a note's terms, title terms apart (its weighted length says how many), by
its ID; close it when done (its read transaction ends then). Read-only: it never builds, syncs or writes
the index; without a usable index there is nothing to look up, and the caller makes the terms itself as
search/words.py does.
"""

from __future__ import annotations

import os
import sqlite3

from agentmem.search import index

READ_RUN = 256  # look-ups that share one read transaction: a writer waits milliseconds at most


class StoredTerms:
    """Look-ups of what one index holds of its notes: call it with a note ID; close it when done."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn, self.done = conn, 0

    def __call__(self, note_id: str) -> tuple[list[str], list[str]] | None:
        """`(title terms, body terms)` of the note, or None when the index holds no such note."""
        conn = self.conn
        try:
            if self.done % READ_RUN == 0:
                if conn.in_transaction:
                    conn.execute("COMMIT")
                conn.execute("BEGIN")
            self.done += 1
            row = conn.execute("SELECT dl, terms FROM docs WHERE id=?", (note_id,)).fetchone()
        except sqlite3.Error:
            return None
        if row is None:
            return None
        terms = row[1].split(" ") if row[1] else []
        titled = (row[0] - len(terms)) // (index.TITLE_WEIGHT - 1)  # dl counts each title term TITLE_WEIGHT times
        return terms[:titled], terms[titled:]

    def close(self) -> None:
        """End the read transaction and the connection: a writer of the index no longer waits on them."""
        self.conn.close()


def stored_terms(pdir: str | os.PathLike[str]) -> StoredTerms | None:
    """A look-up of what an existing index holds of a note: `(title terms, body terms)` by note ID, or None
    when it holds no such note; None when there is no valid index. Read-only: it never builds, syncs or
    writes the index (the memory view ranks with the terms search ranks with, without making them again).
    Look-ups share a read transaction of at most `READ_RUN` of them (a lock taken per statement cost 4
    times as much), so a writer waits milliseconds at most while look-ups come; `close` ends the last."""
    path = index.index_path(pdir)
    if not os.path.isfile(path):
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10, isolation_level=None,
                               check_same_thread=False)
        if not index.usable(conn):
            conn.close()
            return None
    except sqlite3.Error:
        return None
    return StoredTerms(conn)
