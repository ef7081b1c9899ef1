"""OpenCode: `$XDG_CONFIG_HOME/opencode` (default `~/.config/opencode`), checked with OpenCode 1.18.33
(2026-12-01).

- Instructions: `.../opencode/AGENTS.md`; skills: `~/.agents/skills` (it also reads
  `~/.claude/skills`). OpenCode reads `~/.claude/CLAUDE.md` only while its own AGENTS.md
  is absent; when agentmem creates that file and CLAUDE.md holds the user's
  instructions, setup lists CLAUDE.md in opencode.json's `instructions` so OpenCode
  keeps reading it (`after_instructions`).
- Hooks: OpenCode has no command hooks; it loads every `.js` file in `.../plugins/`, so
  agentmem writes its own plugin there (hooks/own_files.py). The plugin runs the reminder
  once when OpenCode loads it and adds it to the system prompt of each request
  (`experimental.chat.system.transform`); on `session.idle` (the end of a reply, also in
  `opencode run`) it runs the retry and waits for it, bounded like the other stop hooks.
- Permissions: its bash tool is allowed by default; nothing to add.
- MCP: none registered by agentmem.
- Reminder: the plugin reads the hook's plain stdout.
"""

import os

from agentmem.runtimes.spec import DefaultMode, Spec

# The per-turn hook imports this module and runtimes/spec.py alone (hooks/dispatch.py): no typing, no
# pathlib, no __future__; annotations naming what only type checkers import are strings.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from agentmem.hooks.config_files import Change as HookChange
    from agentmem.store.base import StoreDescription

NAME = "opencode"
PLUGIN = "agentmem.js"
PLUGIN_MARK = "// agentmem: managed file"
INSTRUCTIONS_KEY = "instructions"  # opencode.json's list of further instruction files


# Its bash tool runs anything by default.
# Proved per CLI by tests/test_e2e_default_mode.py; the README's table is rendered from these (registry.py).
DEFAULT_MODE = DefaultMode(
    command="opencode run", saves=True, searches=True,
    trusted_saves=True, trusted_searches=True,
    otherwise="nothing (its bash tool is allowed by default)",
)

def reminder_shape(event: str, text: str) -> str | dict:
    return text  # plain stdout, which the plugin reads


# The end-of-session reflection (hooks/reflect.py) is not offered: OpenCode's plugin events take no stop
# decision. A plugin could send a new prompt itself on `session.idle` (OpenCode's SDK), which no real run
# here has shown to work in `opencode run`, so it is not claimed (1.18.33, 2026-12-01).
NO_REFLECTION = "not available: OpenCode's plugin events take no stop decision"


def plugin_text(helper: list[str]) -> str:
    import json

    from agentmem.hooks.own_files import REMINDER_TIMEOUT, STOP_TIMEOUT

    return f"""{PLUGIN_MARK} (`agentmem hooks install` writes it, `agentmem hooks remove` deletes it).
// The agentmem memory reminder in each request's system prompt, and a bounded retry of pending
// note uploads when a session goes idle. It runs only the helper below; it never fails a session.
import {{ execFileSync }} from "node:child_process";

const HELPER = {json.dumps(helper)};

function hook(args, timeoutSeconds, input) {{
  try {{
    return execFileSync(HELPER[0], [...HELPER.slice(1), "hook", ...args, "--runtime", "{NAME}"], {{
      input: input ?? "", encoding: "utf8", timeout: timeoutSeconds * 1000, stdio: ["pipe", "pipe", "ignore"],
    }}).trim();
  }} catch {{
    return "";
  }}
}}

export const AgentmemPlugin = async () => {{
  const reminder = hook(["reminder"], {REMINDER_TIMEOUT});
  return {{
    "experimental.chat.system.transform": async (_input, output) => {{
      if (reminder) output.system.push(reminder);
    }},
    event: async ({{ event }}) => {{
      if (event.type === "session.idle") hook(["stop"], {STOP_TIMEOUT}, "{{}}");
    }},
  }};
}};
"""


