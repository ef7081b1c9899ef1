"""What several command groups share: the machine folder, its config, the network budget, the store.

Imports stay inside the functions: a search must not pay for what `setup` needs.
"""

from __future__ import annotations

import sys

from agentmem.errors import AgentmemError


def machine() -> str:
    """This machine's folder (AGENTMEM_HOME or the platform default), as a str."""
    from agentmem.paths import machine_dir

    return machine_dir()


def machine_path():
    """The machine folder as a pathlib.Path, for commands off the per-turn path (setup, skills, map)."""
    from pathlib import Path

    return Path(machine())


def config():
    """The machine's config; stops with the setup hint when no store is configured."""
    from agentmem import config as config_module

    return config_module.require(machine())


def timeout(cfg) -> float:
    """The network deadline. A malformed setting falls back to the default with a warning, so a
    typo in config.toml never stops a note from being saved (it stays pending if the store fails)."""
    try:
        return cfg.network_timeout
    except AgentmemError as exc:
        from agentmem.config import DEFAULT_NETWORK_TIMEOUT

        sys.stderr.write(f"agentmem: warning: {exc.one_line()}; using {DEFAULT_NETWORK_TIMEOUT:g} s\n")
        return DEFAULT_NETWORK_TIMEOUT


def store(cfg):
    """The configured store, opened with this invocation's network budget."""
    from agentmem.store.base import open_store

    return open_store(cfg.store, timeout=timeout(cfg))


def runtimes(cfg) -> list:
    """The enabled runtimes (runtimes/registry.py)."""
    from agentmem.runtimes.registry import configured

    return configured(cfg.data)
