"""One entry for installing, removing and reporting our hooks in any runtime's own format.

- codex, claude: entries in their hook JSON (config_files.py);
- gemini: entries in `~/.gemini/settings.json` (gemini_hooks.py);
- copilot, opencode: a file that is agentmem's own (own_files.py).
"""

from __future__ import annotations

import os

from agentmem.hooks import config_files

OWN_FILE_RUNTIMES = ("copilot", "opencode")


def install(machine: str | os.PathLike, runtime: str, helper: list[str], env: dict | None = None):
    if runtime == "gemini":
        from agentmem.hooks import gemini_hooks

        return gemini_hooks.install(machine, helper, env)
    if runtime in OWN_FILE_RUNTIMES:
        from agentmem.hooks import own_files

        return own_files.install(machine, runtime, helper, env)
    return config_files.install(machine, runtime, helper, env)


def remove(machine: str | os.PathLike, runtime: str, env: dict | None = None):
    if runtime == "gemini":
        from agentmem.hooks import gemini_hooks

        return gemini_hooks.remove(machine, env)
    if runtime in OWN_FILE_RUNTIMES:
        from agentmem.hooks import own_files

        return own_files.remove(machine, runtime, env)
    return config_files.remove(machine, runtime, env)


def status(runtime: str, helper: list[str] | None, env: dict | None = None) -> dict:
    if runtime == "gemini":
        from agentmem.hooks import gemini_hooks

        return gemini_hooks.status(helper, env)
    if runtime in OWN_FILE_RUNTIMES:
        from agentmem.hooks import own_files

        return own_files.status(runtime, helper, env)
    return config_files.status(runtime, helper, env)
