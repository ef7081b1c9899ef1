"""`agentmem import`: bring memories in from an agentmem export or another tool's own files.

A dry run by default: every item is listed with what would happen (`save`, `present`, `refused`) and
nothing is written. With `apply`, each item to save goes through the one save path (persisted as
pending before its upload: INV nothing-lost), credentials refused or redacted as `save` does; an
imported memory's `agent` names the tool it came from (`codex@<host>`), its tags `imported-<tool>`.

Each memory goes to the project it belongs to: a memory its tool tied to a project folder, to the
project that folder is mapped to here (refused, saying so, when none is); one of the folder import
runs for (Claude Code's, a memory bank), to that folder's project. Given as PATH, Claude Code's folder
of another directory goes to that directory's project (known by its slug: `native.Slugged`), and a memory
bank of another checkout to that checkout's (`native.Holder`); either, when unmapped, only with
`--project`. A global memory (of no project) goes only to the project `--project` names (refused,
asking for it, without). With `--project`, memories that belong to another project are refused.

Idempotent by content: an item whose text a note of the project already holds (in the store, as the
refreshed cache shows it, or pending on this machine), as given or as `--redact` saves it, is `present`,
so a second `--apply` saves nothing. An agentmem export keeps IDs and bytes: its notes and records are
sent as they are, under their own IDs (`exchange/carried.py` for the records), and one whose ID the
project already has is `present`. Nothing purged returns (INV purged-stays-gone): a note a purge
record names is refused, and so is a memory whose text a purge record names by its digest
(`records.content_digest`: another tool's memory imported again, under a new ID).
"""

from __future__ import annotations

import hashlib
import os

from agentmem import errors
from agentmem.config import check_project_name
from agentmem.errors import Command, InvalidInput, NextStep, Option
from agentmem.exchange import carried, confined, export, native, sources
from agentmem.note import document, ids, records

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from agentmem.config import Config
    from agentmem.note.records import Record, States


class Planned:
    """One item and what import does with it: `action` is save, present or refused (with `reason`).
    `project` is None for an item that has no project to go to."""

    __slots__ = ("item", "project", "action", "reason", "note_id", "data", "record")

    def __init__(self, item: native.Item, project: str | None, action: str, reason: str | NextStep | None = None,
                 note_id: str | None = None, data: bytes | None = None, record: Record | None = None):
        self.item, self.project, self.action, self.reason = item, project, action, reason
        self.note_id, self.data, self.record = note_id, data, record  # an agentmem note's ID and bytes; a record

    def to_json(self) -> dict:
        out = {"action": self.action, "project": self.project, "title": shown(self.item.title),
               "source": shown(self.item.source)}
        if self.note_id:
            out["id"] = self.note_id
        if self.record is not None:
            out |= {"id": self.record.id, "kind": self.record.kind, "note": self.record.note}
        if self.reason:
            out["reason"] = shown(str(self.reason))  # an option it names, as the CLI spells it
        return out


def shown(text: str) -> str:
    """Text fit to print (INV no-credentials): a memory's title, or a file name, may hold a token."""
    from agentmem.safety import credentials, screening

    return screening.withhold(text, credentials.env_secrets())[0]


def _scope_of(entry: dict) -> str | None:
    """An export entry's scope (personal, or team: the team's store's), None when it names another."""
    theirs = entry.get("scope", "personal")
    return theirs if theirs in ("personal", "team") else None


def _unknown_scope(entry: dict) -> str | None:
    """Why an entry of no scope agentmem writes is refused, or None."""
    if _scope_of(entry) is None:
        return f"of an unknown scope {str(entry.get('scope'))[:20]!r}"
    return None


