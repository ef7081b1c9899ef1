"""What the memory view shows, gathered as plain data (`page.py` and `files.py` write it).

`gather` refreshes each project exactly as a search does (`recall.freshen`: INV read-your-writes,
with the same `[cache] max_age` and offline rules), then reads every cached and pending note of
those projects, one at a time, into a `collect.Collector` with the states this machine knows of it
(`note_states`: a pending upload, how to retry it and why it waits, and what the project's records
say: retracted, review due, pinned; a purged note is not shown), and gathers the commands that act
on notes (`commands.py`), the shared skills with their revisions, the store, and how current each
project is. Whatever could not be checked is said
(`stale`, `stale_reasons`), never hidden: a view of a store that did not answer is not a view of an
empty store.

Which projects: by default every project this machine knows (mapped in config.toml, in the cache,
or holding a pending note), since the person looking wants all of their memory, not only the
current directory's; `project` names one; `whole_store` adds every project the store holds.

INV no-credentials: every piece of note or store text goes through `Redactor` (the same withholding
of credentials as the rest of the helper's output) before it is placed in the data.
"""

from __future__ import annotations

import os
import time

from agentmem import errors
from agentmem.note import document, ids
from agentmem.paths import projects_cache
from agentmem.store import layout
from agentmem.uploads import pending
from agentmem.view import commands
from agentmem.view.redactor import Redactor

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable

    from agentmem.config import Config
    from agentmem.runtimes.base import Runtime
    from agentmem.store.base import Store
    from agentmem.uploads.pending import Entry
    from agentmem.view.collect import Collector

DATA_VERSION = 2  # the shape page.js reads; bumped when a key changes meaning (2: notes in columns and files)


def projects_on_machine(machine: str, cfg: Config) -> list[str]:
    """Every project this machine knows: mapped in config.toml, cached from this store, or pending."""
    names = set(cfg.project_names())
    root = projects_cache(machine, cfg.store.key)
    try:
        names.update(n for n in os.listdir(root) if os.path.isdir(os.path.join(root, n)))
    except OSError:
        pass
    names.update(e.project for e in pending.list_entries(machine) if e.project and e.store in (None, cfg.store))
    return sorted(n for n in names if _valid_project(n))


def _valid_project(name: str) -> bool:
    from agentmem.config import check_project_name

    try:
        check_project_name(name)
    except errors.InvalidInput:
        return False
    return True


def store_projects(store: Store) -> list[str]:
    """The projects the store holds notes for (one complete listing; raises like `Store.list`)."""
    found = set()
    for obj in store.list(layout.PROJECTS):
        project = layout.notes_project(obj.path)
        if project is not None and _valid_project(project):
            found.add(project)
    return sorted(found)


class Gathered:
    """What `gather` found: `meta` (the page's data but the notes: store, projects, skills, freshness, the
    commands that act on notes) and `notes` (a finished `collect.Collector`: close it once written)."""

    def __init__(self, meta: dict, found: Collector) -> None:
        self.meta, self.notes = meta, found

    def close(self) -> None:
        self.notes.close()


