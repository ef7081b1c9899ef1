"""Exporting memory as plain Markdown: one folder per project, an index per project, a manifest.

The export is for people and other tools (any editor, Obsidian): each note is written as the file the
store holds (frontmatter + Markdown, so its ID and every field travel with it), `index.md` lists a
project's notes newest first with links, and `manifest.json` names every file with its SHA-256, so
`import --from agentmem` can bring the same bytes back under the same IDs.

Rerunning into the same folder changes nothing that did not change: a file is rewritten only when its
bytes differ, the manifest and indexes are deterministic, and a file an earlier export wrote whose note
is gone (purged) is removed. Nothing in the folder that the manifest does not name is ever touched.

Notes pass the same credential redaction as `read` (`memory/withheld.py`, INV no-credentials): a note that
holds a credential is exported with `[REDACTED:<kind>]` in its place and listed in `withheld`.
"""

from __future__ import annotations

import hashlib
import json
import os

from agentmem import fsutil
from agentmem.errors import InvalidInput
from agentmem.memory import ids, notes

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from agentmem.config import Config

MANIFEST = "manifest.json"
FORMAT = "agentmem-export"
FORMAT_VERSION = 1


class ExportedNote:
    __slots__ = ("id", "project", "data", "parsed", "pending")

    def __init__(self, note_id: str, project: str, data: bytes, pending: bool):
        self.id, self.project, self.data, self.pending = note_id, project, data, pending
        self.parsed = notes.parse(data)

    @property
    def relpath(self) -> str:
        return f"{self.project}/{ids.note_file(self.id)}"


def export(machine: str, cfg: Config, dest: str, projects: list[str], *, timeout: float | None = None) -> dict:
    """Refresh each project as search does, then write its notes (cached and pending) into `dest`."""
    from agentmem.memory import cache, pending
    from agentmem.memory import withheld as held
    from agentmem.search import follow

    dest = os.path.abspath(os.path.expanduser(dest))
    previous = check_destination(dest)
    exported: list[ExportedNote] = []
    withheld: list[dict] = []
    stale: dict[str, str] = {}
    for project in projects:
        status = cache.ensure_fresh(machine, cfg.store, project, max_age=cfg.cache_max_age, timeout=timeout,
                                    index=follow.update)
        if status.stale:
            stale[project] = status.reason or "the store could not be checked"
        seen = set()
        waiting = pending.project_notes(machine, project)
        for note_id, data in waiting.items():
            seen.add(note_id)
            exported.append(_exported(note_id, project, data, True, withheld))
        pdir = cache.project_dir(machine, cfg.store, project)
        recorded = held.recorded_ids(pdir)
        for note_id in cache.cached_ids(machine, cfg.store, project):
            cached = cache.read_cached(machine, cfg.store, project, note_id) if note_id not in seen else None
            if cached is not None:  # cleaned when it entered the cache: its record says what was withheld
                if note_id in recorded:
                    withheld.extend({"id": note_id, **w} for w in held.withheld_of(pdir, note_id))
                exported.append(_exported(note_id, project, cached, False, withheld))
    counts = write(dest, exported, projects, previous)
    return {"path": dest, "projects": {p: sum(1 for n in exported if n.project == p) for p in projects},
            "notes": len(exported), **counts, "stale": bool(stale),
            "stale_projects": stale, "withheld": withheld}


def _exported(note_id: str, project: str, data: bytes, is_pending: bool, withheld: list[dict]) -> ExportedNote:
    shown, found = redacted(data)
    withheld.extend({"id": note_id, **w} for w in found)
    return ExportedNote(note_id, project, shown, is_pending)


def read_manifest(dest: str) -> dict | None:
    """The manifest of an earlier export in `dest`, or None when there is none; a file that is not one is
    refused (the folder is someone else's)."""
    path = os.path.join(dest, MANIFEST)
    try:
        raw = fsutil.read_bytes(path, 64 * 1024 * 1024)
    except FileNotFoundError:
        return None
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, ValueError):
        data = None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("notes"), list):
        raise InvalidInput(f"{path} is not an agentmem export manifest; nothing was written",
                           hint="export into an empty folder or into an earlier agentmem export")
    return data