def agentmem_items(folder: str, only: str | None,
                   scope: str = "personal") -> tuple[list[Planned], list[Planned], dict[str, int]]:
    """An export's notes and records, each checked against its manifest entry: (notes, records, left),
    planned `save` (or refused, with the reason) before the store is consulted. Entries of the other scope
    than `scope` (the store imported into) are left out, as another project's are with `only`, and counted
    in `left` ({notes, records}): a team note (or record) goes only into the team's store, with --team; a
    member's own only into their own (INV personal-stays-personal)."""
    manifest = export.read_manifest(folder, "nothing was imported")
    if manifest is None:
        raise InvalidInput(f"{folder} holds no {export.MANIFEST}: not an agentmem export")
    found: list[Planned] = []
    left = {"notes": 0, "records": 0}
    for entry in manifest["notes"]:
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str)
                                                 for k in ("id", "project", "path", "sha256")):
            raise InvalidInput(f"{folder}/{export.MANIFEST} has a malformed entry; nothing was imported")
        if _taken(entry, only, scope, left, "notes"):
            found.append(_note(folder, entry, _unknown_scope(entry)))
    held: list[Planned] = []
    for entry in manifest.get("records") or []:
        try:
            entry = carried.check_entry(entry)
        except (ValueError, InvalidInput):
            raise InvalidInput(f"{folder}/{export.MANIFEST} has a malformed record entry; nothing was imported") \
                from None
        if _taken(entry, only, scope, left, "records"):
            held.append(_record(folder, entry, _unknown_scope(entry)))
    return found, held, left


def _taken(entry: dict, only: str | None, scope: str, left: dict[str, int], kind: str) -> bool:
    """Whether this import plans an export entry: of the project `only` names (any, without), and of `scope`
    or of none agentmem writes (then refused, saying so); the other scope's is counted in `left[kind]`."""
    if only is not None and entry["project"] != only:
        return False
    if _scope_of(entry) not in (scope, None):
        left[kind] += 1
        return False
    return True


def left_steps(cfg: Config, path: str, project: str | None, left: dict[str, int]) -> list[NextStep]:
    """What an import into `cfg`'s store left of an export's other scope, and the import that takes it: the
    same PATH (and --project) with --team added, or, from the team's import, without it; then, for the
    team's notes on a machine without a team store, how to add one (that import needs it)."""
    from agentmem.config import TEAM_HINT

    other = "personal" if cfg.scope == "team" else "team"
    words = [*(("--project", project) if project is not None else ()), *(("--team",) if other == "team" else ())]
    steps = [NextStep.of(f"left {left['notes']} {other} note(s) and {left['records']} record(s) for their own "
                         "import: `", Command("import", "--from", "agentmem", path, *words), "`")]
    if other == "team" and cfg.team is None:
        steps.append(NextStep.of("this machine has no team store: ", TEAM_HINT))
    return steps


def _read(folder: str, rel: str, limit: int) -> tuple[bytes | None, str | None]:
    """(bytes, None), or (None, why the file is not read): confined to the export (INV confined-read)."""
    try:
        data = confined.read(folder, rel, limit)
    except confined.Refused as exc:
        return None, exc.reason
    except FileNotFoundError:
        return None, "its file is missing from the export"
    except OSError as exc:
        return None, f"its file cannot be read ({exc.strerror})"
    return data, None


def _note(folder: str, entry: dict, elsewhere: str | NextStep | None = None) -> Planned:
    note_id, project = ids.check_id(entry["id"]), entry["project"]
    rel = f"{carried.folder_of(project, entry.get('scope', 'personal'))}/{ids.note_file(note_id)}"
    item = native.Item(note_id, "", [], os.path.join(folder, *rel.split("/")))
    if elsewhere is not None:
        return Planned(item, project, "refused", elsewhere, note_id)
    if entry["path"] != rel:
        return Planned(item, project, "refused", f"the manifest names it at {entry['path']!r}, not {rel!r}", note_id)
    data, why = _read(folder, rel, document.MAX_NOTE_BYTES + 1)
    if data is None:
        return Planned(item, project, "refused", why, note_id)
    parsed = document.parse(data)
    item = native.Item(parsed.title or note_id, parsed.body, [], item.source)
    if len(data) > document.MAX_NOTE_BYTES:
        return Planned(item, project, "refused", f"larger than a note may be ({document.MAX_NOTE_BYTES} bytes)",
                       note_id)
    if hashlib.sha256(data).hexdigest() != entry["sha256"]:
        return Planned(item, project, "refused", "its file changed since the export (SHA-256 differs from the "
                       "manifest), so its ID no longer names these bytes", note_id)
    return Planned(item, project, "save", None, note_id, data)