def gather(machine: str, cfg: Config, *, project: str | None = None, whole_store: bool = False,
           offline: bool = False, timeout: float | None = None, runtimes: list[Runtime] | None = None,
           progress: Callable[[str, int, int], None] | None = None) -> Gathered:
    """The view's data: `meta` {version, generated_at, store, projects, commands, skills, stale,
    stale_reasons, ...} and the notes, read one at a time into a `collect.Collector`.

    `progress(project, done, total)` hears a long first sync of a project.
    """
    from agentmem.memory import recall
    from agentmem.view.collect import Collector

    shown = Redactor()
    reasons: list[str] = []
    names = [project] if project is not None else projects_on_machine(machine, cfg)
    if whole_store and project is None and offline:
        reasons.append("offline mode: the store was not asked which projects it holds")
    elif whole_store and project is None:
        try:
            names = sorted(set(names) | set(store_projects(_open(machine, cfg, timeout))))
        except errors.AgentmemError as exc:
            reasons.append(f"the store's list of projects could not be read, so projects no directory on this "
                           f"machine maps may be missing: {shown.text(exc.one_line())}")
    waiting = {e.id: e for e in pending.list_entries(machine)}
    projects = []
    found = Collector(shown)
    try:
        for name in names:
            report = (lambda done, total, name=name: progress(name, done, total)) if progress else None
            status = recall.freshen(machine, cfg, name, offline=offline, timeout=timeout, progress=report)
            fresh = status.to_json()
            before = len(found)
            _project_notes(machine, cfg, name, waiting, shown, found)
            projects.append({"name": name, "notes": len(found) - before, "stale": fresh["stale"],
                             "stale_reason": shown.text(fresh["stale_reason"]) or None,
                             "stale_error": fresh["stale_error"], "checked_at": fresh["checked_at"],
                             "refreshed": fresh["refreshed"],
                             "unreadable": [{"id": u["id"], "message": shown.text(u["message"])}
                                            for u in fresh["unreadable"]]})
            if fresh["stale"]:
                reasons.append(f"project {name}: {projects[-1]['stale_reason']}")
            if fresh["unreadable"]:
                reasons.append(f"project {name}: {len(fresh['unreadable'])} note(s) in the store could not be read")
        found.finish()
        skills, skills_problem = _skills(machine, cfg, timeout, runtimes, offline, shown)
    except BaseException:
        found.close()
        raise
    if skills_problem:
        reasons.append(skills_problem)
    broken = [{"id": shown.text(b["id"]), "problem": shown.text(b["problem"])} for b in pending.unreadable(machine)]
    meta = {
        "version": DATA_VERSION,
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "store": {"kind": cfg.store.kind, "label": shown.text(_home_relative(cfg.store.label()))},
        "agent": shown.text(cfg.agent),
        "scope": "project" if project is not None else ("store" if whole_store else "machine"),
        "projects": projects,
        "commands": {p["name"]: commands.for_project(cfg, p["name"]) for p in projects},
        "skills": skills,
        "pending_unreadable": broken,
        "stale": bool(reasons),
        "stale_reasons": reasons,
        "withheld": shown.withheld,
    }
    return Gathered(meta, found)


def _home_relative(label: str) -> str:
    """A folder store under the user's home as `~/...`: shorter to read, and the page names no user."""
    home = os.path.expanduser("~")
    if home not in ("", "/") and (label == home or label.startswith(home + os.sep)):
        return "~" + label[len(home):]
    return label


def _open(machine: str, cfg: Config, timeout: float | None) -> Store:
    from agentmem.store import identity

    return identity.open_known(machine, cfg.store, timeout=timeout)


def _project_notes(machine: str, cfg: Config, project: str, waiting: dict[str, Entry], shown: Redactor,
                   found: Collector) -> None:
    """The project's notes with their states, into `found`: a purged note is left out (INV purged-gone), a
    retracted one is shown as retracted. Read one at a time, as a search takes them (`find.candidates`):
    the cached notes, then this machine's pending notes the cache lacks."""
    from agentmem.fsutil import read_bytes
    from agentmem.memory import recall
    from agentmem.replica import cache, redacted_copies
    from agentmem.replica.states import project_states

    states = project_states(machine, cfg.store, project)
    review_after = cfg.review_after
    pdir = cache.project_dir(machine, cfg.store, project)
    ndir = cache.notes_dir(machine, cfg.store, project)
    recorded = redacted_copies.recorded_ids(pdir)  # cached notes arrive redacted; their record says what was withheld
    cached = cache.cached_ids(machine, cfg.store, project)
    found.use_index(project, pdir)
    for note_id in cached:
        if note_id in states.purged:
            continue
        try:
            data = read_bytes(os.path.join(ndir, ids.note_file(note_id)))
        except OSError:
            continue  # removed since the listing
        if note_id in recorded:
            shown.withheld += len(redacted_copies.withheld_of(pdir, note_id))
        parsed = document.parse(data)
        known = recall.note_states(states, note_id, parsed.meta, review_after)
        found.add(note_id, project, parsed, note_states(None, shown, known), known.get("review_by"), cached=True)
    here = set(cached)
    for note_id, data in pending.project_notes(machine, cfg.store, project).items():
        if note_id in here or note_id in states.purged:
            continue
        parsed = document.parse(data)
        known = recall.note_states(states, note_id, parsed.meta, review_after)
        found.add(note_id, project, parsed, note_states(waiting.get(note_id), shown, known), known.get("review_by"))


