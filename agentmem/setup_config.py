"""The parts of config.toml that setup reads, and the two keys it fills in.

Edits go through tomlkit so the rendered comments and the owner's own edits stay,
which keeps Copier's three-way merge on `copier update` clean.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from agentmem.errors import InvalidInput, NotConfigured
from agentmem.fsutil import write_atomic
from agentmem.store import StoreDescription


def _path(home: Path) -> Path:
    return home / "config.toml"


def load(home: Path) -> dict:
    try:
        text = _path(home).read_text("utf-8")
    except FileNotFoundError:
        raise NotConfigured(f"no agentmem config in {home}", hint="set up this machine with copier copy (see bootstrap.md)") from None
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{_path(home)} is not valid TOML: {exc}") from None


def store_description(cfg: dict) -> StoreDescription:
    store = cfg.get("store") or {}
    desc = StoreDescription.from_dict(store)
    if desc.kind == "folder":
        location = Path(desc.location).expanduser()
        if not location.is_absolute():
            raise InvalidInput(f"store location {desc.location!r} must be an absolute folder path")
        return StoreDescription("folder", str(location))
    return desc


def runtime_names(cfg: dict) -> list[str]:
    return list((cfg.get("runtimes") or {}).get("enabled") or [])


def hooks_enabled(cfg: dict) -> bool:
    return bool((cfg.get("hooks") or {}).get("enabled"))


def shared_skills(cfg: dict) -> list[str]:
    return list((cfg.get("skills") or {}).get("install") or [])


def agent_name(cfg: dict) -> str:
    return str(cfg.get("agent") or "").strip()


def complete(home: Path, cfg: dict, *, agent: str, helper_command: list[str]) -> bool:
    """Fill in `agent` (when empty) and `[helper] command`; True if the file changed."""
    import tomlkit

    path = _path(home)
    doc = tomlkit.parse(path.read_text("utf-8"))
    changed = False
    if not agent_name(cfg):
        doc["agent"] = agent
        changed = True
    helper = doc.get("helper")
    if helper is None:
        doc["helper"] = tomlkit.table()
        helper = doc["helper"]
    if list(helper.get("command") or []) != helper_command:
        helper["command"] = helper_command
        changed = True
    if changed:
        write_atomic(path, tomlkit.dumps(doc).encode("utf-8"))
    return changed
