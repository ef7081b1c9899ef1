"""Codex CLI: `$CODEX_HOME` (default `~/.codex`), checked with Codex 0.171.0 (2026-12-01).

- Instructions: `$CODEX_HOME/AGENTS.md`; skills: `~/.agents/skills`.
- Hooks: `$CODEX_HOME/hooks.json`, in the shape Claude Code uses (hooks/config_files.py).
  Codex skips a user hook silently until it is trusted; `agentmem hooks trust` asks
  Codex's app-server to trust ours (hooks/codex_trust.py).
- Sandbox: `codex exec` runs commands read-only, outside a trusted project (below);
  in `workspace-write` (`-s workspace-write`, `sandbox_mode`, or the TUI in a trusted
  project) only the working folder, /tmp, $TMPDIR and
  `sandbox_workspace_write.writable_roots` are writable. Setup adds the machine folder
  and a folder store to those roots in `$CODEX_HOME/config.toml` (machine/codex_config.py),
  so save and search work there; read-only sessions get the helper's one-line "not
  writable" error, and the skill tells the agent how to ask for escalation.
- Trust (`[trust] projects`): `[projects."<folder>"] trust_level = "trusted"` in
  `$CODEX_HOME/config.toml`, what Codex's own "trust this folder?" prompt writes. Plain
  `codex exec` (and the TUI) then runs a session started in that folder, or in a git checkout
  whose root it is, workspace-write instead of read-only; a subfolder of a folder that is no
  checkout root is not covered (checked with Codex 0.171.0, 2026-12-01). A trusted project's
  own `.codex/` configuration takes effect too. The user's own `[projects."..."]` tables are
  never changed; only the tables agentmem wrote are taken out again.
- MCP: `[mcp_servers.agentmem]` in `$CODEX_HOME/config.toml`. Codex starts a server with
  a few variables of its environment only (HOME, PATH, ...), so the entry names the
  ones agentmem reads in `env_vars`: names, never values.
- Reminder: Codex adds a hook's plain stdout to the model's context.
"""

import os

from agentmem.runtimes.spec import DefaultMode, Reflection, Spec

# The per-turn hook imports this module and runtimes/spec.py alone (hooks/dispatch.py): no typing, no
# pathlib, no __future__; annotations naming what only type checkers import are strings.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from agentmem.hooks.config_files import Change as HookChange
    from agentmem.status import Status
    from agentmem.store.base import StoreDescription
    from agentmem.userfiles import Change as FileChange

NAME = "codex"
WRITABLE_ROOTS = "sandbox_workspace_write.writable_roots"
MCP_TABLE = "mcp_servers.agentmem"
TRUSTED = {"trust_level": "trusted"}  # what Codex's own trust prompt writes for a folder
# What the MCP server reads from its environment besides HOME and PATH: credentials and the Hub's
# location (bucket store), the machine folder and the network budget when set explicitly.
MCP_ENV_VARS = ["HF_TOKEN", "HF_HOME", "HF_ENDPOINT", "AGENTMEM_HOME", "AGENTMEM_NETWORK_TIMEOUT"]


# Plain: read-only sandbox, approval never. A save fails (exit 6, nothing saved); a search reads what changed
# straight from the store (replica/freshness.py). Trusted: workspace-write.
# Proved per CLI by tests/test_e2e_default_mode.py; the README's table is rendered from these (registry.py).
DEFAULT_MODE = DefaultMode(
    command="codex exec", saves=False, searches=True,
    trusted_saves=True, trusted_searches=True,
    otherwise="`-s workspace-write` (or, in a session, approving the helper outside the sandbox)",
)

def reminder_shape(event: str, text: str) -> str | dict:
    return text  # plain stdout


# The end-of-session reflection (hooks/reflect.py): a Stop hook's `{"decision": "block", "reason": R}`
# makes `codex exec` continue with R ("Stop hook requested continuation"; the model sees
# `<hook_prompt ...>R</hook_prompt>`), and the stop after it carries `stop_hook_active: true`
# (tests/test_e2e_reflect.py, 0.171.0).
REFLECTION = "Stop hook, decision block"


def continue_shape(reason: str) -> dict:
    return {"decision": "block", "reason": reason}


def writable_paths(machine: "Path", store: "StoreDescription | None") -> list[str]:
    """The folders the helper writes: the machine folder, and a folder store."""
    paths = [os.path.realpath(machine)]
    if store is not None and store.kind == "folder":
        paths.append(os.path.realpath(os.path.expanduser(store.location)))
    return list(dict.fromkeys(paths))


class CodexMcp:
    """Our table in Codex's config.toml."""

    def __init__(self, file: "Path"):
        self.file = file

    def entry(self, helper: list[str]) -> dict:
        return {"command": helper[0], "args": [*helper[1:], "mcp"], "env_vars": list(MCP_ENV_VARS)}

    def current(self, machine: "Path") -> tuple[object, bool]:
        from agentmem.machine import codex_config

        value = codex_config.read_table(self.file, MCP_TABLE) if self.file.exists() else None
        return value, codex_config.is_managed_table(machine, self.file, MCP_TABLE)

    def write(self, machine: "Path", value: dict) -> "FileChange":
        from agentmem.machine import codex_config

        return codex_config.set_table(machine, self.file, MCP_TABLE, value)

    def delete(self, machine: "Path") -> "FileChange":
        from agentmem.machine import codex_config

        return codex_config.remove_table(machine, self.file, MCP_TABLE)


