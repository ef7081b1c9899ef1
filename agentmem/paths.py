"""The machine folder: where one machine's config, cache and pending uploads live; and the helper itself.

Two different AGENTMEM_HOMEs on one host behave as two machines.

The helper's own command (`helper_command`) is here too: every printed `agentmem ...`
line names it (`agentmem/shell.py`), since `agentmem` is not on PATH. The installed
launcher passes its absolute path to `launch.main`, which records it (`started_by`), so
finding it costs nothing, even in a hook.

Paths on the per-turn path (this module, config, cache, pending, search, the
index) are plain strings built with os.path: importing pathlib is a measurable
share of each helper start (docs/benchmarks.md). Functions accept str or any
os.PathLike.
"""

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Mapping


# A project cache's folder of records (retractions, pins, purges: memory/records.py), named here so the
# session-start reminder can look for any without importing the records module (memory/pins.py).
RECORDS_DIR = "records"
# In a pending entry's folder (memory/pending.py): the entry itself, and the payload when it is a record,
# not a note. Named here for the session-start reminder, which reads them without the pending module.
PENDING_ENTRY_FILE = "entry.json"
PENDING_RECORD_FILE = "record.json"

# The installed launcher's absolute path, when it started this process (see `started_by`).
_launcher: str | None = None


def started_by(launcher: str) -> None:
    """Record that the installed launcher at `launcher` started this process (`launch.main` calls it)."""
    global _launcher
    _launcher = launcher


def helper_command() -> list[str]:
    """The absolute command that runs this helper: what setup records as `[helper] command`.

    The installed launcher; else a venv's `agentmem` console script (a checkout's editable
    install); else this interpreter with `-m agentmem`. No config is read.
    """
    if _launcher:
        return [_launcher]
    script = os.path.join(sys.prefix, "Scripts" if sys.platform == "win32" else "bin",
                          "agentmem.exe" if sys.platform == "win32" else "agentmem")
    if sys.prefix != sys.base_prefix and os.path.isfile(script):
        return [script]
    return [sys.executable, "-m", "agentmem"]


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


def listed(folder: str) -> list[str]:
    """The names in `folder` not starting with "." (temp files, markers), or [] if it cannot be listed."""
    try:
        return [n for n in os.listdir(folder) if not n.startswith(".")]
    except OSError:
        return []


def project_caches(machine: str | os.PathLike) -> list[str]:
    """Every project cache folder on this machine, of every store, found by listing only (no glob: the
    session-start reminder avoids importing `re`)."""
    cache = cache_root(machine)
    return [os.path.join(cache, store, "projects", project)
            for store in listed(cache) for project in listed(os.path.join(cache, store, "projects"))]


def project_cache(machine: str | os.PathLike, store_key: str, project: str) -> str:
    """One project's cache of one store (`memory/cache.project_dir`; records keep theirs inside it)."""
    return os.path.join(cache_root(machine), store_key, "projects", project)
