"""GitHub Copilot CLI: `$COPILOT_HOME` (default `~/.copilot`), checked with Copilot CLI 1.0.102 (2026-12-01).

- Instructions: `$COPILOT_HOME/copilot-instructions.md`; skills: `~/.agents/skills`.
- Hooks: it loads every `$COPILOT_HOME/hooks/*.json` (version 1, camelCase events,
  `{"type": "command", "bash": ..., "timeoutSec": ...}`), so agentmem writes its own
  `hooks/agentmem.json` (hooks/own_files.py): `sessionStart` and `userPromptSubmitted`
  run the reminder, `agentStop` the retry.
- Permissions: no setting pre-approves a command or a path (`trustedFolders` in
  config.json grants reading a folder, not running a command; `allowedUrls` only URLs);
  `copilot -p` needs both `--allow-tool 'shell(<helper>:*)'` and `--add-dir <helper's folder>`
  (either alone is denied), and an interactive session asks the user (the skill says so).
- Trust (`[trust] projects`): what does pre-approve a command is a user-level `preToolUse`
  hook answering `{"permissionDecision": "allow"}` (Copilot's runtime reads it; checked with
  the real CLI, no flags, 2026-12-01). agentmem writes its own `hooks/agentmem-approve.json`
  running `agentmem hook approve`, which allows only a plain helper command run in a mapped
  folder (hooks/approve.py); any other tool call gets no answer and Copilot decides as before.
- MCP: none registered by agentmem.
- Reminder: Copilot injects only a top-level JSON `additionalContext`.
"""

import os

from agentmem.runtimes.spec import Approval, DefaultMode, Reflection, Spec

# The per-turn hook imports this module and runtimes/spec.py alone (hooks/dispatch.py): no typing, no
# pathlib, no __future__; annotations naming what only type checkers import are strings.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from agentmem.hooks.config_files import Change as HookChange
    from agentmem.store.base import StoreDescription

NAME = "copilot"
HOOKS_FILE = "agentmem.json"
APPROVE_FILE = "agentmem-approve.json"  # the pre-tool-use hook of [trust] projects
APPROVE_KEY = "copilot-approve"  # its record among the hook records (hooks-state.json)
SHELL_TOOLS = ("bash", "powershell")  # the tool names Copilot's shell tool has (hook stdin `toolName`)


def approval_shape(reason: str) -> dict:
    """What a preToolUse hook prints to approve the call."""
    return {"permissionDecision": "allow", "permissionDecisionReason": reason}


def shell_call(hook_input: dict) -> tuple[str, str] | None:
    """(command, working folder) of a preToolUse hook's input when the call is the shell tool's:
    `toolName` one of SHELL_TOOLS, `toolArgs` an object (or its JSON text) with a string `command`,
    and `cwd` an absolute path; None for anything else."""
    if hook_input.get("toolName") not in SHELL_TOOLS:
        return None
    args = hook_input.get("toolArgs")
    if isinstance(args, str):
        import json

        try:
            args = json.loads(args)
        except ValueError:
            return None
    command = args.get("command") if isinstance(args, dict) else None
    cwd = hook_input.get("cwd")
    if not isinstance(command, str) or not isinstance(cwd, str) or not os.path.isabs(cwd):
        return None
    return command, cwd


def approve_text(helper: list[str]) -> str:
    import json

    from agentmem.hooks.config_files import hook_command
    from agentmem.hooks.own_files import REMINDER_TIMEOUT

    entry = {"type": "command", "bash": hook_command(helper, NAME, ["approve"]), "timeoutSec": REMINDER_TIMEOUT}
    return json.dumps({"version": 1, "hooks": {"preToolUse": [entry]}}, indent=2) + "\n"


# Plain: every helper command denied (no one to approve). Trusted: the approving preToolUse hook.
# Proved per CLI by tests/test_e2e_default_mode.py; the README's table is rendered from these (registry.py).
DEFAULT_MODE = DefaultMode(
    command="copilot -p", saves=False, searches=False,
    trusted_saves=True, trusted_searches=True,
    otherwise=("both `--allow-tool 'shell(HELPER:*)'` and `--add-dir HELPER_DIR` (the helper's absolute "
                  "path and its folder; setup's report and the skill print them)"),
)

def reminder_shape(event: str, text: str) -> str | dict:
    return {"additionalContext": text}


# The end-of-session reflection (hooks/reflect.py): an agentStop hook's `{"decision": "block",
# "reason": R}` makes Copilot CLI enqueue R as a follow-up user message (its SDK types; it ends a turn
# after 8 blocks in a row), and the agentStop after it carries `stop_hook_active: true`
# (tests/test_e2e_reflect.py, 1.0.102).
REFLECTION = "agentStop hook, decision block"


def continue_shape(reason: str) -> dict:
    return {"decision": "block", "reason": reason}