def is_our_plugin(text: str) -> bool:
    return text.startswith(PLUGIN_MARK)


class OpenCode:
    name = NAME
    permission_setting = False
    trust = None
    mcp = None

    def __init__(self, env: "Mapping[str, str] | None" = None):
        from agentmem.runtimes import base, claude

        env = os.environ if env is None else env
        self.config_dir = base.xdg_config(env) / "opencode"
        self.instructions = self.config_dir / "AGENTS.md"
        self.skills_root = base.agents_skills(env)
        self.hooks_file = self.config_dir / "plugins" / PLUGIN
        self.claude_md = claude.Claude(env).instructions

    def install_hooks(self, machine: str | os.PathLike, helper: list[str]) -> "HookChange":
        from agentmem.hooks import own_files

        return own_files.install(machine, NAME, self.hooks_file, plugin_text(helper), is_our_plugin)

    def remove_hooks(self, machine: str | os.PathLike) -> "HookChange":
        from agentmem.hooks import own_files

        return own_files.remove(machine, NAME, self.hooks_file, is_our_plugin)

    def hooks_status(self, helper: list[str] | None) -> dict:
        from agentmem.hooks import own_files

        return own_files.status(NAME, self.hooks_file, plugin_text(helper) if helper else None, is_our_plugin,
                                lambda text: ["plugin"])

    def grant_permissions(self, machine: "Path", helper: list[str], store: "StoreDescription | None"
                          ) -> tuple[bool, str]:
        return False, "nothing needed (its bash tool is allowed by default)"

    def withdraw_permissions(self, machine: "Path") -> bool:
        return False

    def trust_projects(self, machine: "Path", folders: list[str], helper: list[str]) -> tuple[bool, str]:
        return False, "nothing to write: OpenCode asks no folder trust and runs its bash tool anywhere"

    def untrust_projects(self, machine: "Path") -> bool:
        return False

    def permissions_status(self, machine: "Path", helper: list[str], store: "StoreDescription | None"
                           ) -> tuple[bool, str] | None:
        return None  # nothing to configure (see permission_setting)

    def after_instructions(self, machine: "Path", existed: bool) -> tuple[str, str, str] | None:
        """Keep OpenCode reading the user's `~/.claude/CLAUDE.md` once our AGENTS.md exists."""
        from agentmem.errors import AgentmemError

        try:
            outcome = self.keep_claude_md(machine, agents_md_existed=existed)
        except AgentmemError as exc:
            return "CLAUDE.md", "warning", exc.one_line()
        return None if outcome is None else ("CLAUDE.md", *outcome)

    def keep_claude_md(self, machine: "Path", *, agents_md_existed: bool) -> tuple[str, str] | None:
        """(step status, detail), or None when there is nothing to keep."""
        from agentmem.fsutil import read_bytes
        from agentmem.machine import blocks, json_items

        config = self.config_dir / "opencode.json"
        ours_before = json_items.recorded(machine, config, INSTRUCTIONS_KEY)
        if agents_md_existed and not ours_before:
            return None  # the user had OpenCode's AGENTS.md already: OpenCode ignored CLAUDE.md before us too
        try:
            user_text = blocks.without_block(read_bytes(self.claude_md).decode("utf-8", errors="replace")).strip()
        except FileNotFoundError:
            user_text = ""
        if not user_text:
            return None
        if (self.config_dir / "opencode.jsonc").exists() and not config.exists():
            return "warning", (f"OpenCode no longer reads {self.claude_md} now that {self.instructions} exists; "
                               f'add it to "instructions" in {self.config_dir / "opencode.jsonc"} to keep it')
        changed = json_items.add_items(machine, config, INSTRUCTIONS_KEY, [str(self.claude_md)])
        return "changed" if changed else "ok", f"{config}: instructions has {self.claude_md} (OpenCode still reads it)"


SPEC = Spec(
    name=NAME, title="OpenCode", runtime=OpenCode, default_mode=DEFAULT_MODE, reminder_shape=reminder_shape,
    reflection=None, no_reflection=NO_REFLECTION,
)
