"""The setup-only parts of config.toml: runtimes, hooks, the MCP server, shared skills, and the keys
setup fills in.

Edits go through `config.update` (tomlkit), so the rendered comments and the
owner's own edits stay and Copier's three-way merge on `copier update` stays clean.
"""

from __future__ import annotations

from agentmem import config


def hooks_enabled(cfg: config.Config) -> bool:
    return bool((cfg.data.get("hooks") or {}).get("enabled"))


def mcp_enabled(cfg: config.Config) -> bool:
    """[mcp] enabled: register `agentmem mcp` with the runtimes that take MCP servers."""
    return bool((cfg.data.get("mcp") or {}).get("enabled"))


def shared_skills(cfg: config.Config) -> list[str]:
    return [str(s) for s in (cfg.data.get("skills") or {}).get("install") or []]


def agent_name(cfg: config.Config) -> str:
    return str(cfg.data.get("agent") or "").strip()


def complete(machine, cfg: config.Config, *, agent: str, helper_command: list[str]) -> bool:
    """Fill in `agent` (when empty) and `[helper] command`; True if the file changed."""
    fill_agent = not agent_name(cfg)
    stale_helper = list((cfg.data.get("helper") or {}).get("command") or []) != helper_command
    if not (fill_agent or stale_helper):
        return False

    def change(doc):
        import tomlkit

        if fill_agent:
            doc["agent"] = agent
        if doc.get("helper") is None:
            doc["helper"] = tomlkit.table()
        doc["helper"]["command"] = helper_command

    config.update(machine, change)
    return True
