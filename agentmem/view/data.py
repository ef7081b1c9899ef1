"""What the memory view shows, gathered as plain data (`page.py` turns it into the HTML file).

`gather` refreshes each project exactly as a search does (`recall.freshen`: INV read-your-writes,
with the same `[cache] max_age` and offline rules), then collects every cached and pending note of
those projects with its metadata, its correction links both ways (`search/corrections.py`), and the
states this machine knows of it (`states`: a pending upload and why it waits, and what the project's
records say: retracted, review due, pinned; a purged note is not shown), the shared skills with
their revisions, the store, and how current each project is. Whatever could not be checked is said
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
from agentmem.memory import ids, notes, pending
from agentmem.paths import cache_root
from agentmem.safety import credentials, screening
from agentmem.search import corrections

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable

    from agentmem.config import Config
    from agentmem.memory.pending import Entry
    from agentmem.runtimes.base import Runtime
    from agentmem.store.base import Store

DATA_VERSION = 1  # the shape page.js reads; bumped when a key changes meaning


class Redactor:
    """The one place note and store text is made fit to show: each credential replaced by
    `[REDACTED:<kind>]` (`safety/screening.py`'s withholding, as for the rest of the helper's output).
    Counts what it withheld, for the page."""

    def __init__(self) -> None:
        self.known = credentials.env_secrets()
        self.withheld = 0

    def text(self, value: object) -> str:
        if not isinstance(value, str):
            return "" if value is None else str(value)
        if not value:
            return value
        shown, kinds = screening.withhold(value, self.known)
        self.withheld += len(kinds)
        return shown

    def items(self, value: object) -> list[str]:
        if isinstance(value, str):
            value = [value]
        return [self.text(v) for v in value] if isinstance(value, list) else []

    def fields(self, values: dict) -> dict:
        """Several fields of one note ({name: str or [str]}): checked as one text first, joined by line
        breaks (the detectors work line by line), then field by field only when that text holds a
        credential, which halves the time of a check per field (bench/view.py; docs/benchmarks.md)."""
        joined = "\n".join(v if isinstance(v, str) else "\n".join(v) for v in values.values())
        if not screening.withhold(joined, self.known)[1]:
            return values
        return {k: self.text(v) if isinstance(v, str) else self.items(v) for k, v in values.items()}


def projects_on_machine(machine: str, cfg: Config) -> list[str]:
    """Every project this machine knows: mapped in config.toml, cached from this store, or pending."""
    names = set(cfg.project_names())
    root = os.path.join(cache_root(machine), cfg.store.key, "projects")
    try:
        names.update(n for n in os.listdir(root) if os.path.isdir(os.path.join(root, n)))
    except OSError:
        pass
    names.update(e.project for e in pending.list_entries(machine) if e.project)
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
    for obj in store.list("projects"):
        parts = obj.path.split("/")
        if len(parts) == 4 and parts[2] == "notes" and _valid_project(parts[1]):
            found.add(parts[1])
    return sorted(found)


def gather(machine: str, cfg: Config, *, project: str | None = None, whole_store: bool = False,
           offline: bool = False, timeout: float | None = None, runtimes: list[Runtime] | None = None,
           progress: Callable[[str, int, int], None] | None = None) -> dict:
    """The view's data: {version, generated_at, store, projects, notes, skills, stale, stale_reasons, ...}.

    `progress(project, done, total)` hears a long first sync of a project.
    """
    from agentmem.memory import recall

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
    projects, found = [], []
    for name in names:
        report = (lambda done, total, name=name: progress(name, done, total)) if progress else None
        status = recall.freshen(machine, cfg, name, offline=offline, timeout=timeout, progress=report)
        fresh = status.to_json()
        items = _project_notes(machine, cfg, name, waiting, shown)
        found.extend(items)
        projects.append({"name": name, "notes": len(items), "stale": fresh["stale"],
                         "stale_reason": shown.text(fresh["stale_reason"]) or None, "stale_error": fresh["stale_error"],
                         "checked_at": fresh["checked_at"], "refreshed": fresh["refreshed"],
                         "unreadable": [{"id": u["id"], "message": shown.text(u["message"])}
                                        for u in fresh["unreadable"]]})
        if fresh["stale"]:
            reasons.append(f"project {name}: {projects[-1]['stale_reason']}")
        if fresh["unreadable"]:
            reasons.append(f"project {name}: {len(fresh['unreadable'])} note(s) in the store could not be read")
    _link_corrections(found)
    found.sort(key=lambda n: (n["created"], n["id"]), reverse=True)
    skills, skills_problem = _skills(machine, cfg, timeout, runtimes, offline, shown)
    if skills_problem:
        reasons.append(skills_problem)
    broken = [{"id": shown.text(b["id"]), "problem": shown.text(b["problem"])} for b in pending.unreadable(machine)]
    return {
        "version": DATA_VERSION,
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "store": {"kind": cfg.store.kind, "label": shown.text(_home_relative(cfg.store.label()))},
        "agent": shown.text(cfg.agent),
        "scope": "project" if project is not None else ("store" if whole_store else "machine"),
        "projects": projects,
        "notes": found,
        "skills": skills,
        "pending_unreadable": broken,
        "stale": bool(reasons),
        "stale_reasons": reasons,
        "withheld": shown.withheld,
    }


def _home_relative(label: str) -> str:
    """A folder store under the user's home as `~/...`: shorter to read, and the page names no user."""
    home = os.path.expanduser("~")
    if home not in ("", "/") and (label == home or label.startswith(home + os.sep)):
        return "~" + label[len(home):]
    return label


