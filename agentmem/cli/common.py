"""What several command groups share: the machine folder, its config, the network budget, the store.

Imports stay inside the functions: a search must not pay for what `setup` needs.

Every config a command reads goes through `config()` or `load_config()`, which keep it for
the end of the command: `cli/main.py` then prints its warnings (a stale config in use) and,
if the command succeeded, keeps its parsed copy (`finish`). One CLI process runs one command.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    import argparse
    from pathlib import Path

    from agentmem.config import Config
    from agentmem.runtimes.base import Runtime
    from agentmem.store.base import Store

# The configs this command read, for `warnings` and `finish`.
_read: list[Config] = []


def machine() -> str:
    """This machine's folder (AGENTMEM_HOME or the platform default), as a str."""
    from agentmem.paths import machine_dir

    return machine_dir()


def machine_path() -> Path:
    """The machine folder as a pathlib.Path, for commands off the per-turn path (setup, skills, map)."""
    from pathlib import Path

    return Path(machine())


def config() -> Config:
    """The machine's config; stops with the setup hint when no store is configured."""
    cfg = load_config(machine())
    _ = cfg.store  # raises NotConfigured with the hint (config.require)
    return cfg


def load_config(folder: str | os.PathLike | None = None) -> Config:
    """The config of `folder` (default: this machine's), even without a store configured."""
    from agentmem import config as config_module

    cfg = config_module.load(machine() if folder is None else folder)
    _read.append(cfg)
    return cfg


def warnings() -> list[str]:
    """What reading the config found for the user (a stale config in use), each line once."""
    return list(dict.fromkeys(w for cfg in _read for w in cfg.warnings))


def finish() -> None:
    """The command succeeded: keep the parsed copies of the configs it read."""
    for cfg in _read:
        cfg.keep_parsed_copy()


def project(cfg: Config, args: argparse.Namespace, action: str) -> str:
    """The project to work in; a `--project` holding a credential is refused without being echoed."""
    if args.project is not None:
        from agentmem.safety.screening import refuse_argument

        refuse_argument(args.project, "--project", action)
    return cfg.resolve_project(explicit=args.project)


def timeout(cfg: Config) -> float:
    """The network deadline; a malformed setting falls back to the default with a warning on stderr
    (config.timeout_or_default)."""
    from agentmem.config import timeout_or_default

    value, warning = timeout_or_default(cfg)
    if warning:
        sys.stderr.write(f"agentmem: warning: {warning}\n")
    return value


def store(cfg: Config) -> Store:
    """The configured store, opened with this invocation's network budget."""
    from agentmem.store.opening import open_store

    return open_store(cfg.store, timeout=timeout(cfg))


def runtimes(cfg: Config) -> list[Runtime]:
    """The enabled runtimes (runtimes/registry.py)."""
    from agentmem.runtimes.registry import configured

    return configured(cfg.data)
