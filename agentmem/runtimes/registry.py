"""The agent CLIs agentmem supports, by name: the one place a runtime module is registered.

`runtime(name, env)` is the CLI's object bound to an environment (runtimes/base.py
describes the interface); `enabled_names(config)` is the one reading of config.toml's
`[runtimes] enabled`. The hook's reminder imports only its own runtime module
(hooks/dispatch.py), which must therefore be named as here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentmem.runtimes.base import Runtime

NAMES = ("codex", "claude", "gemini", "opencode", "copilot")


def _classes() -> dict[str, Callable[[Mapping[str, str] | None], Runtime]]:
    from agentmem.runtimes import claude, codex, copilot, gemini, opencode

    return {"codex": codex.RUNTIME, "claude": claude.RUNTIME, "gemini": gemini.RUNTIME,
            "opencode": opencode.RUNTIME, "copilot": copilot.RUNTIME}


def runtime(name: str, env: Mapping[str, str] | None = None) -> Runtime:
    """The runtime `name`, with its file locations in `env` (default: this process's environment)."""
    if name not in NAMES:
        raise ValueError(f"unknown runtime {name!r}; expected one of {', '.join(NAMES)}")
    return _classes()[name](env)


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
