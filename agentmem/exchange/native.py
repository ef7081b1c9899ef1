"""Reading the memories other tools keep, one item per memory, for `agentmem import`.

Each reader turns a tool's own files into `Item`s: title, body, tags, the file it came from, and where
the memory belongs (`home`): the project of the directory import runs for (`HERE`), the project folder
the tool tied it to (a path, or a `Hashed` one), one it did not record (`UNKNOWN`), or no project at
all (None: a global memory).
What each format is, and where it was confirmed (docs/cli.md, `import`):

- `claude-code`: Claude Code's auto memory, `~/.claude/projects/<cwd with every non-alphanumeric
  character as "-">/memory/`: `MEMORY.md` (the index: one line per memory, or a pointer to a topic file)
  and topic files `<name>.md` with `name`, `description` and `metadata.type` in their frontmatter.
- `codex`, `gemini`: `exchange/from_codex.py`, `exchange/from_gemini.py` (`exchange/sources.py` says
  which reader reads which format, and where each tool keeps its memories).
- `cline`: Cline's memory bank, `memory-bank/*.md` in the project (one file a note).

Every read stays inside the folder read (INV confined-read, `exchange/confined.py`): a link, a FIFO or a
file too large to be a memory becomes a refused item saying so, never a read. Foreign frontmatter is
parsed bounded (`document.foreign_yaml`: no anchors or aliases).
"""

from __future__ import annotations

import os
import re

from agentmem.errors import InvalidInput
from agentmem.exchange import confined

MAX_FILE = 1024 * 1024  # a memory file larger than a note may be is not a memory file
HERE = "."  # an item's home: the project of the directory import runs for
UNKNOWN = "?"  # an item's home: a project folder its tool did not record
# agentmem's own managed block in a user-level instruction file (machine/blocks.py): never a memory.
BLOCK_BEGIN, BLOCK_END = "<!-- agent-memory:begin -->", "<!-- agent-memory:end -->"


class Hashed:
    """A project folder known only by the SHA-256 of its path (Gemini CLI's folders before its slug ids);
    `matches` says whether a path is one that gives it."""

    __slots__ = ("key",)
    how = "a hash of its path"

    def __init__(self, key: str):
        self.key = key

    def matches(self, path: str) -> bool:
        import hashlib

        return hashlib.sha256(path.encode()).hexdigest() == self.key


class Slugged(Hashed):
    """A project folder known only by its path with every character but a letter or digit as `-` (Claude
    Code's `projects/<slug>`): as lossy as a hash, so it names a mapped folder only when one slugs to it."""

    __slots__ = ()
    how = "its path with every character but a letter or digit as '-'"

    def matches(self, path: str) -> bool:
        return claude_slug(path) == self.key


def claude_slug(path: str) -> str:
    """Claude Code's name for a directory's folder under `~/.claude/projects`."""
    return re.sub(r"[^a-zA-Z0-9]", "-", path)


class Item:
    """One memory to import: what `save` gets, the file it came from (its `source:`), where it belongs
    (`home`), and `problem`: why it cannot be read at all (then it is refused with that reason)."""

    __slots__ = ("title", "body", "tags", "source", "home", "problem")

    def __init__(self, title: str, body: str, tags: list[str], source: str,
                 home: str | Hashed | None = HERE, problem: str | None = None):
        self.title, self.body, self.tags, self.source = title.strip()[:200] or "Imported memory", body, tags, source
        self.home, self.problem = home, problem


