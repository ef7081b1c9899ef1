"""Claude Code: `~/.claude`, checked with Claude Code 2.1.332 (2026-12-01).

- Instructions: `~/.claude/CLAUDE.md`; skills: `~/.claude/skills` (its own root).
- Hooks: the `hooks` key of `~/.claude/settings.json` (hooks/config_files.py).
- Permissions: `claude -p` refuses Bash without a permission rule; setup adds
  `Bash(<helper>:*)` to `permissions.allow` in `~/.claude/settings.json`
  (machine/json_items.py; compound commands such as `helper ...; rm ...` still need approval).
- MCP: `mcpServers.agentmem` in `~/.claude.json`, its user scope (the file and shape
  `claude mcp add --scope user` writes), spliced in by machine/claude_config.py.
- Reminder: Claude Code adds a hook's plain stdout to the model's context.
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

NAME = "claude"
ALLOW = "permissions.allow"
MCP_CONTAINER, MCP_NAME = "mcpServers", "agentmem"


# The allow rule setup adds runs the helper in `claude -p`.
# Proved per CLI by tests/test_e2e_default_mode.py; the README's table is rendered from these (registry.py).
DEFAULT_MODE = DefaultMode(
    command="claude -p", saves=True, searches=True,
    trusted_saves=True, trusted_searches=True,
    otherwise="nothing (setup's allow rule runs the helper)",
)

def reminder_shape(event: str, text: str) -> str | dict:
    return text  # plain stdout


# The end-of-session reflection (hooks/reflect.py): a Stop hook's `{"decision": "block", "reason": R}`
# makes `claude -p` send R as one more turn (shown as "Stop hook blocking error from command: ...: R"),
# and the stop after it carries `stop_hook_active: true` (tests/test_e2e_reflect.py, 2.1.332).
REFLECTION = "Stop hook, decision block"


def continue_shape(reason: str) -> dict:
    return {"decision": "block", "reason": reason}


def allow_rule(helper: list[str]) -> str:
    import shlex

    return f"Bash({shlex.join(helper)}:*)"


class ClaudeMcp:
    """Our member of `mcpServers` in `~/.claude.json`."""

    def __init__(self, file: "Path"):
        self.file = file

    def entry(self, helper: list[str]) -> dict:
        return {"type": "stdio", "command": helper[0], "args": [*helper[1:], "mcp"], "env": {}}

    def current(self, machine: "Path") -> tuple[object, bool]:
        from agentmem.machine import claude_config

        return (claude_config.read_member(self.file, MCP_CONTAINER, MCP_NAME),
                claude_config.is_managed(machine, self.file, MCP_CONTAINER, MCP_NAME))

    def write(self, machine: "Path", value: dict) -> "FileChange":
        from agentmem.machine import claude_config

        return claude_config.set_member(machine, self.file, MCP_CONTAINER, MCP_NAME, value)

    def delete(self, machine: "Path") -> "FileChange":
        from agentmem.machine import claude_config

        return claude_config.remove_member(machine, self.file, MCP_CONTAINER, MCP_NAME)


class Claude:
    name = NAME
    permission_setting = True
    trust = None

    def __init__(self, env: "Mapping[str, str] | None" = None):
        from agentmem.runtimes import base

        env = os.environ if env is None else env
        home = base.home(env)
        self.config_dir = home / ".claude"
        self.instructions = self.config_dir / "CLAUDE.md"
        self.skills_root = self.config_dir / "skills"
        self.hooks_file = self.config_dir / "settings.json"
        self.mcp: ClaudeMcp | None = ClaudeMcp(home / ".claude.json")

    def install_hooks(self, machine: str | os.PathLike, helper: list[str]) -> "HookChange":
        from agentmem.hooks import config_files

        return config_files.install(machine, NAME, self.hooks_file, config_files.standard_groups(NAME, helper))

    def remove_hooks(self, machine: str | os.PathLike) -> "HookChange":
        from agentmem.hooks import config_files

        return config_files.remove(machine, NAME, self.hooks_file)

    def hooks_status(self, helper: list[str] | None) -> dict:
        from agentmem.hooks import config_files

        groups = config_files.standard_groups(NAME, helper) if helper else None
        return config_files.status(NAME, self.hooks_file, groups)

    def grant_permissions(self, machine: "Path", helper: list[str], store: "StoreDescription | None"
                          ) -> tuple[bool, str]:
        from agentmem.machine import json_items

        rule = allow_rule(helper)
        stale = [r for r in json_items.recorded(machine, self.hooks_file, ALLOW) if r != rule]
        changed = json_items.remove_items(machine, self.hooks_file, ALLOW) if stale else False
        changed = json_items.add_items(machine, self.hooks_file, ALLOW, [rule]) or changed
        return changed, f"{self.hooks_file}: {ALLOW} has {rule}"

    def withdraw_permissions(self, machine: "Path") -> bool:
        from agentmem.machine import json_items

        return json_items.remove_items(machine, self.hooks_file, ALLOW)

    def trust_projects(self, machine: "Path", folders: list[str], helper: list[str]) -> tuple[bool, str]:
        return False, ("nothing to write: Claude Code asks no folder trust in `claude -p`; the allow rule "
                       "runs the helper")

    def untrust_projects(self, machine: "Path") -> bool:
        return False

    def permissions_status(self, machine: "Path", helper: list[str], store: "StoreDescription | None"
                           ) -> tuple[bool, str] | None:
        import json

        rule = allow_rule(helper)
        try:
            data = json.loads(self.hooks_file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return False, f"{self.hooks_file} is missing: {ALLOW} lacks {rule}"
        except (OSError, ValueError) as exc:
            return False, f"{self.hooks_file} cannot be read ({type(exc).__name__})"
        found = data
        for key in ALLOW.split("."):
            found = found.get(key) if isinstance(found, dict) else None
        if not isinstance(found, list) or rule not in found:
            return False, f"{self.hooks_file}: {ALLOW} lacks {rule}"
        return True, f"{self.hooks_file}: {ALLOW} has {rule}"

    def after_instructions(self, machine: "Path", existed: bool) -> "tuple[str, Status, str] | None":
        return None


SPEC = Spec(
    name=NAME, title="Claude Code", runtime=Claude, default_mode=DEFAULT_MODE, reminder_shape=reminder_shape,
    reflection=Reflection(how=REFLECTION, continue_shape=continue_shape),
)
