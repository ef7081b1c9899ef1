"""Codex's memories, as 0.171.0 keeps them in `$CODEX_HOME/memories` (`~/.codex/memories`); the formats
are the ones its binary's memory prompts demand (`strings` of `codex`, 2026-12):

- `MEMORY.md`, the handbook: blocks that each start `# Task Group: <...>`, then `scope: ...` and
  `applies_to: cwd=<primary working directory ...>; reuse_rule=...`, then `## Task <n>` sections whose
  `### rollout_summary_files` lines carry `(cwd=<path>, rollout_path=..., updated_at=...)`. One memory
  a block; its home is the `applies_to` cwd when that is a path, else the first task's cwd, else none.
- `memory_summary.md`, loaded into every session: first line `v1`, then `## User Profile` (free text:
  one memory), `## User preferences` and `## General Tips` (one memory a bullet). Its last section,
  `## What's in Memory`, is an index of MEMORY.md, not memories. All of it is the user's across
  projects: global.
- `extensions/ad_hoc/notes/<YYYY-MM-DDTHH-MM-SS-slug>.md`: one verbatim note each, written when the
  user asked Codex to remember something; they name no project: global.

`raw_memories.md` (a temporary merge) and `rollout_summaries/` (evidence for MEMORY.md) are not read.
"""

from __future__ import annotations

import os
import re

from agentmem.exchange.native import Folder, Item, entries, whole_file

_CWD = re.compile(r"\bcwd=([^;,()\n]+)")
_SKIPPED_SECTIONS = ("what's in memory",)


def read(folder: Folder) -> list[Item]:
    _handbook(folder)
    _summary(folder)
    for rel in folder.markdown("extensions/ad_hoc/notes", None):  # a link on the way: refused, not followed
        whole_file(folder, rel, None, first_line=True)
    return folder.items


def _project_path(value: str) -> str | None:
    value = value.strip().strip("`'\"")
    if value.startswith("~"):
        value = os.path.expanduser(value)
    return os.path.normpath(value) if os.path.isabs(value) else None


def _home(block: list[str]) -> str | None:
    """The project folder a Task Group applies to: its `applies_to: cwd=`, else its first task's cwd."""
    for prefix in ("applies_to:", "- "):
        for line in block:
            if line.startswith(prefix) and (found := _CWD.search(line)) and (path := _project_path(found.group(1))):
                return path
    return None


def _handbook(folder: Folder) -> None:
    text = folder.text("MEMORY.md", None)
    if text is None:
        return
    block: list[str] = []
    for line in text.splitlines() + ["# Task Group: (end)"]:
        if line.startswith("# Task Group:") and block:
            title = block[0].removeprefix("# Task Group:").strip()
            folder.items.append(Item(title, "\n".join(block).strip() + "\n", [folder.tag],
                                     folder.path("MEMORY.md"), _home(block)))
            block = []
        if line.startswith("# Task Group:") or block:
            block.append(line)


def _summary(folder: Folder) -> None:
    text = folder.text("memory_summary.md", None)
    if text is None:
        return
    source = folder.path("memory_summary.md")
    sections: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("## "):
            sections.append((line[3:].strip(), []))
        elif sections:
            sections[-1][1].append(line)
    for name, lines in sections:
        if name.casefold() in _SKIPPED_SECTIONS:
            continue
        if name.casefold() == "user profile":
            body = "\n".join(lines).strip()
            if body:
                folder.items.append(Item(name, body + "\n", [folder.tag], source, None))
            continue
        for fact in entries("\n".join(lines)):
            folder.items.append(Item(fact.splitlines()[0], fact + "\n", [folder.tag], source, None))
