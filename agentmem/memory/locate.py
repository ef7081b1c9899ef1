"""Where a note is, when it is not in the project asked for: note IDs are unique across projects, so a
note asked for under the wrong project is found and its project named, never called missing.

What `read`, `retract`, `pin`, `purge` and `save --corrects` say when the project lacks the note. The
other projects looked in are the ones this machine knows (mapped in config.toml, cached from this store,
holding a pending note): this machine's pending notes and cache first, then the store, one `info` per
project within the network time the caller has left. A project no one here knows is not listed (that
would be a listing of the whole store): the answer then says how to name it.
"""

from __future__ import annotations

import os

from agentmem import errors
from agentmem.errors import Command, NextStep

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Callable

    from agentmem.config import Config


def known_projects(machine: str, cfg: Config) -> list[str]:
    """Every project this machine knows: mapped in config.toml, cached from the configured store, pending."""
    from agentmem.config import PROJECT_NAME
    from agentmem.paths import projects_cache
    from agentmem.uploads import pending

    names = set(cfg.project_names())
    try:
        names.update(os.listdir(projects_cache(machine, cfg.store.key)))
    except OSError:
        pass
    names.update(e.project for e in pending.list_entries(machine) if e.store in (None, cfg.store))
    return sorted(n for n in names if isinstance(n, str) and PROJECT_NAME.match(n))


def project_of(machine: str, cfg: Config, note_id: str, *, but: str, timeout: float | None = None) -> str | None:
    """The project other than `but` that holds `note_id`, among those this machine knows; None if none does
    (or the store could not be asked)."""
    from agentmem.note import document
    from agentmem.replica import cache
    from agentmem.store import identity
    from agentmem.uploads import pending

    try:
        entry, _ = pending.load(machine, note_id)
        if entry.project != but and entry.path.endswith(".md"):
            return entry.project
    except errors.AgentmemError:
        pass
    others = [p for p in known_projects(machine, cfg) if p != but]
    for project in others:
        if os.path.isfile(os.path.join(cache.notes_dir(machine, cfg.store, project), document.note_file(note_id))):
            return project
    if not others:
        return None
    try:
        store = identity.open_known(machine, cfg.store, timeout=timeout)
        for project in others:
            if store.info(document.note_path(project, note_id)) is not None:
                return project
    except errors.AgentmemError:
        return None
    return None


def not_in_project(machine: str, cfg: Config, project: str, note_id: str, step: Callable[[str], Command], *,
                   timeout: float | None = None) -> errors.NotFound:
    """The error for a note `project` does not hold: naming the project that does, with `step(that project)`
    as the command to run there; or saying which projects were looked in."""
    found = project_of(machine, cfg, note_id, but=project, timeout=timeout)
    said = f"note {note_id} is not in project {project}: it is a note of project {found}"
    if found is not None:
        if found in cfg.project_names():
            named = errors.NotFound(said, hint=NextStep("name its project: `{}`", step(found)))
        else:  # cached or pending here, but no directory of it is mapped: --project refuses it
            named = errors.NotFound(said, hint=NextStep("map a directory of it first, then name it with {}: `{}`",
                                                        errors.Option("project"), Command("map", "DIRECTORY", found)))
        named.located = found
        return named
    others = [p for p in known_projects(machine, cfg) if p != project]
    where = f", nor in the other projects this machine knows ({', '.join(others)})" if others else ""
    return errors.NotFound(f"no note {note_id} in project {project}{where}",
                           hint=NextStep("a note of another project is found once a directory of that project is "
                                         "mapped (`{}`) and the project named (`{}`)",
                                         Command("map", "DIRECTORY", "PROJECT"), step("PROJECT")))
