"""The setup-only parts of config.toml: runtimes, hooks, the MCP server, shared skills, and the keys
setup fills in.

Edits go through `config_edit.update` (tomlkit), so the rendered comments and the
owner's own edits stay and Copier's three-way merge on `copier update` stays clean.
"""

from __future__ import annotations

import os

from agentmem import config

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from tomlkit import TOMLDocument


def hooks_runtimes(cfg: config.Config, names: list[str]) -> set[str]:
    """Which of the runtimes `names` get our hooks: `[hooks] enabled = true` means all of them,
    a list (written by `agentmem hooks install --runtime R`) the ones it names, false none."""
    value = (cfg.data.get("hooks") or {}).get("enabled")
    if isinstance(value, list):
        return {n for n in names if n in value}
    return set(names) if value is True else set()


def record_hooks(machine: str | os.PathLike[str], names: list[str], *, on: bool,
                 enabled_runtimes: list[str]) -> tuple[bool | list[str], bool]:
    """Record in config.toml that hooks are on (or off) for `names`, and commit that change alone.

    Returns (the value written to `[hooks] enabled`, whether it was committed). The value is
    true when every enabled runtime has hooks, false when none has, else the list of those that do.
    """
    cfg = config.load(machine)
    recorded = (cfg.data.get("hooks") or {}).get("enabled")
    if isinstance(recorded, list):
        current = {n for n in recorded if isinstance(n, str)}
    else:
        current = set(enabled_runtimes) if recorded is True else set()
    wanted = current | set(names) if on else current - set(names)
    value: bool | list[str]
    if enabled_runtimes and set(enabled_runtimes) <= wanted:
        value = True
    elif not wanted:
        value = False
    else:  # in config order, then any other runtime named
        value = [n for n in enabled_runtimes if n in wanted] + sorted(wanted - set(enabled_runtimes))

    def change(doc: TOMLDocument) -> None:
        import tomlkit

        if doc.get("hooks") is None:
            doc["hooks"] = tomlkit.table()
        doc["hooks"]["enabled"] = value

    from agentmem import config_edit

    what = "on" if on else "off"
    _, committed, _ = config_edit.update_and_commit(machine, change, f"Hooks {what} for {', '.join(names)}")
    return value, committed


def reflect_on(cfg: config.Config) -> bool:
    """[hooks] reflect: the stop hook asks, once per session, for a turn that saves what lasts
    (hooks/reflect.py). Only where our hooks are installed and the runtime takes the request."""
    return (cfg.data.get("hooks") or {}).get("reflect") is True


def record_reflect(machine: str | os.PathLike[str], on: bool) -> tuple[bool, bool]:
    """Write `[hooks] reflect` and commit that change alone: (changed, committed)."""
    def change(doc: TOMLDocument) -> None:
        import tomlkit

        if doc.get("hooks") is None:
            doc["hooks"] = tomlkit.table()
        doc["hooks"]["reflect"] = on

    from agentmem import config_edit

    changed, committed, _ = config_edit.update_and_commit(
        machine, change, f"End-of-session reflection {'on' if on else 'off'}")
    return changed, committed


def mcp_enabled(cfg: config.Config) -> bool:
    """[mcp] enabled: register `agentmem mcp` with the runtimes that take MCP servers."""
    return bool((cfg.data.get("mcp") or {}).get("enabled"))


def trust_projects(cfg: config.Config) -> bool:
    """[trust] projects: write what the CLIs' own trust prompts write for the mapped folders."""
    return (cfg.data.get("trust") or {}).get("projects") is True


def trusted_folders(cfg: config.Config) -> list[str] | None:
    """The mapped folders (canonical) when `[trust] projects` is on, else None."""
    if not trust_projects(cfg):
        return None
    return list(dict.fromkeys(config.canonical(os.path.expanduser(d)) for d in cfg.projects))


def record_trust_projects(machine: str | os.PathLike[str], on: bool) -> bool:
    """Record `[trust] projects = on` in config.toml and commit that change alone; True if it changed."""
    def change(doc: TOMLDocument) -> None:
        import tomlkit

        if doc.get("trust") is None:
            doc["trust"] = tomlkit.table()
        doc["trust"]["projects"] = on

    from agentmem import config_edit

    changed, _, _ = config_edit.update_and_commit(machine, change, f"Trust projects {'on' if on else 'off'}")
    return changed


def shared_skills(cfg: config.Config) -> list[str]:
    return [str(s) for s in (cfg.data.get("skills") or {}).get("install") or []]


def agent_name(cfg: config.Config) -> str:
    return str(cfg.data.get("agent") or "").strip()


def complete(machine: str | os.PathLike[str], cfg: config.Config, *, agent: str, helper_command: list[str]) -> bool:
    """Fill in `agent` (when empty) and `[helper] command`; True if the file changed."""
    fill_agent = not agent_name(cfg)
    stale_helper = list((cfg.data.get("helper") or {}).get("command") or []) != helper_command
    if not (fill_agent or stale_helper):
        return False

    def change(doc: TOMLDocument) -> None:
        import tomlkit

        if fill_agent:
            doc["agent"] = agent
        if doc.get("helper") is None:
            doc["helper"] = tomlkit.table()
        doc["helper"]["command"] = helper_command

    from agentmem import config_edit

    config_edit.update(machine, change)
    return True
