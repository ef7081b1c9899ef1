"""The agent CLIs agentmem supports, by name: the one place a runtime module is registered.

`NAMES` is the one list of them: the template's choices (copier.yml), the help texts that
name CLIs and the tests' lists are checked against it (tests/test_runtime_contract.py).
`spec(name)` is what a module states (runtimes/spec.py), `runtime(name, env)` the CLI's object
bound to an environment (runtimes/base.py describes the interface); `enabled_names(config)` is
the one reading of config.toml's `[runtimes] enabled`. The hook's reminder imports only its own
runtime module (hooks/dispatch.py), which must therefore be named as here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentmem.runtimes.base import Runtime
    from agentmem.runtimes.spec import DefaultMode, Spec

NAMES = ("codex", "claude", "gemini", "opencode", "copilot")


def _specs() -> dict[str, Spec]:
    from agentmem.runtimes import claude, codex, copilot, gemini, opencode

    return {s.name: s for s in (codex.SPEC, claude.SPEC, gemini.SPEC, opencode.SPEC, copilot.SPEC)}


def spec(name: str) -> Spec:
    """What runtimes/<name>.py states: its facts that need no environment, and its class."""
    if name not in NAMES:
        raise ValueError(f"unknown runtime {name!r}; expected one of {', '.join(NAMES)}")
    return _specs()[name]


def runtime(name: str, env: Mapping[str, str] | None = None) -> Runtime:
    """The runtime `name`, with its file locations in `env` (default: this process's environment)."""
    return spec(name).runtime(env)


def every(env: Mapping[str, str] | None = None) -> list[Runtime]:
    """All the supported runtimes, in NAMES order."""
    return [runtime(n, env) for n in NAMES]


def listed_names(config_data: dict) -> list[str]:
    """Every name in config.toml's `[runtimes] enabled = [...]`, as written (unknown ones too)."""
    names = (config_data.get("runtimes") or {}).get("enabled") or []
    return [str(n) for n in names] if isinstance(names, list) else []


def enabled_names(config_data: dict) -> list[str]:
    """The known runtimes config.toml enables, in its order, each once. The one reading of `[runtimes]`."""
    return [n for n in dict.fromkeys(listed_names(config_data)) if n in NAMES]


def configured(config_data: dict, env: Mapping[str, str] | None = None) -> list[Runtime]:
    """The enabled runtimes."""
    return [runtime(n, env) for n in enabled_names(config_data)]


# -- each CLI's plain non-interactive mode, as the README prints it ------------------------------
# Each runtime module states it once (`DEFAULT_MODE`): the command, whether a save and a search of a
# note another machine saved work with no flags at all, the same with `[trust] projects` on, and what
# the CLI needs otherwise. tests/test_e2e_default_mode.py runs every CLI that way and checks these
# facts; a test compares the README's table and summary line with these two functions.

def _modes() -> list[tuple[str, DefaultMode]]:
    return [(name, spec(name).default_mode) for name in NAMES]


def _yes(saves: bool, searches: bool) -> str:
    if saves and searches:
        return "saves and searches"
    if searches:
        return "searches (every note in the store); a save fails, saying so"
    return "neither"


def default_mode_table() -> str:
    """The README's Markdown table, one row per CLI."""
    lines = ["| CLI, non-interactive | with no flags | with `trust_projects` | otherwise it needs |",
             "|---|---|---|---|"]
    for _, mode in _modes():
        lines.append(f"| `{mode.command}` | {_yes(mode.saves, mode.searches)} | "
                     f"{_yes(mode.trusted_saves, mode.trusted_searches)} | {mode.otherwise} |")
    return "\n".join(lines)


def default_mode_summary() -> str:
    """The README's one-line summary of the table."""
    plain = [m.command for _, m in _modes() if m.saves and m.searches]
    trusted = [m.command for _, m in _modes()
               if m.trusted_saves and m.trusted_searches and not (m.saves and m.searches)]
    return (f"With no flags, {_and(plain)} save and search; with the setup answer `trust_projects`, "
            f"{_and(trusted)} do too.")


def _and(commands: list[str]) -> str:
    quoted = [f"`{c}`" for c in commands]
    return " and ".join(quoted) if len(quoted) < 3 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def reflection_how(name: str) -> str:
    """How `name`'s stop hook asks for the end-of-session turn, as reports name it ("" where it cannot)."""
    found = spec(name).reflection
    return found.how if found is not None else ""


def reflection(names: list[str], *, on: bool, hooked: set[str]) -> dict[str, str]:
    """Per runtime in `names`: "on", "off", "needs hooks" or why the end-of-session reflection is not
    available there; `on` is [hooks] reflect, `hooked` the runtimes whose hooks are installed."""
    out = {}
    for name in names:
        if spec(name).reflection is None:
            out[name] = spec(name).no_reflection
        elif not on:
            out[name] = "off"
        else:
            out[name] = "on" if name in hooked else "needs hooks"
    return out
