"""Where each supported agent runtime keeps its user-level instructions, skills and hooks.

Paths follow the runtimes' own rules (checked late 2026, see README "Runtimes"):
Codex reads `$CODEX_HOME/AGENTS.md` (default `~/.codex`) and user skills from
`~/.agents/skills`; Claude Code reads `~/.claude/CLAUDE.md` and `~/.claude/skills`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

CORE_SKILL = "agent-memory"  # reserved: only the Space/template distributes it
RUNTIME_NAMES = ("codex", "claude")


@dataclass(frozen=True)
class Runtime:
    name: str
    instructions: Path  # user-level instruction file holding our managed block
    skills_root: Path  # folder of <skill-name>/SKILL.md
    hooks_file: Path  # JSON file holding hook entries


def _home(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env.get("HOME") or Path.home())


def runtime(name: str, env: Mapping[str, str] | None = None) -> Runtime:
    env = os.environ if env is None else env
    home = _home(env)
    if name == "codex":
        codex_home = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
        return Runtime("codex", codex_home / "AGENTS.md", home / ".agents" / "skills", codex_home / "hooks.json")
    if name == "claude":
        claude = home / ".claude"
        return Runtime("claude", claude / "CLAUDE.md", claude / "skills", claude / "settings.json")
    raise ValueError(f"unknown runtime {name!r}; expected one of {', '.join(RUNTIME_NAMES)}")


def listed_names(config_data: dict) -> list[str]:
    """Every name in config.toml's `[runtimes] enabled = [...]`, as written (unknown ones too)."""
    names = (config_data.get("runtimes") or {}).get("enabled") or []
    return [str(n) for n in names] if isinstance(names, list) else []


def enabled_names(config_data: dict) -> list[str]:
    """The known runtimes config.toml enables, in its order, each once. The one reading of `[runtimes]`."""
    return [n for n in dict.fromkeys(listed_names(config_data)) if n in RUNTIME_NAMES]


def configured_runtimes(config_data: dict, env: Mapping[str, str] | None = None) -> list[Runtime]:
    """The enabled runtimes' file locations."""
    return [runtime(n, env) for n in enabled_names(config_data)]