def _record(folder: str, entry: dict, elsewhere: str | NextStep | None = None) -> Planned:
    record_file = ids.record_file(entry["id"], entry["kind"])
    rel = f"{carried.folder_of(entry['project'], entry.get('scope', 'personal'))}/{carried.FOLDER}/{record_file}"
    item = native.Item(f"{entry['kind']} {entry['note']}", "", [], os.path.join(folder, *rel.split("/")))
    planned = Planned(item, entry["project"], "refused", note_id=None)
    if elsewhere is not None:
        planned.reason = elsewhere
        return planned
    if entry["path"] != rel:
        planned.reason = f"the manifest names it at {entry['path']!r}, not {rel!r}"
        return planned
    data, why = _read(folder, rel, records.MAX_RECORD_BYTES + 1)
    record = carried.parsed(entry, data) if data is not None else None
    if data is not None and hashlib.sha256(data).hexdigest() != entry["sha256"]:
        why = "its file changed since the export (SHA-256 differs from the manifest)"
    elif data is not None and record is None:
        why = "not a record agentmem wrote, or not the one the manifest names"
    if record is None or why:
        planned.reason = why
        return planned
    planned.action, planned.record = "save", record
    return planned


def _native_items(fmt: str, path: str, cfg: Config, project: str | None, here: str | None) -> list[Planned]:
    """Another tool's memories, each planned `save` into the project it belongs to, or refused."""
    out = []
    for item in sources.read_items(fmt, path):
        dest, why = _destination(cfg, item, project, here, fmt)
        out.append(Planned(item, dest, "refused" if why or item.problem else "save", item.problem or why))
    return out


def _destination(cfg: Config, item: native.Item, project: str | None, here: str | None,
                 fmt: str) -> tuple[str | None, str | NextStep | None]:
    """(the project the item goes to, None), or (its project if known, why it goes nowhere)."""
    from agentmem.config import canonical

    home = item.home
    if home == native.HERE:
        return (here, None) if here else (None, NextStep("pass {} (or run import inside a mapped folder)",
                                                         Option("project", "PROJECT")))
    if home is None:
        if project is not None:
            return project, None
        return None, NextStep.of(f"a global {fmt} memory, of no project: pass ", Option("project", "PROJECT"),
                                 " to import it into one")
    if home == native.UNKNOWN:
        return None, NextStep.of(f"{fmt} recorded no project folder for it: import its folder as PATH with ",
                                 Option("project", "PROJECT"))
    owner: str | None = None
    if isinstance(home, native.Holder):  # a memory bank of another folder, given as PATH
        try:
            owner = cfg.resolve_project(cwd=home)
        except errors.NotConfigured:
            if project is not None:
                return project, None
            return None, NextStep.of(f"the folder holding it ({home}) is not mapped here: map it with ",
                                     Command("map", "DIRECTORY", "PROJECT"), ", or pass ",
                                     Option("project", "PROJECT"))
    elif isinstance(home, native.Hashed):
        owners = set()
        for directory, name in cfg.projects.items():
            forms = {os.path.expanduser(directory), os.path.expanduser(directory).rstrip(os.sep), canonical(directory)}
            if any(home.matches(f) for f in forms):
                owners.add(check_project_name(name))
        known = f"its project folder ({fmt} knows it only by {home.how})"
        if len(owners) > 1:
            return None, NextStep.of(f"{known} may be that of project {', '.join(sorted(owners))}: pass ",
                                     Option("project", "PROJECT"), " to say which")
        if not owners:
            if isinstance(home, native.Slugged):  # the folder given as PATH is of no mapped project
                if project is not None:
                    return project, None
                return None, NextStep.of(f"{known} is not mapped here: map that directory with ",
                                         Command("map", "DIRECTORY", "PROJECT"), ", or pass ",
                                         Option("project", "PROJECT"))
            return None, f"{known} is not mapped here"
        owner = owners.pop()
    else:
        try:
            owner = cfg.resolve_project(cwd=home)
        except errors.NotConfigured:
            return None, f"it belongs to {home}, which is not mapped to a project on this machine"
    if project is not None and owner != project:
        return owner, NextStep.of(f"it belongs to project {owner}, not {project}: run import without ",
                                  Option("project"), " to import it")
    return owner, None


