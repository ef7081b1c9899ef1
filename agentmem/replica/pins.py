"""Pinned notes: the small memory of a project that every session starts with.

A note is pinned by a record (note/records.py: the latest pin or unpin per note wins), so pins
travel with the store. `pinned_notes` picks what the session-start reminder carries: newest pin
first, each note whole, until `[memory] pin_budget` characters; the rest are named as left out.
It reads this machine's cache and pending folder only (no network, no heavy import), so the
reminder hook stays fast; a pin made elsewhere arrives with the next search here.
"""

from __future__ import annotations

import os

from agentmem.paths import PENDING_RECORD_FILE, pending_dir, project_caches, records_folder

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from agentmem.store.base import StoreDescription


def may_have_pins(machine: str, waiting: list[str]) -> bool:
    """False when no project on this machine can have a pin: no record cached for any store or project,
    and none among the pending entries named in `waiting` (a pending note is not a pin). A stat per
    project and per pending entry, so a machine with no records pays neither its config's reading nor
    the imports of the cache and pending modules at every session start."""
    if any(os.path.isdir(records_folder(pdir)) for pdir in project_caches(machine)):
        return True
    pending = pending_dir(machine)
    return any(os.path.exists(os.path.join(pending, name, PENDING_RECORD_FILE)) for name in waiting)


def pinned_notes(machine: str, store: StoreDescription | list[StoreDescription], project: str, budget: int) -> dict:
    """{"shown": [{id, title, text, pinned_at}], "left_out": [{id, why}]}: the pinned notes of `project`
    within `budget` characters of text, newest pin first. `store`: the store, or the stores (a member's own
    and the team's) whose pins share the one budget."""
    from agentmem.replica.states import project_states

    stores = store if isinstance(store, list) else [store]
    pins = sorted(((note_id, pin, where) for where in stores
                   for note_id, pin in project_states(machine, where, project).pinned().items()),
                  key=lambda item: item[1]["record"], reverse=True)
    if not pins:
        return {"shown": [], "left_out": []}
    from agentmem.note import document
    from agentmem.replica import cache
    from agentmem.uploads import pending

    waiting = {where: pending.project_notes(machine, where, project) for where in stores}
    shown: list[dict] = []
    left_out: list[dict] = []
    used, full = 0, False
    for note_id, pin, where in pins:
        data = cache.read_cached(machine, where, project, note_id)  # cleaned when it entered the cache
        if data is None and note_id in waiting[where]:  # INV no-credentials: a pending copy passes the same step
            from agentmem.replica import redacted_copies

            data = redacted_copies.clean(waiting[where][note_id])[0]
        if data is None:
            left_out.append({"id": note_id, "why": "not on this machine yet (a search brings it)"})
            continue
        parsed = document.parse(data)
        text = f"{parsed.title or note_id}\n{parsed.body.strip()}"
        if full or used + len(text) > budget:  # the newest pins win: once one is over, so are all older
            full = True
            left_out.append({"id": note_id, "why": f"over the pin budget ({budget} characters)"})
            continue
        used += len(text)
        shown.append({"id": note_id, "title": parsed.title, "text": text, "pinned_at": pin["created"]})
    return {"shown": shown, "left_out": left_out}
