"""What a project's records make of its notes on this machine, and forgetting a purged note here.

Above records.py (the format, the cached records) and pending.py (this machine's waiting records),
which it combines; below the cache, whose refresh forgets what a purge record it brought names.
INV purged-gone: `forget` takes a purged note's bytes from the cache, the index (scrubbed, so no freed
page keeps its words), the review queue's file, the pending folder and the view pages this machine wrote.
"""

from __future__ import annotations

import os

from agentmem.note import ids
from agentmem.note.records import States, states, with_pending
from agentmem.paths import REVIEW_FILE, notes_folder, pending_dir, project_cache

DERIVED_WITH_TEXT = (REVIEW_FILE,)  # derived files holding note text (the index is scrubbed by its observer)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from agentmem.store.base import StoreDescription


def project_states(machine: str | os.PathLike[str], store: StoreDescription, project: str) -> States:
    """The states of a project's notes on this machine: cached records and this machine's pending ones.
    What `search`, `read`, `review`, the reminder and the view ask."""
    pdir = project_cache(machine, store.key, project)
    try:  # the pending module only when something is pending (the session-start reminder imports little)
        waiting = any(not n.startswith(".") for n in os.listdir(pending_dir(machine)))
    except OSError:
        waiting = False
    if not waiting:
        return states(pdir)
    from agentmem.uploads import pending

    return with_pending(pdir, pending.project_records(machine, store, project).values())


def forget(machine: str | os.PathLike[str], store: StoreDescription, project: str, note_ids: Iterable[str],
           index: Callable[..., object] | None = None) -> list[str]:
    """Remove purged notes' bytes from this machine: the cached file, the index (`index`, the cache's
    observer: told with `scrub`, so no freed page keeps their words), the review queue's file of titles,
    any pending copy, and every memory view page this machine wrote holding one (view/written.py).
    Returns the IDs whose cached file was removed."""
    from agentmem import errors
    from agentmem.uploads import pending
    from agentmem.view import written

    note_ids = sorted(set(note_ids))
    if not note_ids:
        return []
    pdir = project_cache(machine, store.key, project)
    removed, refused = unlink_cached(pdir, note_ids)
    if refused is not None:
        note_id, exc = refused
        raise errors.NotWritable(f"cannot remove purged note {note_id} from the cache in {pdir} "
                                 f"({exc.strerror})", hint=errors.UNWRITABLE_HINT) from None
    if index is not None:
        index(pdir, [], note_ids, scrub=True)
    _drop_derived(pdir, note_ids)
    waiting = pending.project_notes(machine, store, project)
    for note_id in note_ids:
        if note_id in waiting:
            pending.remove(machine, note_id)
    written.drop_holding(machine, note_ids)
    return removed


def unlink_cached(pdir: str, note_ids: Iterable[str]) -> tuple[list[str], tuple[str, OSError] | None]:
    """Remove notes' cached files (and their redacted copies' records), in the order given: (the IDs whose
    file was removed, None), or, at the first the cache will not let go (a read-only cache), that ID and
    its error beside the IDs removed before it. Any other OSError is raised."""
    from agentmem import errors
    from agentmem.replica import redacted_copies

    ndir, removed = notes_folder(pdir), []
    for note_id in note_ids:
        try:
            os.unlink(os.path.join(ndir, ids.note_file(note_id)))
            redacted_copies.drop_record(pdir, note_id)
            removed.append(note_id)
        except FileNotFoundError:
            pass
        except OSError as exc:
            if not errors.cannot_write(exc):
                raise
            return removed, (note_id, exc)
    return removed, None


def _drop_derived(pdir: str, note_ids: list[str]) -> None:
    """Delete the derived files beside the cache that hold a note's text (the review queue's titles,
    `REVIEW_FILE`) when they name a purged note: they are rebuilt from the cached notes when next needed."""
    from agentmem.fsutil import read_bytes

    for name in DERIVED_WITH_TEXT:
        path = os.path.join(pdir, name)
        try:
            data = read_bytes(path)
        except OSError:
            continue
        if any(note_id.encode() in data for note_id in note_ids):
            try:
                os.unlink(path)
            except OSError:  # gone meanwhile; a folder that refuses is refused the note itself just above
                pass