def plan(machine: str, cfg: Config, fmt: str, path: str, project: str | None = None, *, here: str | None = None,
         redact: bool = False, timeout: float | None = None) -> dict:
    """What importing `path` would do, item by item, after refreshing each project as search does.
    `project`: the one --project names; `here`: the project of the directory import runs for. `cfg` names the
    store imported into: a team-scoped config (`import --team`) takes an export's team notes only."""
    from agentmem.replica import cache
    from agentmem.replica.states import project_states
    from agentmem.safety import credentials
    from agentmem.search import follow

    if fmt not in sources.FORMATS:
        raise InvalidInput(f"unknown import format {fmt!r}: one of {', '.join(sources.FORMATS)}")
    held: list[Planned] = []
    other_scope: dict | None = None  # what of an export's other scope was left for its own import
    steps: list[NextStep] = []
    if fmt == "agentmem":
        planned, held, left = agentmem_items(path, project, cfg.scope)
        if left["notes"] or left["records"]:
            other_scope = {"scope": "personal" if cfg.scope == "team" else "team", **left}
            steps = left_steps(cfg, path, project, left)
    else:
        planned = _native_items(fmt, path, cfg, project, here)
    purged_by_export = {p.record.note for p in held if p.record is not None and p.record.kind == "purge"}
    digests_by_export = {p.record.digest for p in held
                         if p.record is not None and p.record.kind == "purge" and p.record.digest}
    known: dict[str, tuple[set[str], set[str], States]] = {}
    purged_texts: dict[str, set[str]] = {}
    stale: dict[str, str] = {}

    def refreshed(proj: str) -> tuple[set[str], set[str], States]:
        """What the project holds (note IDs, texts, states), once refreshed as search refreshes it."""
        if proj not in known:
            check_project_name(proj)
            status = cache.ensure_fresh(machine, cfg.store, proj, max_age=cfg.cache_max_age, timeout=timeout,
                                        index=follow.update)
            if status.stale:
                stale[proj] = status.reason or "the store could not be checked"
            known[proj] = (*_known(machine, cfg, proj), project_states(machine, cfg.store, proj))
            purged_texts[proj] = _purged_digests(machine, cfg, proj) | digests_by_export
        return known[proj]

    for p in planned:
        if p.action != "save" or p.project is None:
            continue
        have_ids, have_texts, states = refreshed(p.project)
        item = p.item
        text = f"{item.title}\n{item.body}" + (f"\n{item.source}" if p.data is None else "")  # a file name too
        purge = states.purged.get(p.note_id) if p.note_id else None
        forms = {item.body, shown(item.body)}  # as given, and as `--redact` saves it (credentials redacted)
        if purge is not None or p.note_id in purged_by_export:
            when = f" on {purge['created'][:10]}" if purge else " by a record in the export"
            p.action, p.reason = "refused", f"purged{when}: a purged note never comes back"
        elif {records.content_digest(f) for f in forms} & purged_texts[p.project]:
            p.action, p.reason = "refused", "a note with this text was purged: a purged note never comes back"
        elif len(item.body.encode("utf-8", errors="replace")) > document.MAX_NOTE_BYTES:
            p.action, p.reason = "refused", f"larger than a note may be ({document.MAX_NOTE_BYTES} bytes)"
        elif p.note_id in have_ids or (p.note_id is None and {records.text_key(f) for f in forms} & have_texts):
            p.action = "present"
        elif (found := credentials.scan(text, credentials.env_secrets())) and (p.data is not None or not redact):
            why = "cannot be redacted: its bytes are kept" if p.data else NextStep("pass {} to save it redacted",
                                                                                   Option("redact"))
            p.action, p.reason = "refused", NextStep.of(f"holds a credential ({found[0].kind}); ", why)
        else:
            have_texts.update(records.text_key(f) for f in forms)  # the same memory twice in a source: once
            if p.note_id:
                have_ids.add(p.note_id)
    record_ids: dict[str, set[str]] = {}
    for p in held:
        if p.action != "save" or p.record is None or p.project is None:
            continue
        states = refreshed(p.project)[2]
        if p.project not in record_ids:
            record_ids[p.project] = carried.held_ids(machine, cfg, p.project)
        if carried.already(p.record, states, record_ids[p.project]):
            p.action = "present"
        record_ids[p.project].add(p.record.id)
    return {"format": fmt, "path": path, "items": planned + held, "stale": bool(stale), "stale_projects": stale,
            "other_scope": other_scope, "next": steps}