def check_destination(dest: str) -> dict | None:
    """Refuse a destination that is a file, or a non-empty folder that no agentmem export wrote."""
    if os.path.exists(dest) and not os.path.isdir(dest):
        raise InvalidInput(f"{dest} exists and is not a folder; nothing was written")
    previous = read_manifest(dest) if os.path.isdir(dest) else None
    if previous is None and os.path.isdir(dest) and os.listdir(dest):
        raise InvalidInput(f"{dest} is not empty and holds no agentmem export; nothing was written",
                           hint="name a new or empty folder (an earlier export's folder is updated in place)")
    return previous


def redacted(data: bytes) -> tuple[bytes, list[dict]]:
    """The note's bytes fit to show, and what was withheld (INV no-credentials): the one redaction step."""
    from agentmem.memory import withheld

    return withheld.clean(data)


def index_text(project: str, exported: list[ExportedNote]) -> str:
    """A project's index: newest first, one line a note with a relative link (Obsidian opens both)."""
    lines = [f"# {project}", "", f"{len(exported)} note(s), newest first. Exported by agentmem.", ""]
    for n in sorted(exported, key=lambda n: (n.parsed.created, n.id), reverse=True):
        title = n.parsed.title.replace("[", "(").replace("]", ")").replace("\n", " ")
        extra = [n.parsed.kind, n.parsed.created[:10]]
        if n.parsed.get("corrects"):
            extra.append(f"corrects {n.parsed.get('corrects')}")
        if n.pending:
            extra.append("pending upload")
        lines.append(f"- [{title}]({ids.note_file(n.id)}) - {', '.join(extra)}")
    return "\n".join(lines) + "\n"


def write(dest: str, exported: list[ExportedNote], projects: list[str], previous: dict | None) -> dict:
    """Write the export into `dest`; returns counts of what changed."""
    os.makedirs(dest, exist_ok=True)
    if previous is None:  # mark the folder as an export first, so a rerun after a crash is not refused
        empty = {"format": FORMAT, "version": FORMAT_VERSION, "projects": [], "notes": []}
        fsutil.write_atomic(os.path.join(dest, MANIFEST), (json.dumps(empty) + "\n").encode("utf-8"))
    counts = {"written": 0, "unchanged": 0, "removed": 0}
    files: dict[str, bytes] = {n.relpath: n.data for n in exported}
    by_project: dict[str, list[ExportedNote]] = {p: [] for p in projects}
    for n in exported:
        by_project.setdefault(n.project, []).append(n)
    for project, members in by_project.items():
        files[f"{project}/index.md"] = index_text(project, members).encode("utf-8")
    manifest = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "projects": sorted(by_project),
        "notes": [{"id": n.id, "project": n.project, "path": n.relpath,
                   "sha256": hashlib.sha256(n.data).hexdigest()}
                  for n in sorted(exported, key=lambda n: (n.project, n.id))],
    }
    files[MANIFEST] = (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    manifest_bytes = files.pop(MANIFEST)
    for rel, data in sorted(files.items()):
        counts["written" if _write_if_changed(os.path.join(dest, rel), data) else "unchanged"] += 1
    if counts["written"] and hasattr(os, "sync"):
        os.sync()  # one flush for every file written, not an fsync each: 10k notes took 25 s (docs/benchmarks.md)
    # The manifest last and durable: a crash before it leaves files a rerun rewrites, never a folder it refuses.
    counts["written" if _write_if_changed(os.path.join(dest, MANIFEST), manifest_bytes, durable=True)
           else "unchanged"] += 1
    for rel in _previous_files(previous) - set(files):
        try:
            os.remove(os.path.join(dest, rel))
            counts["removed"] += 1
        except FileNotFoundError:
            pass
    return counts


def _previous_files(previous: dict | None) -> set[str]:
    """What an earlier export wrote (its notes and indexes), as relative paths that stay inside the folder."""
    if previous is None:
        return set()
    out = {f"{p}/index.md" for p in previous.get("projects", []) if isinstance(p, str)}
    out |= {e["path"] for e in previous["notes"] if isinstance(e, dict) and isinstance(e.get("path"), str)}
    return {rel for rel in out if _inside(rel)}


def _inside(rel: str) -> bool:
    parts = rel.split("/")
    return not os.path.isabs(rel) and all(p not in ("", ".", "..") for p in parts)


def _write_if_changed(path: str, data: bytes, *, durable: bool = False) -> bool:
    try:
        with open(path, "rb") as f:
            if f.read(len(data) + 1) == data:
                return False
    except FileNotFoundError:
        pass
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fsutil.write_atomic(path, data, durable=durable)  # each file whole or absent; write() flushes them all once
    return True
