"""Where each supported agent runtime keeps its user-level instructions, skills and hooks.

Paths follow the runtimes' own rules (checked with the real CLIs, see docs/hooks.md "Runtimes"):

| runtime | instructions | skills | hooks |
|---|---|---|---|
| codex (Codex CLI) | `$CODEX_HOME/AGENTS.md` (default `~/.codex`) | `~/.agents/skills` | `$CODEX_HOME/hooks.json` |
| claude (Claude Code) | `~/.claude/CLAUDE.md` | `~/.claude/skills` | `hooks` in `~/.claude/settings.json` |
| gemini (Gemini CLI) | `~/.gemini/GEMINI.md` | `~/.agents/skills` | `hooks` in `~/.gemini/settings.json` |
| opencode (OpenCode) | `$XDG_CONFIG_HOME/opencode/AGENTS.md` | `~/.agents/skills` | `.../plugins/agentmem.js` |
| copilot (Copilot CLI) | `$COPILOT_HOME/copilot-instructions.md` | `~/.agents/skills` | `.../hooks/agentmem.json` |

(`$XDG_CONFIG_HOME` defaults to `~/.config`, `$COPILOT_HOME` to `~/.copilot`.)

Codex, Gemini CLI, OpenCode and Copilot CLI all read `~/.agents/skills`, so the
core skill is installed there once; each of them lists a skill found in two of
its roots once (OpenCode also reads `~/.claude/skills`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

CORE_SKILL = "agent-memory"  # reserved: only the Space/template distributes it
RUNTIME_NAMES = ("codex", "claude", "gemini", "opencode", "copilot")
LABELS = {"codex": "Codex CLI", "claude": "Claude Code", "gemini": "Gemini CLI", "opencode": "OpenCode",
          "copilot": "GitHub Copilot CLI"}
OPENCODE_PLUGIN = "agentmem.js"
COPILOT_HOOKS = "agentmem.json"


@dataclass(frozen=True)
class Runtime:
    name: str
    instructions: Path  # user-level instruction file holding our managed block
    skills_root: Path  # folder of <skill-name>/SKILL.md
    hooks_file: Path  # JSON file holding hook entries (OpenCode: our plugin file)
    config_dir: Path | None = None  # the runtime's own user folder


def _home(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env.get("HOME") or Path.home())


def _xdg_config(env: Mapping[str, str], home: Path) -> Path:
    value = env.get("XDG_CONFIG_HOME")
    return Path(value) if value and os.path.isabs(value) else home / ".config"


def runtime(name: str, env: Mapping[str, str] | None = None) -> Runtime:
    env = os.environ if env is None else env
    home = _home(env)
    agents_skills = home / ".agents" / "skills"
    if name == "codex":
        codex_home = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
        return Runtime("codex", codex_home / "AGENTS.md", agents_skills, codex_home / "hooks.json", codex_home)
    if name == "claude":
        claude = home / ".claude"
        return Runtime("claude", claude / "CLAUDE.md", claude / "skills", claude / "settings.json", claude)
    if name == "gemini":
        gemini = home / ".gemini"
        return Runtime("gemini", gemini / "GEMINI.md", agents_skills, gemini / "settings.json", gemini)
    if name == "opencode":
        opencode = _xdg_config(env, home) / "opencode"
        return Runtime("opencode", opencode / "AGENTS.md", agents_skills, opencode / "plugins" / OPENCODE_PLUGIN,
                       opencode)
    if name == "copilot":
        copilot = Path(env["COPILOT_HOME"]) if env.get("COPILOT_HOME") else home / ".copilot"
        return Runtime("copilot", copilot / "copilot-instructions.md", agents_skills,
                       copilot / "hooks" / COPILOT_HOOKS, copilot)
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
