"""Shared skills in the store: discover their complete revisions, and read one file of a revision.

INV skill-entrypoint-last (the reading side): a revision without `SKILL.md` does not exist here.
INV core-skill-reserved: the core skill is never listed from a store.
JSON shapes: `cli/reference.py` (docs/cli.md).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from agentmem.errors import Command, InvalidInput, NextStep, NotFound
from agentmem.fsutil import write_atomic
from agentmem.paths import skill_cache
from agentmem.skills import spec
from agentmem.skills.spec import INSTALL_MARKER, revision_prefix
from agentmem.store import layout
from agentmem.store.base import Store


def _skill_md(store: Store, machine: Path | None, name: str, revision: str) -> bytes:
    """A revision's SKILL.md, from the local cache when present (revisions never change)."""
    cached = None
    if machine is not None:
        cached = Path(skill_cache(machine, store.description.key, name, revision)) / spec.ENTRYPOINT
        try:
            return cached.read_bytes()
        except OSError:
            pass
    data = store.get(layout.skill_file(name, revision, spec.ENTRYPOINT))
    if cached is not None and len(data) <= spec.MAX_FILE_BYTES:
        write_atomic(cached, data)
    return data


def discover(store: Store, query: str | None = None, *, machine: Path | None = None,
             runtimes: list | None = None) -> list[dict]:
    """Skills in the store with their complete revisions (those whose SKILL.md exists), newest first.

    `query` keeps skills whose name or a revision's description contains it (case-insensitive).
    """
    revisions: dict[tuple[str, str], dict] = {}
    for obj in store.list(layout.SKILLS):
        found = layout.parse_skill(obj.path)
        if found is None or not spec.is_valid_name(found[0]) or found[0] == spec.CORE_SKILL:
            continue
        rev = revisions.setdefault(found[:2], {"files": 0, "bytes": 0, "entry_size": None})
        rev["files"] += 1
        rev["bytes"] += obj.size
        if found[2] == spec.ENTRYPOINT:
            rev["entry_size"] = obj.size
    needle = query.casefold() if query else None
    skills: dict[str, list[dict]] = {}
    for (name, revision), rev in sorted(revisions.items()):
        if rev["entry_size"] is None:
            continue  # incomplete: SKILL.md not written yet
        description, problem = None, None
        if rev["entry_size"] > spec.MAX_FILE_BYTES:
            problem = "SKILL.md is too large"
        else:
            try:
                meta = spec.parse_skill_md(_skill_md(store, machine, name, revision))
                description = meta["description"]
                if meta["name"] != name:
                    problem = f"SKILL.md declares name {meta['name']!r}"
            except (InvalidInput, NotFound) as exc:
                problem = exc.one_line()
        skills.setdefault(name, []).append({"revision": revision, "description": description,
                                            "files": rev["files"], "bytes": rev["bytes"], "problem": problem})
    out = []
    for name, revs in sorted(skills.items()):
        if needle and needle not in name.casefold() and not any(
            needle in (r["description"] or "").casefold() for r in revs
        ):
            continue
        revs.sort(key=lambda r: r["revision"], reverse=True)
        out.append({"name": name, "installed": installed_revisions(name, runtimes or []), "revisions": revs})
    return out


def installed_revisions(name: str, runtimes: list) -> list[dict]:
    """Which revision of `name` each runtime has installed (revision None: installed by other means)."""
    out = []
    for rt in runtimes:
        if rt.skills_root is None:
            continue  # a CLI that reads no skill folder
        folder = Path(rt.skills_root) / name
        if not os.path.lexists(folder):
            continue
        revision = None
        try:
            revision = json.loads((folder / INSTALL_MARKER).read_text()).get("revision")
        except (OSError, ValueError, AttributeError):
            pass
        out.append({"runtime": rt.name, "revision": revision})
    return out


def read_file(store: Store, name: str, revision: str, path: str = spec.ENTRYPOINT) -> dict:
    """One file of a complete revision, and the revision's file list."""
    spec.check_name(name)
    spec.check_revision(revision)
    spec.check_file_path(path)
    prefix = revision_prefix(name, revision)
    listing = store.list(prefix)
    files = sorted(o.path[len(prefix) + 1:] for o in listing)
    if spec.ENTRYPOINT not in files:
        raise NotFound(f"no published revision {revision} of skill {name}",
                       hint=NextStep("`{}` lists published revisions", Command("skills")))
    if path not in files:
        raise NotFound(f"skill {name} revision {revision} has no file {path}")
    size = next(o.size for o in listing if o.path == f"{prefix}/{path}")
    if size > spec.MAX_FILE_BYTES:
        raise InvalidInput(f"{path} is {size} bytes, over the {spec.MAX_FILE_BYTES}-byte skill file limit")
    data = store.get(f"{prefix}/{path}")
    return {"status": "ok", "name": name, "revision": revision, "path": path,
            "content": data.decode("utf-8", errors="replace"), "files": files}
