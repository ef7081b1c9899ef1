"""Exporting memory as plain Markdown: one folder per project, an index per project, a manifest.

The export is for people and other tools (any editor, Obsidian): each note is written as the file the
store holds (frontmatter + Markdown, so its ID and every field travel with it), `index.md` lists a
project's notes newest first with links, and `manifest.json` names every file with its SHA-256, so
`import --from agentmem` can bring the same bytes back under the same IDs.

The notes' states travel too: each retract, pin, unpin and purge record of a project is written to
`<project>/records/` and listed in the manifest's `records` (`exchange/carried.py`), and the index marks
retracted and pinned notes; a note a purge record names is never exported.

Rerunning into the same folder does work in proportion to what changed: a cached note whose cached
file and exported file are both as the last export left them is neither read, screened nor written again
(its SHA-256 and index line come from `exchange/exported_from.py`'s record; one `stat` of each file tells),
a file is rewritten only when its bytes differ, the manifest and indexes are deterministic, and a file an
earlier export wrote whose note is gone (purged) is removed. What a run wrote is flushed (`fsutil.Flush`: an
fsync each, or past 2,000 files one syncfs of their file system; never every disk) before the manifest,
which is written last and durable: an export that says done is on disk. Nothing in the folder that the
manifest does not name is ever touched, and nothing outside the
folder ever is: a project folder (or a record folder) that is a link is refused before anything is
written, an earlier manifest is read confined (INV confined-read: a FIFO there is refused, not waited on)
and names only `<project>/<file>` paths, and a temp file a killed export left behind neither counts as
the folder's content nor survives long (`fsutil.sweep_temp`).

With a team store on this machine (`[team]`), the team's notes and records of each project are exported
too, under `@team/<project>/` (a name no project can have), their manifest entries marked `"scope": "team"`
and the team's projects listed in `team_projects`; `import --from agentmem` puts them back only into the
team store, and only when asked (`--team`). A machine without a team writes exactly what it wrote before.

Notes pass the same credential redaction as `read` (`replica/redacted_copies.py`, INV no-credentials): a note that
holds a credential is exported with `[REDACTED:<kind>]` in its place and listed in `withheld`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re

from agentmem import fsutil
from agentmem.errors import InvalidInput
from agentmem.exchange import carried, confined, exported_from
from agentmem.note import document, ids

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from agentmem.config import Config
    from agentmem.note.records import Record

MANIFEST = "manifest.json"
TEAM_FOLDER = carried.TEAM_FOLDER
folder_of = carried.folder_of
FORMAT = "agentmem-export"
FORMAT_VERSION = 1


class ExportedNote:
    """A note as exported: its bytes when this run read them (None: unchanged since the last export, not
    read again), its SHA-256, what the index shows of it, and its scope (the member's own store or the team's)."""

    __slots__ = ("id", "project", "data", "pending", "marks", "sha256", "title", "kind", "created", "corrects",
                 "author", "scope")

    def __init__(self, note_id: str, project: str, data: bytes | None, pending: bool, *,
                 kept: exported_from.Kept | None = None, scope: str = "personal"):
        self.id, self.project, self.data, self.pending, self.scope = note_id, project, data, pending, scope
        if data is not None:
            self.sha256, fields = hashlib.sha256(data).hexdigest(), index_fields(data)
        else:
            assert kept is not None
            self.sha256, fields = kept.sha256, kept.fields
        self.title, self.kind, self.created, self.corrects, self.author = fields
        self.marks: list[str] = []  # its states, as the index shows them (retracted, pinned)

    @property
    def relpath(self) -> str:
        return f"{folder_of(self.project, self.scope)}/{ids.note_file(self.id)}"


def index_fields(data: bytes) -> tuple[str, str, str, str, str]:
    """What the index shows of a note: title, kind, created, corrects and author ("" for none)."""
    parsed = document.parse(data)
    corrects = parsed.get("corrects")
    return (parsed.title, parsed.kind, parsed.created, str(corrects) if corrects else "",
            document.author_of(parsed.meta) or "")


def export(machine: str, cfg: Config, dest: str, projects: list[str], *, timeout: float | None = None) -> dict:
    """Refresh each project as search does, then write its notes (cached and pending) into `dest`."""
    from agentmem.replica import cache
    from agentmem.replica import redacted_copies as held
    from agentmem.replica.states import project_states
    from agentmem.search import follow
    from agentmem.uploads import pending

    dest = os.path.abspath(os.path.expanduser(dest))
    previous = check_destination(dest)
    exported: list[ExportedNote] = []
    kept: list[tuple[Record, bytes, str]] = []
    withheld: list[dict] = []
    stale: dict[str, str] = {}
    saves: list[exported_from.ExportedFrom] = []
    for scope in cfg.scopes():  # the member's own store, then the team's (with a `[team]`)
        where = cfg.scoped(scope)
        made = exported_from.ExportedFrom(machine, where.store.key, dest)
        for project in projects:
            status = cache.ensure_fresh(machine, where.store, project, max_age=cfg.cache_max_age, timeout=timeout,
                                        index=follow.update)
            if status.stale:
                stale[folder_of(project, scope)] = status.reason or "the store could not be checked"
            states = project_states(machine, where.store, project)
            mine: list[ExportedNote] = []
            waiting = pending.project_notes(machine, where.store, project)
            for note_id, data in waiting.items():
                if note_id not in states.purged:
                    screened: list[dict] = []
                    mine.append(_exported(note_id, project, data, True, screened, scope))
                    withheld.extend({"id": note_id, **w} for w in screened)
            pdir = cache.project_dir(machine, where.store, project)
            ndir = cache.notes_dir(machine, where.store, project)
            recorded = held.recorded_ids(pdir)
            for note_id in cache.cached_ids(machine, where.store, project):
                if note_id in waiting or note_id in states.purged:
                    continue
                name = ids.note_file(note_id)
                try:  # before the read: a note rewritten in between is read again next time
                    source = exported_from.source_of(os.stat(os.path.join(ndir, name)))
                except (FileNotFoundError, NotADirectoryError):
                    continue
                rel = f"{folder_of(project, scope)}/{name}"
                unchanged = made.reuse(rel, source)
                if unchanged is None:
                    cached = cache.read_cached(machine, where.store, project, note_id)
                    if cached is None:
                        continue
                    found: list[dict] = []
                    n = _exported(note_id, project, cached, False, found, scope)
                    made.note(rel, source, n.sha256, (n.title, n.kind, n.created, n.corrects, n.author), found)
                else:
                    found = unchanged.withheld
                    n = ExportedNote(note_id, project, None, False, kept=unchanged, scope=scope)
                # cleaned when it entered the cache: its record says what was withheld
                if note_id in recorded:
                    withheld.extend({"id": note_id, **w} for w in held.withheld_of(pdir, note_id))
                withheld.extend({"id": note_id, **w} for w in found)
                mine.append(n)
            pinned = states.pinned()
            for n in mine:
                n.marks = (["retracted"] if n.id in states.retracted else []) + (["pinned"] if n.id in pinned else [])
            exported.extend(mine)
            kept.extend((r, data, scope) for r, data in carried.of_project(machine, where, project))
        saves.append(made)
    counts = write(dest, exported, projects, previous, kept, team=cfg.team is not None)
    for made in saves:
        made.save()
    out = {"path": dest, "projects": {p: sum(1 for n in exported if n.project == p and n.scope == "personal")
                                      for p in projects},
           "notes": len(exported), "records": len(kept), **counts, "stale": bool(stale),
           "stale_projects": stale, "withheld": withheld}
    if cfg.team is not None:
        out["team_projects"] = {p: sum(1 for n in exported if n.project == p and n.scope == "team") for p in projects}
    return out


def _exported(note_id: str, project: str, data: bytes, is_pending: bool, withheld: list[dict],
              scope: str = "personal") -> ExportedNote:
    """The note screened (INV no-credentials); what was withheld is added to `withheld`, without its ID."""
    shown, found = redacted(data)
    withheld.extend(found)
    return ExportedNote(note_id, project, shown, is_pending, scope=scope)


MAX_MANIFEST = 64 * 1024 * 1024


def read_manifest(dest: str, nothing: str = "nothing was written") -> dict | None:
    """The manifest of an earlier export in `dest`, or None when there is none; a file that is not one is
    refused (the folder is someone else's), as is a manifest that is a link, a FIFO or too large."""
    path = os.path.join(dest, MANIFEST)
    try:
        raw = confined.read(dest, MANIFEST, MAX_MANIFEST)
    except FileNotFoundError:
        return None
    except confined.Refused as exc:
        raise InvalidInput(f"{path} is {exc.reason}: not an agentmem export manifest; {nothing}") from None
    try:
        data = json.loads(raw) if len(raw) <= MAX_MANIFEST else None
    except (UnicodeDecodeError, ValueError, RecursionError):
        data = None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("notes"), list):
        raise InvalidInput(f"{path} is not an agentmem export manifest; {nothing}",
                           hint="export into an empty folder or into an earlier agentmem export")
    return data


