"""Gemini CLI's memories, as 0.61.0 keeps them (read from its bundle, `bundle/chunk-*.js`, 2026-12).

Gemini CLI dropped its `save_memory` tool and `/memory add` (the prompt now says "There is no
`save_memory` tool"): the agent edits Markdown files itself, in one of these tiers:

- global personal memory, `~/.gemini/GEMINI.md` (`getGlobalMemoryFilePath`): cross-project preferences,
  plain Markdown; older versions appended `- fact` lines under `## Gemini Added Memories`. Global: it
  belongs to no project.
- private project memory, `~/.gemini/tmp/<project id>/memory/` (`getProjectMemoryDir`): a `MEMORY.md`
  index with sibling `*.md` notes, or a legacy `GEMINI.md` there when `MEMORY.md` is missing
  (`getUserProjectMemoryPaths`). The project id is a slug of the project folder's name, claimed in
  `~/.gemini/projects.json` (`{"projects": {<absolute path>: <id>}}`) and in the marker file
  `~/.gemini/tmp/<id>/.project_root` holding that path (`ProjectRegistry`); before the slugs it was
  the SHA-256 of the path (`getFilePathHash`), which Gemini migrates but may leave behind.

Each item's home is the project folder its id names; the team's `GEMINI.md` files inside repositories
are instructions the repository already carries, not memories to import.
"""

from __future__ import annotations

import json
import os
import re

from agentmem.exchange import confined
from agentmem.exchange.native import HERE, UNKNOWN, Folder, Hashed, Item, entries, index_and_topics, index_entries

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def read(path: str) -> list[Item]:
    """Gemini's memories at `path`: its home folder (`~/.gemini`), the global GEMINI.md file alone, or
    one private project memory folder."""
    if not os.path.isdir(path):  # a file named as PATH: the user's choice, read where it resolves
        path = os.path.realpath(path)
        folder = Folder(os.path.dirname(path), "gemini")
        _global_file(folder, os.path.basename(path))
        return folder.items
    folder = Folder(path, "gemini")
    names = dict(folder.listing())
    if os.path.basename(path) == ".gemini" or {"tmp", "projects.json", "settings.json"} & set(names):
        _global_file(folder, "GEMINI.md")
        _project_folders(folder, names.get("tmp"))
    else:  # one project's memory folder, given as PATH: its owner is named beside it, else where import runs
        _project_memory(folder, "", _owner(os.path.dirname(path)) or HERE)
    return folder.items


def _global_file(folder: Folder, name: str) -> None:
    text = folder.text(name, None)
    if text is not None:
        for fact in entries(text, paragraphs=True):
            folder.items.append(Item(fact.splitlines()[0], fact + "\n", [folder.tag], folder.path(name), None))


def _project_folders(folder: Folder, tmp_kind: str | None) -> None:
    if tmp_kind is None:
        return
    if tmp_kind != "folder":
        folder.refuse("tmp", confined.LINK if tmp_kind == "link" else "not a folder")
        return
    registry = _registry(folder)
    for name, kind in folder.listing("tmp"):
        if name.startswith(".") or kind not in ("folder", "link"):
            continue
        if kind == "link":
            folder.refuse(f"tmp/{name}", confined.LINK)
            continue
        if "memory" not in dict(folder.listing(f"tmp/{name}")):
            continue
        home: str | Hashed | None = _owner(folder.path(f"tmp/{name}")) or registry.get(name)
        if home is None:
            home = Hashed(name) if _SHA256.match(name) else UNKNOWN
        _project_memory(folder, f"tmp/{name}/memory", home)


def _project_memory(folder: Folder, rel: str, home: str | Hashed | None) -> None:
    """A private project memory folder: MEMORY.md and its notes, or the legacy GEMINI.md."""
    index_and_topics(folder, rel, home, skip=("GEMINI.md",))
    if any(n == "GEMINI.md" and k == "file" for n, k in folder.listing(rel, home)):
        index_entries(folder, f"{rel}/GEMINI.md" if rel else "GEMINI.md", set(), home, paragraphs=True)


def _owner(project_tmp: str) -> str | None:
    """The project path the marker `.project_root` in a `tmp/<id>` folder names, if it names one."""
    try:
        data = confined.read(project_tmp, ".project_root", 4096)
    except (OSError, confined.Refused):
        return None
    text = data.decode("utf-8", errors="replace").strip()
    return text if os.path.isabs(text) and "\n" not in text else None


def _registry(folder: Folder) -> dict[str, str]:
    """projects.json turned around: project id -> project path."""
    try:
        data = json.loads(confined.read(folder.root, "projects.json", 1024 * 1024))
    except (OSError, ValueError, confined.Refused):
        return {}
    projects = data.get("projects") if isinstance(data, dict) else None
    if not isinstance(projects, dict):
        return {}
    return {slug: path for path, slug in projects.items()
            if isinstance(slug, str) and isinstance(path, str) and os.path.isabs(path)}