def hooks_text(helper: list[str]) -> str:
    import json

    from agentmem.hooks.config_files import hook_command
    from agentmem.hooks.own_files import REMINDER_TIMEOUT, STOP_TIMEOUT

    def entry(args: list[str], timeout: int) -> dict:
        return {"type": "command", "bash": hook_command(helper, NAME, args), "timeoutSec": timeout}

    data = {"version": 1, "hooks": {
        "sessionStart": [entry(["reminder"], REMINDER_TIMEOUT)],
        "userPromptSubmitted": [entry(["reminder", "--event", "prompt"], REMINDER_TIMEOUT)],
        "agentStop": [entry(["stop"], STOP_TIMEOUT)],
    }}
    return json.dumps(data, indent=2) + "\n"


def is_our_hooks_file(text: str) -> bool:
    import json

    from agentmem.hooks.config_files import is_ours

    try:
        data = json.loads(text)
    except ValueError:
        return False
    hooks = data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(hooks, dict) or not hooks:
        return False
    entries = [e for group in hooks.values() if isinstance(group, list) for e in group]
    return bool(entries) and all(isinstance(e, dict) and is_ours(e.get("bash")) for e in entries)


def _events(text: str) -> list[str]:
    import json

    return list(json.loads(text)["hooks"])


def flags(helper: list[str]) -> str:
    """What `copilot -p` needs on its command line to run the helper."""
    import shlex

    return (f"--allow-tool 'shell({shlex.join(helper)}:*)' "
            f"--add-dir {shlex.quote(os.path.dirname(helper[0]))}")


class Copilot:
    name = NAME
    permission_setting = False
    trust = None
    mcp = None

    def __init__(self, env: "Mapping[str, str] | None" = None):
        from agentmem.runtimes import base

        env = os.environ if env is None else env
        self.config_dir = base.folder_from(env, "COPILOT_HOME", ".copilot")
        self.instructions = self.config_dir / "copilot-instructions.md"
        self.skills_root = base.agents_skills(env)
        self.hooks_file = self.config_dir / "hooks" / HOOKS_FILE

    def install_hooks(self, machine: str | os.PathLike, helper: list[str]) -> "HookChange":
        from agentmem.hooks import own_files

        return own_files.install(machine, NAME, self.hooks_file, hooks_text(helper), is_our_hooks_file)

    def remove_hooks(self, machine: str | os.PathLike) -> "HookChange":
        from agentmem.hooks import own_files

        return own_files.remove(machine, NAME, self.hooks_file, is_our_hooks_file)

    def hooks_status(self, helper: list[str] | None) -> dict:
        from agentmem.hooks import own_files

        return own_files.status(NAME, self.hooks_file, hooks_text(helper) if helper else None, is_our_hooks_file,
                                _events)

    def grant_permissions(self, machine: "Path", helper: list[str], store: "StoreDescription | None"
                          ) -> tuple[bool, str]:
        from agentmem.errors import NextStep, Option

        return False, str(NextStep.of("Copilot CLI has no setting that pre-approves a command: an interactive "
                                      f"session asks; `copilot -p` needs both {flags(helper)}, unless [trust] "
                                      "projects is on (setup's `", Option("trust-projects"), "`: a hook approves "
                                      "the helper in the mapped folders)"))

    def withdraw_permissions(self, machine: "Path") -> bool:
        return False

    def trust_projects(self, machine: "Path", folders: list[str], helper: list[str]) -> tuple[bool, str]:
        from agentmem.hooks import own_files

        path = self.hooks_file.parent / APPROVE_FILE
        change = own_files.install(machine, APPROVE_KEY, path, approve_text(helper), is_our_hooks_file)
        return change.changed, (f"{path}: a preToolUse hook approves the helper's own commands (nothing chained "
                                f"to them) run in {', '.join(folders) or 'no folder'} and below: plain "
                                "`copilot -p` runs them there with no flags")

    def untrust_projects(self, machine: "Path") -> bool:
        from agentmem.hooks import own_files

        return own_files.remove(machine, APPROVE_KEY, self.hooks_file.parent / APPROVE_FILE, is_our_hooks_file).changed

    def permissions_status(self, machine: "Path", helper: list[str], store: "StoreDescription | None"
                           ) -> tuple[bool, str] | None:
        return None  # nothing to configure (see permission_setting)

    def after_instructions(self, machine: "Path", existed: bool) -> tuple[str, str, str] | None:
        return None


SPEC = Spec(
    name=NAME, title="GitHub Copilot CLI", runtime=Copilot, default_mode=DEFAULT_MODE, reminder_shape=reminder_shape,
    reflection=Reflection(how=REFLECTION, continue_shape=continue_shape),
    approval=Approval(shell_call=shell_call, shape=approval_shape),
)