def _purged_digests(machine: str, cfg: Config, project: str) -> set[str]:
    """The texts (content digests) the project's purge records name, cached and pending here."""
    from agentmem.replica import cache
    from agentmem.uploads import pending

    return records.purged_digests(cache.project_dir(machine, cfg.store, project),
                                  pending.project_records(machine, cfg.store, project).values())


def _known(machine: str, cfg: Config, project: str) -> tuple[set[str], set[str]]:
    """The IDs and the body texts (normalised) the project already holds, cached or pending."""
    from agentmem.replica import cache
    from agentmem.uploads import pending

    found: dict[str, bytes] = dict(pending.project_notes(machine, cfg.store, project))
    for note_id in cache.cached_ids(machine, cfg.store, project):
        if note_id not in found:
            data = cache.read_cached(machine, cfg.store, project, note_id)
            if data is not None:
                found[note_id] = data
    return set(found), {records.text_key(document.parse(data).body) for data in found.values()}


def tool_agent(agent: str, fmt: str) -> str:
    """The `agent` an imported memory carries: the tool it came from, on this machine's host."""
    host = agent.partition("@")[2]
    return f"{fmt}@{host}"[:64] if host else fmt


def apply(machine: str, cfg: Config, planned: list[Planned], *, fmt: str, redact: bool = False,
          timeout: float | None = None) -> list[dict]:
    """Save every item planned `save`, notes first, then records oldest first; returns one outcome a
    saved item (`saved` or `pending`).

    Into the team store (`import --team`) for a member it does not let write: the one refusal every team
    write gives (memory/team_writes.py), at the first item the store refuses, that item's pending entry
    removed; a purge record is checked before it drops anything here, as `purge --team` is."""
    from agentmem.memory import save, team_writes
    from agentmem.search import follow
    from agentmem.uploads import delivery, pending

    outcomes: list[dict] = []

    def not_done() -> str:  # what the refusal says was not imported
        return "imported" if not outcomes else f"imported after the {len(outcomes)} item(s) saved before it"

    def settled(done: pending.Outcome) -> None:
        team_writes.settle(machine, cfg, done, not_done())

    for p in sorted((p for p in planned if p.action == "save"), key=lambda p: p.record is not None):
        if p.project is None:  # never: an item is planned `save` only with a project to go to
            continue
        if p.record is not None:
            if (p.record.kind == "purge" and cfg.scope == "team"
                    and not team_writes.may_write(machine, cfg.store, p.project, timeout)):
                raise team_writes.read_only(cfg.store, not_done())
            outcome = carried.apply(machine, cfg, p.record, timeout=timeout, settle=settled)
            outcomes.append(outcome)
            if outcome["status"] != "saved":
                p.reason = "recorded locally, upload not confirmed (pending)"
            continue
        if p.data is not None and p.note_id is not None:  # an agentmem note: its own bytes under its own ID
            entry = pending.Entry(id=p.note_id, store=cfg.store, project=p.project,
                                  path=document.note_path(p.project, p.note_id), created=document.parse(p.data).created)
            pending.persist(machine, entry, p.data)
            done = delivery.deliver(machine, entry, p.data, timeout=timeout, index=follow.update)
            settled(done)
        else:
            try:
                done = save.save(machine, cfg, p.project, p.item.body, title=p.item.title, tags=p.item.tags,
                                 sources=[p.item.source], redact=redact, timeout=timeout,
                                 agent=tool_agent(cfg.agent, fmt)).outcome
            except (errors.SecretFound, InvalidInput) as exc:
                p.action, p.reason = "refused", exc.one_line()
                continue
            settled(done)
        p.note_id = done.entry.id
        outcomes.append(done.to_json())
        if done.status != "saved":
            p.reason = "saved locally, upload not confirmed (pending)"
    return outcomes


def summary(result: dict) -> dict:
    """The JSON of a plan (and what was applied)."""
    items = result["items"]
    counts = {a: sum(1 for p in items if p.action == a) for a in ("save", "present", "refused")}
    out = {"format": result["format"], "path": shown(result["path"]), "counts": counts,
           "items": [p.to_json() for p in items], "stale": result["stale"],
           "stale_projects": result["stale_projects"]}
    if result.get("other_scope"):
        out["other_scope"] = result["other_scope"]
    return out