def check_destination(dest: str) -> dict | None:
    """Refuse a destination that is a file, or a non-empty folder that no agentmem export wrote. A temp
    file an export killed mid-write left (`.tmp-*`) is no content: it is swept once stale."""
    if os.path.exists(dest) and not os.path.isdir(dest):
        raise InvalidInput(f"{dest} exists and is not a folder; nothing was written")
    if not os.path.isdir(dest):
        return None
    fsutil.sweep_temp(dest)
    previous = read_manifest(dest)
    if previous is None and any(not n.startswith(fsutil.TMP_PREFIX) for n in os.listdir(dest)):
        raise InvalidInput(f"{dest} is not empty and holds no agentmem export; nothing was written",
                           hint="name a new or empty folder (an earlier export's folder is updated in place)")
    return previous


def redacted(data: bytes) -> tuple[bytes, list[dict]]:
    """The note's bytes fit to show, and what was withheld (INV no-credentials): the one redaction step."""
    from agentmem.replica import redacted_copies

    return redacted_copies.clean(data)


def index_text(project: str, exported: list[ExportedNote], scope: str = "personal") -> str:
    """A project's index: newest first, one line a note with a relative link (Obsidian opens both)."""
    heading = project if scope == "personal" else f"{project} (the team's notes)"
    lines = [f"# {heading}", "", f"{len(exported)} note(s), newest first. Exported by agentmem.", ""]
    for n in sorted(exported, key=lambda n: (n.created, n.id), reverse=True):
        title = n.title.replace("[", "(").replace("]", ")").replace("\n", " ")
        extra = [n.kind, n.created[:10], *n.marks]
        if n.author:  # notes saved before authors were stamped have none (issue X, item 5)
            extra.insert(2, f"by {n.author}")
        if n.corrects:
            extra.append(f"corrects {n.corrects}")
        if n.pending:
            extra.append("pending upload")
        lines.append(f"- [{title}]({ids.note_file(n.id)}) - {', '.join(extra)}")
    return "\n".join(lines) + "\n"


