"""The machine folder: where one machine's config, cache and pending uploads live.

Two different AGENTMEM_HOMEs on one host behave as two machines.

Paths on the per-turn path (this module, config, cache, pending, search, the
index) are plain strings built with os.path: importing pathlib costs about
4.6 ms of each helper start (measured 2026-11-30). Functions accept str or
any os.PathLike.
"""

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Mapping


def machine_dir(env: "Mapping[str, str] | None" = None) -> str:
    """`AGENTMEM_HOME` when set, else the platform's user config folder + `agentmem`."""
    env = os.environ if env is None else env
    explicit = env.get("AGENTMEM_HOME")
    if explicit:
        return os.path.expanduser(explicit)
    user = os.path.expanduser("~")
    if sys.platform == "win32":
        base = env.get("APPDATA") or os.path.join(user, "AppData", "Roaming")
    elif sys.platform == "darwin":
        base = os.path.join(user, "Library", "Application Support")
    else:
        base = env.get("XDG_CONFIG_HOME") or os.path.join(user, ".config")
    return os.path.join(base, "agentmem")


def config_path(machine: str | os.PathLike) -> str:
    return os.path.join(machine, "config.toml")


def pending_dir(machine: str | os.PathLike) -> str:
    return os.path.join(machine, "pending")


def cache_root(machine: str | os.PathLike) -> str:
    return os.path.join(machine, "cache")