class Folder:
    """A tool's memory folder read confined to itself; what it cannot read is an item with a problem."""

    def __init__(self, root: str, fmt: str):
        self.root, self.tag = root, f"imported-{fmt}"
        self.items: list[Item] = []

    def path(self, rel: str) -> str:
        return os.path.join(self.root, *rel.split("/")) if rel else self.root

    def refuse(self, rel: str, reason: str, home: str | Hashed | None = HERE) -> None:
        self.items.append(Item(os.path.basename(rel) or rel, "", [], self.path(rel), home, reason))

    def text(self, rel: str, home: str | Hashed | None = HERE) -> str | None:
        """The file as text, or None (and a refused item) when it is a link, not a regular file, too large."""
        try:
            data = confined.read(self.root, rel, MAX_FILE)
        except confined.Refused as exc:
            self.refuse(exc.rel, exc.reason, home)
            return None
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:  # unreadable (permissions): said, not a traceback
            self.refuse(rel, f"cannot be read ({exc.strerror})", home)
            return None
        if len(data) > MAX_FILE:
            self.refuse(rel, "larger than 1 MiB: not a memory file", home)
            return None
        return data.decode("utf-8", errors="replace")

    def listing(self, rel: str = "", home: str | Hashed | None = HERE) -> list[tuple[str, str]]:
        """(name, kind) in the folder `rel`; [] when it is missing; a link there is refused, not followed."""
        try:
            return confined.entries(self.root, rel)
        except confined.Refused as exc:
            self.refuse(exc.rel, exc.reason, home)
        except (FileNotFoundError, NotADirectoryError):
            pass
        except OSError as exc:
            self.refuse(rel, f"cannot be listed ({exc.strerror})", home)
        return []

    def markdown(self, rel: str = "", home: str | Hashed | None = HERE) -> list[str]:
        """The relative paths of the `.md` files in the folder `rel`, by name; links and other odd entries
        named `.md` are refused items instead."""
        out = []
        for name, kind in self.listing(rel, home):
            if not name.endswith(".md") or name.startswith("."):
                continue
            sub = f"{rel}/{name}" if rel else name
            if kind == "file":
                out.append(sub)
            elif kind in ("link", "other"):
                self.refuse(sub, confined.LINK if kind == "link" else confined.NOT_REGULAR, home)
        return out


class Holder(str):
    """The folder holding a memory bank read from outside it (another checkout given as PATH): its memories
    are the project that folder is mapped to, not the project of the directory import runs in."""

    __slots__ = ()


def read_cline(path: str, cwd: str) -> list[Item]:
    """Cline's memory bank: each Markdown file a memory, of the project that holds the bank (`HERE` when
    import runs inside the folder holding it, else that folder as a `Holder`)."""
    _inside_its_project(path)
    holder = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    inside = os.path.commonpath([holder, os.path.realpath(cwd)]) == holder
    home: str = HERE if inside else Holder(holder)
    folder = Folder(path, "cline")
    for rel in folder.markdown(home=home):
        whole_file(folder, rel, home)
    return folder.items


def read_claude_code(path: str, cwd: str) -> list[Item]:
    """Claude Code's auto memory folder: topic files and the MEMORY.md index, of this directory's (`cwd`)
    project; a `projects/<slug>/memory` folder of another directory is that directory's (`Slugged`)."""
    folder = Folder(path, "claude-code")
    slug = os.path.basename(os.path.dirname(os.path.abspath(path)))
    mine = os.path.basename(os.path.abspath(path)) != "memory" or not slug.startswith("-")
    index_and_topics(folder, home=HERE if mine or slug == claude_slug(cwd) else Slugged(slug))
    return folder.items


def _inside_its_project(path: str) -> None:
    """A memory bank lives in the repository that ships it: one that is a link to a folder outside it
    (a home folder, another checkout) is refused whole."""
    parent = os.path.realpath(os.path.dirname(path))
    real = os.path.realpath(path)
    if os.path.commonpath([parent, real]) != parent:
        raise InvalidInput(f"{path} is a link to {real}, outside the project that holds it: import reads only "
                           "inside the memory folder; nothing was imported",
                           hint="pass the folder itself as PATH if you mean to import it")


def split_frontmatter(text: str) -> tuple[dict, str]:
    """A memory file's YAML frontmatter (bounded, `document.foreign_yaml`; empty when absent, broken or
    refused) and its body."""
    from agentmem.note import document

    if not text.startswith(("---\n", "---\r\n")):
        return {}, text
    end = text.find("\n---", 3)
    if end < 0:
        return {}, text
    meta = document.foreign_yaml(text[text.index("\n") + 1:end])
    after = text.find("\n", end + 4)
    return (meta or {}), (text[after + 1:] if after >= 0 else "").lstrip("\r\n")