def _open(machine: str, cfg: Config, timeout: float | None) -> Store:
    from agentmem.store import identity

    return identity.open_known(machine, cfg.store, timeout=timeout)


def _project_notes(machine: str, cfg: Config, project: str, waiting: dict[str, Entry],
                   shown: Redactor) -> list[dict]:
    """The project's notes with their states; a purged note is left out (INV purged-gone), a retracted one
    is shown as retracted."""
    from agentmem.memory import cache, recall, withheld
    from agentmem.memory.states import project_states
    from agentmem.search import find

    states = project_states(machine, cfg.store, project)
    review_after = cfg.review_after
    out = []
    pdir = cache.project_dir(machine, cfg.store, project)
    recorded = withheld.recorded_ids(pdir)  # cached notes arrive redacted; their record says what was withheld
    for c in find.candidates(machine, cfg.store, project):
        if c.id in states.purged:
            continue
        if not c.pending and c.id in recorded:
            shown.withheld += len(withheld.withheld_of(pdir, c.id))
        parsed = notes.parse(c.data)
        known = recall.note_states(states, c.id, parsed.meta, review_after)
        out.append(note_data(c.id, project, parsed, waiting.get(c.id) if c.pending else None, shown, known))
    return out


def note_data(note_id: str, project: str, parsed: notes.Parsed, entry: Entry | None, shown: Redactor,
              known: dict | None = None) -> dict:
    """One note as the page shows it; `entry`: its pending entry when it waits for upload here; `known`:
    what the project's records say of it (`recall.note_states`: retracted, review_due, review_by, pinned)."""
    meta = parsed.meta
    corrects = meta.get("corrects")
    text = shown.fields({
        "title": parsed.title or note_id, "created": parsed.created, "agent": _str(meta.get("agent")),
        "session": _str(meta.get("session")), "tags": _strs(meta.get("tags")), "sources": _strs(meta.get("sources")),
        "body": parsed.body,
    })
    agent = text["agent"]
    return {
        "id": note_id,
        "project": project,
        "title": text["title"],
        "kind": parsed.kind,
        "created": text["created"],
        "agent": agent,
        "machine": agent.rpartition("@")[2] if "@" in agent else "",
        "tags": text["tags"],
        "sources": text["sources"],
        "session": text["session"] or None,
        "corrects": corrects if isinstance(corrects, str) and ids.ID.match(corrects) else None,
        "corrected_by": [],
        "body": text["body"],
        "review_by": (known or {}).get("review_by"),
        "states": note_states(entry, shown, known),
    }


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _strs(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def note_states(entry: Entry | None, shown: Redactor, known: dict | None = None) -> list[dict]:
    """What this machine knows about a note beyond its content: [{name, label, detail}], the page shows
    each as a badge and a line, and filters by `name`:

    - `pending`: saved here, its upload not confirmed (detail: why);
    - `retracted`: a retraction record names it (who, when, why); search hides it, the view shows it;
    - `review-due`: its review date (`review_by`, or `[memory] review_after`) has passed;
    - `pinned`: shown at the start of every session of the project.
    """
    states = []
    if entry is not None:
        states.append({"name": "pending", "label": "pending upload", "detail": shown.text(pending_reason(entry))})
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
    if entry.damaged:
        return f"its pending entry is damaged ({entry.damaged}); its destination is not guessed"
    if entry.last_error:
        message = entry.last_error.get("message") or entry.last_error.get("error") or "unknown"
        tries = f" after {entry.attempts} attempt(s)" if entry.attempts else ""
        return f"not confirmed by the store{tries}: {message}"
    return "saved on this machine; its upload has not been confirmed yet"


def _link_corrections(found: list[dict]) -> None:
    """Fill `corrected_by` (newest first) from each note's `corrects`, across every note shown."""
    present = {n["id"]: n for n in found}
    pairs = {n["id"]: n["corrects"] for n in found if n["corrects"]}
    for target, fixers in corrections.corrected_by(pairs).items():
        if target in present:
            present[target]["corrected_by"] = fixers


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
