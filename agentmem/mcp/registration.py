"""Registering `agentmem mcp` with the runtimes that take MCP servers, as managed entries.

- Claude Code: `mcpServers.agentmem` in `~/.claude.json`, its user scope (the file
  and shape `claude mcp add --scope user` writes; Claude Code 2.1.332, 2026-12-01),
  spliced in by `machine/claude_config.py`.
- Codex: `[mcp_servers.agentmem]` in `$CODEX_HOME/config.toml`, through
  `machine/codex_config.py`. Codex starts a server with a few variables of its
  environment only (HOME, PATH, ...; checked with Codex 0.171.0), so the entry
  names the ones agentmem reads in `env_vars`: names, never values.

Each entry runs the absolute helper command recorded at setup with `mcp`; the
client starts it in its session's working directory (both runtimes do), where the
project comes from. Setup installs or removes the entries like hooks: only ours,
recognised by the machine folder's records or by their command (a helper command
ending in `mcp`); an `agentmem` entry of the user's own is reported and left alone.
"""

from __future__ import annotations

import os
from pathlib import Path

from agentmem.errors import InvalidInput
from agentmem.machine import claude_config, codex_config, userfiles
from agentmem.machine.runtimes import runtime as get_runtime

NAME = "agentmem"
RUNTIMES = ("codex", "claude")  # the supported runtimes that take MCP servers
CODEX_TABLE = f"mcp_servers.{NAME}"
CLAUDE_CONTAINER = "mcpServers"
# What the server reads from its environment besides HOME and PATH: credentials and the Hub's location
# (bucket store), the machine folder and the network budget when set explicitly.
ENV_VARS = ["HF_TOKEN", "HF_HOME", "HF_ENDPOINT", "AGENTMEM_HOME", "AGENTMEM_NETWORK_TIMEOUT"]


class Change:
    __slots__ = ("runtime", "path", "changed", "detail")

    def __init__(self, runtime: str, path: Path, changed: bool, detail: str):
        self.runtime, self.path, self.changed, self.detail = runtime, path, changed, detail


def config_file(runtime: str, env=None) -> Path:
    """The file holding the runtime's user-level MCP servers."""
    if runtime == "claude":
        return get_runtime("claude", env).instructions.parent.parent / ".claude.json"
    if runtime == "codex":
        return get_runtime("codex", env).instructions.parent / "config.toml"
    raise ValueError(f"{runtime} takes no MCP servers from agentmem")


def entry(runtime: str, helper: list[str]) -> dict:
    """Our server entry for the runtime: the absolute helper command with `mcp`."""
    args = [*helper[1:], "mcp"]
    if runtime == "claude":
        return {"type": "stdio", "command": helper[0], "args": args, "env": {}}
    return {"command": helper[0], "args": args, "env_vars": list(ENV_VARS)}


def looks_like_ours(value) -> bool:
    """An entry whose command is an agentmem helper run with `mcp` (what `entry` writes)."""
    if not isinstance(value, dict):
        return False
    command, args = value.get("command"), value.get("args")
    if not isinstance(command, str) or not isinstance(args, list) or args[-1:] != ["mcp"]:
        return False
    return "agentmem" in command or any(isinstance(a, str) and "agentmem" in a for a in args)


def _current(machine, runtime: str, path: Path) -> tuple[object, bool]:
    """(the entry named agentmem in the file or None, whether the machine folder records it as ours)."""
    if runtime == "claude":
        return (claude_config.read_member(path, CLAUDE_CONTAINER, NAME),
                claude_config.is_managed(machine, path, CLAUDE_CONTAINER, NAME))
    current = codex_config.read_table(path, CODEX_TABLE) if path.exists() else None
    return current, codex_config.is_managed_table(machine, path, CODEX_TABLE)


def _refuse_read_only(path: Path) -> None:
    target = os.path.realpath(path)
    if os.path.exists(target) and (os.stat(target).st_mode & 0o222 == 0 or not os.access(target, os.W_OK)):
        raise InvalidInput(f"{path} is read-only; nothing was changed")


def register(machine, runtime: str, helper: list[str], env=None) -> Change:
    """Add (or bring up to date) our server entry in the runtime's MCP config."""
    path = config_file(runtime, env)
    current, recorded = _current(machine, runtime, path)
    if current is not None and not recorded and not looks_like_ours(current):
        raise InvalidInput(f"{path} already has an MCP server named {NAME} that agentmem did not write; "
                           "left alone (rename or remove it to let setup add agentmem's)")
    wanted = entry(runtime, helper)
    if current != wanted:
        _refuse_read_only(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    done: userfiles.Change
    if runtime == "claude":
        done = claude_config.set_member(machine, path, CLAUDE_CONTAINER, NAME, wanted)
    else:
        done = codex_config.set_table(machine, path, CODEX_TABLE, wanted)
    return Change(runtime, path, done.changed, done.detail)


def unregister(machine, runtime: str, env=None) -> Change:
    """Take our server entry out of the runtime's MCP config, if it is there; nothing else."""
    path = config_file(runtime, env)
    current, recorded = _current(machine, runtime, path)
    if current is None and not recorded:
        return Change(runtime, path, False, "no agentmem MCP server registered")
    if current is not None and not recorded and not looks_like_ours(current):
        return Change(runtime, path, False, f"the {NAME} MCP server there is not agentmem's; left alone")
    _refuse_read_only(path)
    done: userfiles.Change
    if runtime == "claude":
        if not recorded:  # ours by its command, from a machine folder that lost its records: adopt it first
            claude_config.set_member(machine, path, CLAUDE_CONTAINER, NAME, current)  # type: ignore[arg-type]
        done = claude_config.remove_member(machine, path, CLAUDE_CONTAINER, NAME)
    else:
        if not recorded:
            codex_config.set_table(machine, path, CODEX_TABLE, current)  # type: ignore[arg-type]
        done = codex_config.remove_table(machine, path, CODEX_TABLE)
    return Change(runtime, path, done.changed, done.detail)
