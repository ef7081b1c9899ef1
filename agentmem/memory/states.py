"""What a project's records make of its notes on this machine, and forgetting a purged note here.

Above records.py (the format, the cached records) and pending.py (this machine's waiting records),
which it combines; below the cache, whose refresh forgets what a purge record it brought names.
"""

from __future__ import annotations

import os

from agentmem.memory import ids
from agentmem.memory.records import States, states, with_pending
from agentmem.paths import project_cache

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from agentmem.store.base import StoreDescription


def project_states(machine: str | os.PathLike[str], store: StoreDescription, project: str) -> States:
    """The states of a project's notes on this machine: cached records and this machine's pending ones.
    What `search`, `read`, `review`, the reminder and the view ask."""
    pdir = project_cache(machine, store.key, project)
    try:  # the pending module only when something is pending (the session-start reminder imports little)
        waiting = any(not n.startswith(".") for n in os.listdir(os.path.join(os.fspath(machine), "pending")))
    except OSError:
        waiting = False
    if not waiting:
        return states(pdir)
    from agentmem.memory import pending

    return with_pending(pdir, pending.project_records(machine, project).values())


def forget(machine: str | os.PathLike[str], store: StoreDescription, project: str, note_ids: Iterable[str],
           index: Callable[..., object] | None = None) -> list[str]:
    """Remove purged notes' bytes from this machine: the cached file, the index (`index`, the cache's
    observer: told with `scrub`, so no freed page keeps their words) and any pending copy. Returns the
    IDs whose cached file was removed."""
    from agentmem import errors
    from agentmem.memory import pending, withheld

    note_ids = sorted(set(note_ids))
    if not note_ids:
        return []
    pdir = project_cache(machine, store.key, project)
    removed = []
    for note_id in note_ids:
        try:
            os.unlink(os.path.join(pdir, "notes", ids.note_file(note_id)))
            withheld.drop_record(pdir, note_id)
            removed.append(note_id)
        except FileNotFoundError:
            pass
        except OSError as exc:
            if not errors.cannot_write(exc):
                raise
            raise errors.NotWritable(f"cannot remove purged note {note_id} from the cache in {pdir} "
                                     f"({exc.strerror})", hint=errors.UNWRITABLE_HINT) from None
    if index is not None:
        index(pdir, [], note_ids, scrub=True)
    waiting = pending.project_notes(machine, project)
    for note_id in note_ids:
        if note_id in waiting:
            pending.remove(machine, note_id)
    return removed
