"""What agentmem knows about one agent CLI, as one small interface each `runtimes/<name>.py` implements.

Each module states `SPEC` (runtimes/spec.py): its facts that need no environment, all the per-turn
hook reads, and `SPEC.runtime`, its class. A runtime object is bound to an environment (`HOME`,
`CODEX_HOME`, `XDG_CONFIG_HOME`, `COPILOT_HOME`): `registry.runtime(name, env)` builds it, and its
paths are plain attributes. Everything setup, `hooks`, skills and the MCP registration do in a
user's home goes through these methods; the mechanisms they share (editing JSON, Codex's
config.toml, `~/.claude.json`, instruction blocks, the user-files rule) stay in `machine/` and
`hooks/` and are called from here. No module outside `runtimes/` compares a runtime's name
(tests/test_runtime_modules.py checks it).

Optional capabilities are None where a CLI lacks them, and every caller checks the capability,
never the name: `skills_root` (a CLI that reads no skill folder), `hooks_file` (one that runs no
hooks of ours; `hooked(rt)` says whether the hook methods may be called), `mcp`, `trust`.

The per-turn hook imports only the one runtime module it serves: runtime modules import nothing
at module level beyond `os` and runtimes/spec.py, and this module (typing, pathlib) only inside
their methods.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeGuard

if TYPE_CHECKING:
    from agentmem.hooks.config_files import Change as HookChange
    from agentmem.status import Status
    from agentmem.store.base import StoreDescription
    from agentmem.userfiles import Change as FileChange


class McpConfig(Protocol):
    """Where a runtime keeps its user-level MCP servers, and our `agentmem` entry there."""

    file: Path  # the file holding the entry

    def entry(self, helper: list[str]) -> dict:
        """Our server entry: the absolute helper command with `mcp`, in this runtime's shape."""

    def current(self, machine: Path) -> tuple[object, bool]:
        """(the entry named agentmem in the file or None, whether the machine folder records it as ours)."""

    def write(self, machine: Path, value: dict) -> FileChange:
        """Set the entry to `value`, recorded as ours."""

    def delete(self, machine: Path) -> FileChange:
        """Take our recorded entry out, and what we created for it."""


class HooksTrust(Protocol):
    """A CLI that runs a user's hooks only once told to trust them (Codex)."""

    who: str  # named in messages ("Codex")

    def hint(self, helper: list[str] | None) -> str:
        """The one command that trusts our hooks, told once they are in."""

    def grant(self, executable: str | None) -> list[str]:
        """Ask the CLI (`executable`, default: on PATH) to trust our hooks; the keys now trusted."""


class Runtime(Protocol):
    """One agent CLI. Attributes are its file locations in the bound environment."""

    name: str  # as in config.toml's `[runtimes] enabled` and `--runtime`
    instructions: Path  # the user-level instruction file holding our managed block (machine/blocks.py)
    config_dir: Path  # the CLI's own user folder
    permission_setting: bool  # False: its default mode needs nothing, or nothing can be configured

    @property
    def skills_root(self) -> Path | None:
        """The folder of <skill-name>/SKILL.md it reads; None: it reads no skill folder."""

    @property
    def hooks_file(self) -> Path | None:
        """Where our hooks go (a file of entries, or a file that is ours whole); None: it runs no hooks of ours."""

    @property
    def mcp(self) -> McpConfig | None:
        """Where it keeps MCP servers; None: agentmem registers no MCP server with it."""

    @property
    def trust(self) -> HooksTrust | None:
        """The step that makes it run our hooks; None: it runs them as installed."""

    def grant_permissions(self, machine: Path, helper: list[str], store: StoreDescription | None
                          ) -> tuple[bool, str]:
        """Let the CLI's default permission mode run the helper: (changed, detail). InvalidInput on a bad file."""

    def withdraw_permissions(self, machine: Path) -> bool:
        """Take back what `grant_permissions` added; True if anything changed."""

    def trust_projects(self, machine: Path, folders: list[str], helper: list[str]) -> tuple[bool, str]:
        """`[trust] projects` on: write for `folders` (the mapped ones) what the CLI's own trust prompt
        writes, beside the user's entries; (changed, detail saying exactly what that changes).
        InvalidInput on a file it cannot edit."""

    def untrust_projects(self, machine: Path) -> bool:
        """Take out the trust entries `trust_projects` wrote, and only those; True if anything changed."""

    def permissions_status(self, machine: Path, helper: list[str], store: StoreDescription | None
                           ) -> tuple[bool, str] | None:
        """Whether what `grant_permissions` adds is there and current: (ok, what was found); None when its
        default mode needs nothing or nothing can be configured. Reads only."""

    def after_instructions(self, machine: Path, existed: bool) -> tuple[str, Status, str] | None:
        """What follows writing our block into its instruction file, which `existed` before or not:
        (what the step concerns, status, detail), a failure reported as a warning; None for nothing."""


class HookedRuntime(Runtime, Protocol):
    """A runtime that runs hooks of ours (`hooks_file` set): the hook methods are there to call."""

    @property
    def hooks_file(self) -> Path:
        """Where our hooks go."""

    def install_hooks(self, machine: str | os.PathLike, helper: list[str]) -> HookChange:
        """Put our hooks in (or bring them up to date), keeping everything of the user's."""

    def remove_hooks(self, machine: str | os.PathLike) -> HookChange:
        """Take our hooks out, and the containers agentmem created for them."""

    def hooks_status(self, helper: list[str] | None) -> dict:
        """`{"runtime", "file", "installed", "events", "current"}` (+ `"note"`): what of ours is there."""


def hooked(rt: Runtime) -> TypeGuard[HookedRuntime]:
    """Whether `rt` runs hooks of ours: the one test before installing, removing or checking them."""
    return rt.hooks_file is not None


# -- where the CLIs look, shared by the runtime modules -----------------------------------------

def home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or Path.home())


def xdg_config(env: Mapping[str, str]) -> Path:
    value = env.get("XDG_CONFIG_HOME")
    return Path(value) if value and os.path.isabs(value) else home(env) / ".config"


def folder_from(env: Mapping[str, str], variable: str, default: str) -> Path:
    """`$variable` when set, else `~/<default>` (CODEX_HOME, COPILOT_HOME)."""
    value = env.get(variable)
    return Path(value) if value else home(env) / default


def agents_skills(env: Mapping[str, str]) -> Path:
    """`~/.agents/skills`: Codex, Gemini CLI, OpenCode and Copilot CLI all read it, so the core
    skill is installed there once (each lists a skill found in two of its roots once)."""
    return home(env) / ".agents" / "skills"
