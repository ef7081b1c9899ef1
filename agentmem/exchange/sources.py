"""What `agentmem import --from FORMAT` reads: which reader reads each format, and where each tool keeps
its memories for this user and directory when no PATH is given (the formats: `exchange/native.py`)."""

from __future__ import annotations

import os

from agentmem.errors import InvalidInput, NextStep, Option

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from agentmem.exchange.native import Item

FORMATS = ("agentmem", "claude-code", "codex", "gemini", "cline")


def default_path(fmt: str, cwd: str | None = None) -> str:
    """Where `fmt` keeps its memories for this user and directory, when no PATH is given."""
    cwd = cwd or os.getcwd()
    home = os.path.expanduser("~")
    if fmt == "claude-code":
        from agentmem.exchange.native import claude_slug

        return os.path.join(home, ".claude", "projects", claude_slug(cwd), "memory")
    if fmt == "codex":
        return os.path.join(os.environ.get("CODEX_HOME") or os.path.join(home, ".codex"), "memories")
    if fmt == "gemini":
        return os.path.join(home, ".gemini")
    if fmt == "cline":
        return os.path.join(cwd, "memory-bank")
    raise InvalidInput(NextStep.of("import ", Option("from", fmt), " needs PATH (an agentmem export folder)"))


def read_items(fmt: str, path: str) -> list[Item]:
    """The memories in `path`, in a stable order (file name, then position in the file)."""
    if not os.path.lexists(path):
        raise InvalidInput(f"no {fmt} memories at {path}: it does not exist",
                           hint="pass the folder or file to read as PATH")
    if fmt == "gemini":  # its home folder, its global GEMINI.md, or one project's memory folder
        from agentmem.exchange import from_gemini

        return from_gemini.read(path)
    if not os.path.isdir(path):
        raise InvalidInput(f"{path} is not a folder ({fmt} keeps its memories in a folder)")
    from agentmem.exchange import from_codex, native

    if fmt == "codex":
        return from_codex.read(native.Folder(path, fmt))
    if fmt == "cline":
        return native.read_cline(path, os.getcwd())
    if fmt == "claude-code":
        return native.read_claude_code(path, os.getcwd())
    raise InvalidInput(f"unknown import format {fmt!r}: one of {', '.join(FORMATS)}")
