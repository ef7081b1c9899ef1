"""The machine folder: where one machine's config, cache and pending uploads live.

Two different AGENTMEM_HOMEs on one host behave as two machines.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def agentmem_home(env: dict | None = None) -> Path:
    """`AGENTMEM_HOME` when set, else the platform's user config folder + `agentmem`."""
    env = os.environ if env is None else env
    explicit = env.get("AGENTMEM_HOME")
    if explicit:
        return Path(explicit).expanduser()
    if sys.platform == "win32":
        base = Path(env.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(env.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "agentmem"


def config_path(home: Path) -> Path:
    return home / "config.toml"


def pending_dir(home: Path) -> Path:
    return home / "pending"


def cache_root(home: Path) -> Path:
    return home / "cache"