def note_states(entry: Entry | None, shown: Redactor, known: dict | None = None) -> list[dict]:
    """What this machine knows about a note beyond its content: [{name, label, detail}], the page shows
    each as a badge and a line, and filters by `name`:

    - `pending`: saved here, its upload not confirmed: `command` retries it (exactly as it runs), and the
      detail says when it was last tried and what failed then, which may be long past;
    - `retracted`: a retraction record names it (who, when, why); search hides it, the view shows it;
    - `review-due`: its review date (`review_by`, or `[memory] review_after`) has passed;
    - `pinned`: shown at the start of every session of the project.
    """
    states = []
    if entry is not None:
        states.append({"name": "pending", "label": "pending upload", "detail": shown.text(pending_reason(entry)),
                       "command": shown.text(entry.retry_step().line())})
    known = known or {}
    retraction = known.get("retracted")
    if retraction:
        why = f": {retraction['reason']}" if retraction.get("reason") else ""
        detail = f"retracted on {str(retraction.get('created', ''))[:10]} by {retraction.get('agent')}{why}"
        states.append({"name": "retracted", "label": "retracted", "detail": shown.text(detail)})
    if known.get("review_due"):
        states.append({"name": "review-due", "label": "review due",
                       "detail": f"due for review since {known.get('review_by')}: it may be stale"})
    if known.get("pinned"):
        states.append({"name": "pinned", "label": "pinned",
                       "detail": "pinned: shown at the start of every session of the project"})
    return states


def pending_reason(entry: Entry) -> str:
    """Why a pending note waits; a failure is given with when it happened, since it may be long past."""
    if entry.damaged:
        return f"its pending entry is damaged ({entry.damaged}); its destination is not guessed: the retry " \
               "command sends it to this machine's configured store"
    if entry.last_error:
        message = entry.last_error.get("message") or entry.last_error.get("error") or "unknown"
        at = entry.last_error.get("at")
        when = f" on {time.strftime('%Y-%m-%d %H:%M', time.gmtime(at))} UTC" if isinstance(at, (int, float)) else ""
        tries = f" ({entry.attempts} attempt(s))" if entry.attempts else ""
        return f"not confirmed by the store yet; the last attempt{when}{tries} failed: {message}"
    return "saved on this machine; its upload has not been confirmed yet"


def _skills(machine: str, cfg: Config, timeout: float | None, runtimes: list[Runtime] | None, offline: bool,
            shown: Redactor) -> tuple[list[dict], str | None]:
    """The shared skills and their revisions, or why they could not be listed."""
    if offline:
        return [], "shared skills were not listed (offline mode)"
    from pathlib import Path

    from agentmem.skills import catalog

    try:
        found = catalog.discover(_open(machine, cfg, timeout), machine=Path(machine), runtimes=runtimes or [])
    except errors.AgentmemError as exc:
        return [], f"shared skills could not be listed: {shown.text(exc.one_line())}"
    return [{"name": s["name"],
             "installed": [{"runtime": i["runtime"], "revision": shown.text(i["revision"]) or None}
                           for i in s["installed"]],
             "revisions": [{"revision": r["revision"], "description": shown.text(r["description"]) or None,
                            "files": r["files"], "bytes": r["bytes"], "problem": shown.text(r["problem"]) or None}
                           for r in s["revisions"]]} for s in found], None
