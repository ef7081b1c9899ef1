"""Reading the memories other tools keep, one item per memory, for `agentmem import`.

Each reader turns a tool's own files into `Item`s (title, body, tags, the file it came from). What each
format is, and where it was confirmed (docs/cli.md, `import`):

- `claude-code`: Claude Code's auto memory, `~/.claude/projects/<cwd with every non-alphanumeric
  character as "-">/memory/`: `MEMORY.md` (the index: one line per memory, or a pointer to a topic file)
  and topic files `<name>.md` with `name`, `description` and `metadata.type` in their frontmatter.
- `codex`: Codex's memories folder (`$CODEX_HOME/memories`, `~/.codex/memories`): `MEMORY.md`, whose
  blocks each start with `# Task Group: ...`, and ad hoc notes in `extensions/ad_hoc/notes/*.md`.
- `gemini`: the `## Gemini Added Memories` section of `~/.gemini/GEMINI.md` (one `- fact` a line), or a
  private project memory folder of Gemini CLI 0.61 (`MEMORY.md` index plus sibling notes) given as PATH.
- `cline`: Cline's memory bank, `memory-bank/*.md` in the project (one file a note).
"""

from __future__ import annotations

import os
import re

from agentmem.errors import InvalidInput

MAX_FILE = 1024 * 1024  # a memory file larger than a note may be is not a memory file
FORMATS = ("agentmem", "claude-code", "codex", "gemini", "cline")
GEMINI_SECTION = "## Gemini Added Memories"


class Item:
    """One memory to import: what `save` gets, and the file it came from (its `source:`)."""

    __slots__ = ("title", "body", "tags", "source")

    def __init__(self, title: str, body: str, tags: list[str], source: str):
        self.title, self.body, self.tags, self.source = title.strip()[:200] or "Imported memory", body, tags, source


def default_path(fmt: str, cwd: str | None = None) -> str:
    """Where `fmt` keeps its memories for this user and directory, when no PATH is given."""
    cwd = cwd or os.getcwd()
    home = os.path.expanduser("~")
    if fmt == "claude-code":
        return os.path.join(home, ".claude", "projects", re.sub(r"[^a-zA-Z0-9]", "-", cwd), "memory")
    if fmt == "codex":
        return os.path.join(os.environ.get("CODEX_HOME") or os.path.join(home, ".codex"), "memories")
    if fmt == "gemini":
        return os.path.join(home, ".gemini", "GEMINI.md")
    if fmt == "cline":
        return os.path.join(cwd, "memory-bank")
    raise InvalidInput(f"import --from {fmt} needs PATH (an agentmem export folder)")


def read_items(fmt: str, path: str) -> list[Item]:
    """The memories in `path`, in a stable order (file name, then position in the file)."""
    if not os.path.exists(path):
        raise InvalidInput(f"no {fmt} memories at {path}: it does not exist",
                           hint="pass the folder or file to read as PATH")
    tag = f"imported-{fmt}"
    if fmt == "gemini" and os.path.isfile(path):
        return _gemini_section(path, tag)
    if not os.path.isdir(path):
        raise InvalidInput(f"{path} is not a folder ({fmt} keeps its memories in a folder)")
    if fmt == "codex":
        return _codex(path, tag)
    if fmt == "cline":
        return [_whole_file(os.path.join(path, name), tag) for name in _markdown_files(path)]
    return _index_and_topics(path, tag)  # claude-code, and gemini's memory folder


def _read(path: str) -> str:
    from agentmem import fsutil

    data = fsutil.read_bytes(path, MAX_FILE + 1)
    if len(data) > MAX_FILE:
        raise InvalidInput(f"{path} is larger than 1 MiB: not a memory file; nothing was imported")
    return data.decode("utf-8", errors="replace")


def _markdown_files(folder: str) -> list[str]:
    return sorted(n for n in os.listdir(folder)
                  if n.endswith(".md") and not n.startswith(".") and os.path.isfile(os.path.join(folder, n)))


def _split_frontmatter(text: str) -> tuple[dict, str]:
    """A memory file's YAML frontmatter (safe loader; empty when absent or broken) and its body."""
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---", 4)
    if end < 0:
        return {}, text
    import yaml

    try:
        meta = yaml.safe_load(text[4:end])
    except yaml.YAMLError:
        meta = None
    body = text[end + 4:].lstrip("-").lstrip("\n")
    return (meta if isinstance(meta, dict) else {}), body


def _whole_file(path: str, tag: str) -> Item:
    meta, body = _split_frontmatter(_read(path))
    heading = next((line[2:] for line in body.splitlines() if line.startswith("# ")), None)
    title = str(meta.get("name") or meta.get("title") or heading or os.path.splitext(os.path.basename(path))[0])
    tags = [tag]
    kind = (meta.get("metadata") or {}).get("type") if isinstance(meta.get("metadata"), dict) else meta.get("type")
    if isinstance(kind, str) and kind.strip():
        tags.append(kind.strip())
    description = meta.get("description")
    if isinstance(description, str) and description.strip() and description.strip() not in body:
        body = f"{description.strip()}\n\n{body}"
    return Item(title, body.strip() + "\n", tags, path)


_LINK = re.compile(r"\]\(([^)\s]+\.md)\)")


def _index_lines(path: str, tag: str, linked: set[str]) -> list[Item]:
    """The entries of a MEMORY.md index written in place (a line that points to a topic file is that
    file's, which is imported whole)."""
    items = []
    for line in _read(path).splitlines():
        text = line.strip()
        if not text.startswith(("- ", "* ")):
            continue
        targets = {os.path.basename(t) for t in _LINK.findall(text)}
        if targets & linked:
            continue
        fact = text[2:].strip()
        if fact:
            items.append(Item(fact, fact + "\n", [tag], path))
    return items


def _index_and_topics(folder: str, tag: str) -> list[Item]:
    names = _markdown_files(folder)
    topics = [n for n in names if n.lower() != "memory.md"]
    items = [_whole_file(os.path.join(folder, n), tag) for n in topics]
    index = next((n for n in names if n.lower() == "memory.md"), None)
    if index is not None:
        items.extend(_index_lines(os.path.join(folder, index), tag, set(topics)))
    return items


def _codex(folder: str, tag: str) -> list[Item]:
    items = []
    index = os.path.join(folder, "MEMORY.md")
    if os.path.isfile(index):
        block: list[str] = []
        for line in _read(index).splitlines() + ["# Task Group: (end)"]:
            if line.startswith("# Task Group:") and block:
                title = block[0].removeprefix("# Task Group:").strip()
                items.append(Item(title, "\n".join(block).strip() + "\n", [tag], index))
                block = []
            if line.startswith("# Task Group:") or block:
                block.append(line)
    notes = os.path.join(folder, "extensions", "ad_hoc", "notes")
    if os.path.isdir(notes):
        items.extend(_whole_file(os.path.join(notes, n), tag) for n in _markdown_files(notes))
    return items


def _gemini_section(path: str, tag: str) -> list[Item]:
    items, inside = [], False
    for line in _read(path).splitlines():
        if line.startswith("## "):
            inside = line.strip() == GEMINI_SECTION
            continue
        fact = line.strip()
        if inside and fact.startswith(("- ", "* ")) and fact[2:].strip():
            items.append(Item(fact[2:].strip(), fact[2:].strip() + "\n", [tag], path))
    return items
