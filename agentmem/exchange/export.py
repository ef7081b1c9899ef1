"""Exporting memory as plain Markdown: one folder per project, an index per project, a manifest.

The export is for people and other tools (any editor, Obsidian): each note is written as the file the
store holds (frontmatter + Markdown, so its ID and every field travel with it), `index.md` lists a
project's notes newest first with links, and `manifest.json` names every file with its SHA-256, so
`import --from agentmem` can bring the same bytes back under the same IDs.

The notes' states travel too: each retract, pin, unpin and purge record of a project is written to
`<project>/records/` and listed in the manifest's `records` (`exchange/carried.py`), and the index marks
retracted and pinned notes; a note a purge record names is never exported.

Rerunning into the same folder changes nothing that did not change: a file is rewritten only when its
bytes differ, the manifest and indexes are deterministic, and a file an earlier export wrote whose note
is gone (purged) is removed. Nothing in the folder that the manifest does not name is ever touched, and
nothing outside the folder ever is: a project folder (or a record folder) that is a link is refused
before anything is written, an earlier manifest is read confined (INV confined-read: a FIFO there is
refused, not waited on) and names only `<project>/<file>` paths, and a temp file a killed export left
behind neither counts as the folder's content nor survives long (`fsutil.sweep_temp`).

Notes pass the same credential redaction as `read` (`replica/redacted_copies.py`, INV no-credentials): a note that
holds a credential is exported with `[REDACTED:<kind>]` in its place and listed in `withheld`.
"""

from __future__ import annotations

import hashlib
import json
import os

from agentmem import fsutil
from agentmem.errors import InvalidInput
from agentmem.exchange import carried, confined
from agentmem.note import document, ids

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from agentmem.config import Config
    from agentmem.note.records import Record

MANIFEST = "manifest.json"
FORMAT = "agentmem-export"
FORMAT_VERSION = 1


class ExportedNote:
    __slots__ = ("id", "project", "data", "parsed", "pending", "marks")

    def __init__(self, note_id: str, project: str, data: bytes, pending: bool):
        self.id, self.project, self.data, self.pending = note_id, project, data, pending
        self.parsed = document.parse(data)
        self.marks: list[str] = []  # its states, as the index shows them (retracted, pinned)

    @property
    def relpath(self) -> str:
        return f"{self.project}/{ids.note_file(self.id)}"


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
    kept: list[tuple[Record, bytes]] = []
    withheld: list[dict] = []
    stale: dict[str, str] = {}
    for project in projects:
        status = cache.ensure_fresh(machine, cfg.store, project, max_age=cfg.cache_max_age, timeout=timeout,
                                    index=follow.update)
        if status.stale:
            stale[project] = status.reason or "the store could not be checked"
        states = project_states(machine, cfg.store, project)
        mine: list[ExportedNote] = []
        waiting = pending.project_notes(machine, cfg.store, project)
        for note_id, data in waiting.items():
            if note_id not in states.purged:
                mine.append(_exported(note_id, project, data, True, withheld))
        pdir = cache.project_dir(machine, cfg.store, project)
        recorded = held.recorded_ids(pdir)
        for note_id in cache.cached_ids(machine, cfg.store, project):
            if note_id in waiting or note_id in states.purged:
                continue
            cached = cache.read_cached(machine, cfg.store, project, note_id)
            if cached is not None:  # cleaned when it entered the cache: its record says what was withheld
                if note_id in recorded:
                    withheld.extend({"id": note_id, **w} for w in held.withheld_of(pdir, note_id))
                mine.append(_exported(note_id, project, cached, False, withheld))
        pinned = states.pinned()
        for n in mine:
            n.marks = (["retracted"] if n.id in states.retracted else []) + (["pinned"] if n.id in pinned else [])
        exported.extend(mine)
        kept.extend(carried.of_project(machine, cfg, project))
    counts = write(dest, exported, projects, previous, kept)
    return {"path": dest, "projects": {p: sum(1 for n in exported if n.project == p) for p in projects},
            "notes": len(exported), "records": len(kept), **counts, "stale": bool(stale),
            "stale_projects": stale, "withheld": withheld}


def _exported(note_id: str, project: str, data: bytes, is_pending: bool, withheld: list[dict]) -> ExportedNote:
    shown, found = redacted(data)
    withheld.extend({"id": note_id, **w} for w in found)
    return ExportedNote(note_id, project, shown, is_pending)


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