def write(dest: str, exported: list[ExportedNote], projects: list[str], previous: dict | None,
          kept: list[tuple[Record, bytes, str]] | None = None, *, team: bool = False) -> dict:
    """Write the export into `dest`; returns counts of what changed. Every folder written or cleaned is
    checked first: nothing is written when one is a link (it would lead outside `dest`). `kept`: each record
    with its bytes and scope; `team`: the team's projects get their own folders and index."""
    kept = kept or []
    files: dict[str, bytes | None] = {n.relpath: n.data for n in exported}  # None: as the last export left it
    files |= {carried.relpath(r, scope): data for r, data, scope in kept}
    by_project: dict[tuple[str, str], list[ExportedNote]] = {(s, p): [] for s in (["personal", "team"] if team
                                                                                    else ["personal"])
                                                             for p in projects}
    for n in exported:
        by_project.setdefault((n.scope, n.project), []).append(n)
    for (scope, project), members in by_project.items():
        files[f"{folder_of(project, scope)}/index.md"] = index_text(project, members, scope).encode("utf-8")
    stale = _previous_files(previous) - set(files)
    _check_folders(dest, set(files) | stale)
    flush = fsutil.Flush()
    flush.makedirs(dest)
    for folder in sorted({rel.rpartition("/")[0] for rel in files}):
        fsutil.sweep_temp(os.path.join(dest, *folder.split("/")))  # what a killed export left, once stale
    if previous is None:  # mark the folder as an export first, so a rerun after a crash is not refused
        empty = {"format": FORMAT, "version": FORMAT_VERSION, "projects": [], "notes": []}
        flush.done()  # the folder's own entry first
        fsutil.write_atomic(os.path.join(dest, MANIFEST), (json.dumps(empty) + "\n").encode("utf-8"))
    manifest = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "projects": sorted(p for s, p in by_project if s == "personal"),
        "notes": [{"id": n.id, "project": n.project, "path": n.relpath, "sha256": n.sha256} | _scoped(n.scope)
                  for n in sorted(exported, key=lambda n: (n.scope, n.project, n.id))],
        "records": [carried.manifest_entry(r, hashlib.sha256(data).hexdigest(), scope)
                    for r, data, scope in sorted(kept, key=lambda k: (k[2], k[0].project, k[0].id))],
    }
    if team:
        manifest["team_projects"] = sorted(p for s, p in by_project if s == "team")
    manifest_bytes = (indented_json(manifest) + "\n").encode("utf-8")
    counts = {"written": 0, "unchanged": 0, "removed": 0}
    for rel, data in sorted(files.items()):
        counts["written" if data is not None and _write_if_changed(dest, rel, data, flush) else "unchanged"] += 1
    # Exactly what this run wrote is flushed (a rerun that wrote nothing flushes nothing), each file and the
    # folders naming them, before the manifest: a crash before it leaves files a rerun rewrites, never a
    # folder it refuses, and an export that says done is on disk.
    flush.done()
    counts["written" if _write_if_changed(dest, MANIFEST, manifest_bytes, None) else "unchanged"] += 1
    for rel in sorted(stale):
        path = os.path.join(dest, *rel.split("/"))
        try:
            os.remove(path)  # a link there: the link goes, never its target
            counts["removed"] += 1
            flush.removed(path)
        except (FileNotFoundError, IsADirectoryError):
            pass
    flush.done()
    return counts