def _heading(body: str) -> str | None:
    return next((line[2:] for line in body.splitlines() if line.startswith("# ")), None)


def whole_file(folder: Folder, rel: str, home: str | Hashed | None = HERE, *, first_line: bool = False) -> None:
    """One memory from a whole file: its title from the frontmatter (`name`, `title`), its first heading,
    with `first_line` its first line, else its file name."""
    text = folder.text(rel, home)
    if text is None:
        return
    meta, body = split_frontmatter(text)
    title = next((v for v in (meta.get("name"), meta.get("title")) if isinstance(v, str) and v.strip()), None)
    title = title or _heading(body)
    if title is None and first_line:
        title = next((line.strip("# ").strip() for line in body.splitlines() if line.strip()), None)
    title = title or os.path.splitext(os.path.basename(rel))[0]
    tags = [folder.tag]
    nested = meta.get("metadata")
    kind = nested.get("type") if isinstance(nested, dict) else meta.get("type")
    if isinstance(kind, str) and kind.strip() and len(kind.strip()) <= 64 and "\n" not in kind:
        tags.append(kind.strip())
    description = meta.get("description")
    if isinstance(description, str) and description.strip() and description.strip() not in body:
        body = f"{description.strip()}\n\n{body}"
    folder.items.append(Item(title, body.strip() + "\n", tags, folder.path(rel), home))


_LIST = re.compile(r"^(?:[-*+]|\d{1,3}[.)])\s+(.*)$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def entries(text: str, *, paragraphs: bool = False) -> list[str]:
    """The memories of a Markdown file kept as a list: each top-level list item (with the lines that
    continue it), and with `paragraphs` each paragraph outside a list. Headings, code blocks and
    agentmem's own managed block are never memories."""
    out: list[str] = []
    current: list[str] = []
    fence, ours = "", False

    def close() -> None:
        if current and " ".join(current).strip():
            out.append("\n".join(current).strip())
        current.clear()

    for line in text.splitlines():
        bare = line.strip()
        if bare in (BLOCK_BEGIN, BLOCK_END):
            close()
            ours = bare == BLOCK_BEGIN
            continue
        opened = _FENCE.match(line)
        if fence or ours:
            if fence and opened and opened.group(1)[0] == fence[0]:
                fence = ""
            continue
        if opened:
            close()
            fence = opened.group(1)
            continue
        item = _LIST.match(line)
        if item:
            close()
            current.append(item.group(1))
        elif not bare or line.startswith("#"):
            close()
        elif current and (line[:1].isspace() or paragraphs):
            current.append(bare)
        elif paragraphs:
            current.append(bare)
    close()
    return out


_LINK = re.compile(r"\]\(([^)\s]+\.md)\)")


def index_entries(folder: Folder, rel: str, linked: set[str], home: str | Hashed | None = HERE, *,
                  paragraphs: bool = False) -> None:
    """The entries of a MEMORY.md index written in place; an entry that points to a topic file is that
    file's, which is imported whole."""
    text = folder.text(rel, home)
    for fact in entries(text or "", paragraphs=paragraphs):
        if {os.path.basename(t) for t in _LINK.findall(fact)} & linked:
            continue
        folder.items.append(Item(fact.splitlines()[0], fact + "\n", [folder.tag], folder.path(rel), home))


def index_and_topics(folder: Folder, rel: str = "", home: str | Hashed | None = HERE,
                     skip: tuple[str, ...] = ()) -> None:
    """A folder of topic files with a `MEMORY.md` index (Claude Code's auto memory, Gemini CLI's private
    project memory): each topic file whole, then each index entry written in place."""
    files = folder.markdown(rel, home)
    index = next((f for f in files if os.path.basename(f).lower() == "memory.md"), None)
    topics = [f for f in files if f != index and os.path.basename(f) not in skip]
    for topic in topics:
        whole_file(folder, topic, home)
    if index is not None:
        index_entries(folder, index, {os.path.basename(t) for t in topics}, home)