def index_text(project: str, exported: list[ExportedNote]) -> str:
    """A project's index: newest first, one line a note with a relative link (Obsidian opens both)."""
    lines = [f"# {project}", "", f"{len(exported)} note(s), newest first. Exported by agentmem.", ""]
    for n in sorted(exported, key=lambda n: (n.parsed.created, n.id), reverse=True):
        title = n.parsed.title.replace("[", "(").replace("]", ")").replace("\n", " ")
        extra = [n.parsed.kind, n.parsed.created[:10], *n.marks]
        if n.parsed.get("corrects"):
            extra.append(f"corrects {n.parsed.get('corrects')}")
        if n.pending:
            extra.append("pending upload")
        lines.append(f"- [{title}]({ids.note_file(n.id)}) - {', '.join(extra)}")
    return "\n".join(lines) + "\n"


def write(dest: str, exported: list[ExportedNote], projects: list[str], previous: dict | None,
          kept: list[tuple[Record, bytes]] | None = None) -> dict:
    """Write the export into `dest`; returns counts of what changed. Every folder written or cleaned is
    checked first: nothing is written when one is a link (it would lead outside `dest`)."""
    kept = kept or []
    files: dict[str, bytes] = {n.relpath: n.data for n in exported}
    files |= {carried.relpath(r): data for r, data in kept}
    by_project: dict[str, list[ExportedNote]] = {p: [] for p in projects}
    for n in exported:
        by_project.setdefault(n.project, []).append(n)
    for project, members in by_project.items():
        files[f"{project}/index.md"] = index_text(project, members).encode("utf-8")
    stale = _previous_files(previous) - set(files)
    _check_folders(dest, set(files) | stale)
    os.makedirs(dest, exist_ok=True)
    for folder in sorted({rel.rpartition("/")[0] for rel in files}):
        fsutil.sweep_temp(os.path.join(dest, *folder.split("/")))  # what a killed export left, once stale
    if previous is None:  # mark the folder as an export first, so a rerun after a crash is not refused
        empty = {"format": FORMAT, "version": FORMAT_VERSION, "projects": [], "notes": []}
        fsutil.write_atomic(os.path.join(dest, MANIFEST), (json.dumps(empty) + "\n").encode("utf-8"))
    manifest = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "projects": sorted(by_project),
        "notes": [{"id": n.id, "project": n.project, "path": n.relpath,
                   "sha256": hashlib.sha256(n.data).hexdigest()}
                  for n in sorted(exported, key=lambda n: (n.project, n.id))],
        "records": [carried.manifest_entry(r, hashlib.sha256(data).hexdigest())
                    for r, data in sorted(kept, key=lambda k: (k[0].project, k[0].id))],
    }
    manifest_bytes = (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    counts = {"written": 0, "unchanged": 0, "removed": 0}
    for rel, data in sorted(files.items()):
        counts["written" if _write_if_changed(dest, rel, data) else "unchanged"] += 1
    if counts["written"] and hasattr(os, "sync"):
        os.sync()  # one flush for every file written, not an fsync each: 10k notes took 25 s (docs/benchmarks.md)
    # The manifest last and durable: a crash before it leaves files a rerun rewrites, never a folder it refuses.
    counts["written" if _write_if_changed(dest, MANIFEST, manifest_bytes, durable=True) else "unchanged"] += 1
    for rel in sorted(stale):
        try:
            os.remove(os.path.join(dest, *rel.split("/")))  # a link there: the link goes, never its target
            counts["removed"] += 1
        except (FileNotFoundError, IsADirectoryError):
            pass
    return counts


def _previous_files(previous: dict | None) -> set[str]:
    """What an earlier export wrote (its notes, records and indexes): only paths of the shapes export
    writes, `<project>/<note>.md`, `<project>/index.md`, `<project>/records/<record file>`."""
    if previous is None:
        return set()
    out = {f"{p}/index.md" for p in previous.get("projects", []) if isinstance(p, str)}
    for key in ("notes", "records"):
        entries = previous.get(key)
        out |= {e["path"] for e in entries if isinstance(e, dict) and isinstance(e.get("path"), str)} \
            if isinstance(entries, list) else set()
    return {rel for rel in out if _ours(rel)}


def _ours(rel: str) -> bool:
    """Whether `rel` has a shape export writes (a crafted manifest may name anything)."""
    from agentmem.config import PROJECT_NAME

    parts = rel.split("/")
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


def _write_if_changed(dest: str, rel: str, data: bytes, *, durable: bool = False) -> bool:
    try:
        if confined.read(dest, rel, len(data)) == data:
            return False
    except (FileNotFoundError, confined.Refused):
        pass  # a link or a FIFO in its place is replaced by the file (the rename replaces the entry itself)
    path = os.path.join(dest, *rel.split("/"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fsutil.write_atomic(path, data, durable=durable)  # each file whole or absent; write() flushes them all once
    return True