class CodexTrust:
    """Codex skips a user hook silently until it is trusted; its app-server can be asked to trust
    ours (hooks/codex_trust.py)."""

    who = "Codex"

    def __init__(self, hooks_file: "Path"):
        self.hooks_file = hooks_file

    def hint(self, helper: list[str] | None) -> str:
        from agentmem.hooks.codex_trust import trust_hint

        return trust_hint(helper)

    def grant(self, executable: str | None) -> list[str]:
        from agentmem.hooks import codex_trust

        return codex_trust.trust_our_hooks(codex_trust.find_codex(executable), self.hooks_file)


class Codex:
    name = NAME
    permission_setting = True

    def __init__(self, env: "Mapping[str, str] | None" = None):
        from agentmem.runtimes import base

        env = os.environ if env is None else env
        self.config_dir = base.folder_from(env, "CODEX_HOME", ".codex")
        self.instructions = self.config_dir / "AGENTS.md"
        self.skills_root = base.agents_skills(env)
        self.hooks_file = self.config_dir / "hooks.json"
        self.mcp: CodexMcp | None = CodexMcp(self.config_dir / "config.toml")
        self.trust = CodexTrust(self.hooks_file)

    # -- hooks --------------------------------------------------------------------------------

    def install_hooks(self, machine: str | os.PathLike, helper: list[str]) -> "HookChange":
        from agentmem.hooks import config_files

        return config_files.install(machine, NAME, self.hooks_file, config_files.standard_groups(NAME, helper))

    def remove_hooks(self, machine: str | os.PathLike) -> "HookChange":
        from agentmem.hooks import config_files

        return config_files.remove(machine, NAME, self.hooks_file)

    def hooks_status(self, helper: list[str] | None) -> dict:
        from agentmem.hooks import config_files

        groups = config_files.standard_groups(NAME, helper) if helper else None
        out = config_files.status(NAME, self.hooks_file, groups)
        if out["installed"]:
            out["note"] = self.trust.hint(helper)
        return out

    # -- permissions --------------------------------------------------------------------------

    def grant_permissions(self, machine: "Path", helper: list[str], store: "StoreDescription | None"
                          ) -> tuple[bool, str]:
        from agentmem.machine import codex_config

        path = self.config_dir / "config.toml"
        wanted = writable_paths(machine, store)
        changed = False
        if sorted(codex_config.recorded_items(machine, path, WRITABLE_ROOTS)) not in ([], sorted(wanted)):
            changed = codex_config.remove_list_items(machine, path, WRITABLE_ROOTS).changed  # the store moved
        changed = codex_config.add_list_items(machine, path, WRITABLE_ROOTS, wanted).changed or changed
        return changed, f"{path}: {WRITABLE_ROOTS} has {', '.join(wanted)} (for -s workspace-write)"

    def withdraw_permissions(self, machine: "Path") -> bool:
        from agentmem.machine import codex_config

        path = self.config_dir / "config.toml"
        if not codex_config.recorded_items(machine, path, WRITABLE_ROOTS):
            return False
        return codex_config.remove_list_items(machine, path, WRITABLE_ROOTS).changed

    # -- project trust ------------------------------------------------------------------------

    def trust_projects(self, machine: "Path", folders: list[str], helper: list[str]) -> tuple[bool, str]:
        from agentmem.machine import codex_config

        path = self.config_dir / "config.toml"
        changed = self._untrust(machine, keep=set(folders))
        theirs = []
        for folder in folders:
            keys = ("projects", folder)
            if codex_config.read_table(path, keys) is not None and not codex_config.is_managed_table(machine, path,
                                                                                                      keys):
                theirs.append(folder)  # the user's own decision for it stands, whatever it is
                continue
            changed = codex_config.set_table(machine, path, keys, TRUSTED).changed or changed
        ours = [f for f in folders if f not in theirs]
        detail = (f"{path}: [projects.\"<folder>\"] trust_level = \"trusted\" for {', '.join(ours) or 'no folder'}; "
                  "plain `codex exec` runs there workspace-write (the folder, /tmp and the writable roots "
                  "writable) instead of read-only, and the folder's own .codex/ settings apply")
        if theirs:
            detail += f"; left your own entries for {', '.join(theirs)} as they are"
        return changed, detail

    def untrust_projects(self, machine: "Path") -> bool:
        return self._untrust(machine, keep=set())

    def _untrust(self, machine: "Path", keep: set[str]) -> bool:
        """Take out the trust tables agentmem wrote, but for the folders in `keep`."""
        from agentmem.machine import codex_config

        path = self.config_dir / "config.toml"
        changed = False
        for keys in codex_config.managed_tables(machine, path):
            if isinstance(keys, tuple) and len(keys) == 2 and keys[0] == "projects" and keys[1] not in keep:
                changed = codex_config.remove_table(machine, path, keys, if_equal=TRUSTED).changed or changed
        return changed

    def permissions_status(self, machine: "Path", helper: list[str], store: "StoreDescription | None"
                           ) -> tuple[bool, str] | None:
        from agentmem.machine import codex_config

        path = self.config_dir / "config.toml"
        table, key = WRITABLE_ROOTS.rsplit(".", 1)
        try:
            have = (codex_config.read_table(path, table) or {}).get(key) or []
        except Exception as exc:  # noqa: BLE001 - an unreadable file is what the check reports
            return False, f"{path} cannot be read ({type(exc).__name__})"
        missing = [p for p in writable_paths(machine, store) if p not in have]
        if missing:
            return False, f"{path}: {WRITABLE_ROOTS} lacks {', '.join(missing)}"
        return True, f"{path}: {WRITABLE_ROOTS} has the machine folder and the store"

    def after_instructions(self, machine: "Path", existed: bool) -> "tuple[str, Status, str] | None":
        return None


SPEC = Spec(
    name=NAME, title="Codex CLI", runtime=Codex, default_mode=DEFAULT_MODE, reminder_shape=reminder_shape,
    reflection=Reflection(how=REFLECTION, continue_shape=continue_shape),
)
