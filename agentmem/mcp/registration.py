"""Registering `agentmem mcp` with the runtimes that take MCP servers, as managed entries.

Which runtimes take one, in which file and shape, is each runtime's `mcp`
(runtimes/codex.py: `[mcp_servers.agentmem]` in config.toml; runtimes/claude.py:
`mcpServers.agentmem` in `~/.claude.json`). Each entry runs the absolute helper
command recorded at setup with `mcp`; the client starts it in its session's
working directory (both runtimes do), where the project comes from. Setup installs
or removes the entries like hooks: only ours, recognised by the machine folder's
records or by their command (a helper command ending in `mcp`); an `agentmem`
entry of the user's own is reported and left alone.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from agentmem.errors import InvalidInput

if TYPE_CHECKING:
    from agentmem.runtimes.base import McpConfig, Runtime

NAME = "agentmem"


class Change:
    __slots__ = ("runtime", "path", "changed", "detail")

    def __init__(self, runtime: str, path: Path, changed: bool, detail: str):
        self.runtime, self.path, self.changed, self.detail = runtime, path, changed, detail


def _mcp(rt: Runtime) -> McpConfig:
    if rt.mcp is None:
        raise ValueError(f"{rt.name} takes no MCP servers from agentmem")
    return rt.mcp


def looks_like_ours(value: object) -> bool:
    """An entry whose command is an agentmem helper run with `mcp` (what `entry` writes)."""
    if not isinstance(value, dict):
        return False
    command, args = value.get("command"), value.get("args")
    if not isinstance(command, str) or not isinstance(args, list) or args[-1:] != ["mcp"]:
        return False
    return "agentmem" in command or any(isinstance(a, str) and "agentmem" in a for a in args)


def _refuse_read_only(path: Path) -> None:
    target = os.path.realpath(path)
    if os.path.exists(target) and (os.stat(target).st_mode & 0o222 == 0 or not os.access(target, os.W_OK)):
        raise InvalidInput(f"{path} is read-only; nothing was changed")


def register(machine: Path, rt: Runtime, helper: list[str]) -> Change:
    """Add (or bring up to date) our server entry in the runtime's MCP config."""
    mcp = _mcp(rt)
    current, recorded = mcp.current(machine)
    if current is not None and not recorded and not looks_like_ours(current):
        raise InvalidInput(f"{mcp.file} already has an MCP server named {NAME} that agentmem did not write; "
                           "left alone (rename or remove it to let setup add agentmem's)")
    wanted = mcp.entry(helper)
    if current != wanted:
        _refuse_read_only(mcp.file)
    mcp.file.parent.mkdir(parents=True, exist_ok=True)
    done = mcp.write(machine, wanted)
    return Change(rt.name, mcp.file, done.changed, done.detail)


def unregister(machine: Path, rt: Runtime) -> Change:
    """Take our server entry out of the runtime's MCP config, if it is there; nothing else."""
    mcp = _mcp(rt)
    current, recorded = mcp.current(machine)
    if current is None and not recorded:
        return Change(rt.name, mcp.file, False, "no agentmem MCP server registered")
    if current is not None and not recorded and not looks_like_ours(current):
        return Change(rt.name, mcp.file, False, f"the {NAME} MCP server there is not agentmem's; left alone")
    _refuse_read_only(mcp.file)
    if not recorded:  # ours by its command, from a machine folder that lost its records: adopt it first
        mcp.write(machine, current)  # type: ignore[arg-type]
    done = mcp.delete(machine)
    return Change(rt.name, mcp.file, done.changed, done.detail)