def _scoped(scope: str) -> dict:
    """A manifest entry's scope: only a team's entry says it (an export without a team is as before)."""
    return {} if scope == "personal" else {"scope": scope}


_PLAIN = re.compile(r"[A-Za-z0-9 ._:/+-]*\Z")  # a string JSON writes as it is, between quotes


def indented_json(value: object, level: int = 0) -> str:
    """`json.dumps(value, indent=2, ensure_ascii=False)`, the same text, in a fifth of the time at 100k notes
    (2.4 s there: with `indent`, json encodes in Python): the manifest's strings are mostly IDs, paths and
    digests, written as they are; any other is left to json."""
    if isinstance(value, str):
        return f'"{value}"' if _PLAIN.match(value) else json.dumps(value, ensure_ascii=False)
    if isinstance(value, (dict, list)) and value:
        pad = "  " * (level + 1)
        if isinstance(value, dict):
            items = [f"{pad}{indented_json(str(k))}: {indented_json(v, level + 1)}" for k, v in value.items()]
            return "{\n" + ",\n".join(items) + "\n" + "  " * level + "}"
        return "[\n" + ",\n".join(pad + indented_json(v, level + 1) for v in value) + "\n" + "  " * level + "]"
    return json.dumps(value, ensure_ascii=False)


def _previous_files(previous: dict | None) -> set[str]:
    """What an earlier export wrote (its notes, records and indexes): only paths of the shapes export
    writes, `<project>/<note>.md`, `<project>/index.md`, `<project>/records/<record file>`."""
    if previous is None:
        return set()
    out = {f"{p}/index.md" for p in previous.get("projects", []) if isinstance(p, str)}
    out |= {f"{TEAM_FOLDER}/{p}/index.md" for p in previous.get("team_projects", []) if isinstance(p, str)}
    for key in ("notes", "records"):
        entries = previous.get(key)
        out |= {e["path"] for e in entries if isinstance(e, dict) and isinstance(e.get("path"), str)} \
            if isinstance(entries, list) else set()
    return {rel for rel in out if _ours(rel)}


def _ours(rel: str) -> bool:
    """Whether `rel` has a shape export writes (a crafted manifest may name anything)."""
    from agentmem.config import PROJECT_NAME

    parts = rel.split("/")
    if parts[0] == TEAM_FOLDER:
        parts = parts[1:]
    if not PROJECT_NAME.match(parts[0]) or len(parts) not in (2, 3):
        return False
    if len(parts) == 3:
        return parts[1] == carried.FOLDER and ids.RECORD_FILE.match(parts[2]) is not None
    return parts[1] == "index.md" or ids.NOTE_FILE.match(parts[1]) is not None


def _check_folders(dest: str, rels: set[str]) -> None:
    """Refuse, before anything is written, a folder on the way to any file that is a link or no folder."""
    folders = {"/".join(rel.split("/")[:i]) for rel in rels for i in range(1, rel.count("/") + 1)}
    for folder in sorted(folders):
        parent, _, name = folder.rpartition("/")
        found = confined.kind(os.path.join(dest, *parent.split("/")) if parent else dest, name)
        if found not in ("folder", "missing"):
            what = "a link" if found == "link" else "not a folder"
            raise InvalidInput(f"{os.path.join(dest, folder)} is {what}: export writes only inside {dest}, where "
                               "it keeps a real folder; nothing was written",
                               hint="remove it, or export into a new folder")


def _write_if_changed(dest: str, rel: str, data: bytes, flush: fsutil.Flush | None) -> bool:
    """Write `rel` unless it holds `data` already: whole or absent, its flush left to `flush` (None: durable
    at once)."""
    try:
        if confined.read(dest, rel, len(data)) == data:
            return False
    except (FileNotFoundError, confined.Refused):
        pass  # a link or a FIFO in its place is replaced by the file (the rename replaces the entry itself)
    path = os.path.join(dest, *rel.split("/"))
    if flush is None:
        fsutil.write_atomic(path, data)
        return True
    flush.makedirs(os.path.dirname(path))
    fsutil.write_atomic(path, data, durable=False)
    flush.wrote(path)
    return True
