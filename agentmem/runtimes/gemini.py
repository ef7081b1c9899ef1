"""Gemini CLI: `~/.gemini`, checked with Gemini CLI 0.61.0 (2026-12-01).

- Instructions: `~/.gemini/GEMINI.md`; skills: `~/.agents/skills`.
- Hooks: the `hooks` key of `~/.gemini/settings.json`, in Claude Code's shape with its own
  event names and timeouts in milliseconds: `SessionStart` and `BeforeAgent` (each prompt)
  run the reminder, `AfterAgent` (after each reply, also in `-p` mode) the bounded retry.
  Reading, recognising, installing and removing them is hooks/config_files.py's.
- Permissions: `gemini -p` offers no shell tool unless a policy allows the command; setup
  writes its own policy file `~/.gemini/policies/agentmem.toml` allowing commands that
  start with the helper (others stay denied). Gemini asks for a heredoc (`<<`), so the
  skill saves with `--text` there.
- Trust (`[trust] projects`): `"<folder>": "TRUST_FOLDER"` in `~/.gemini/trustedFolders.json`
  (`GEMINI_CLI_TRUSTED_FOLDERS_PATH` moves it), what Gemini's own trust prompt writes (the
  bundle's `TrustLevel`, paths lowercased on macOS and Windows as its `normalizePath` does).
  Plain `gemini -p` in such a folder or below it runs instead of exiting 55 ("not running in a
  trusted directory"), and the folder's own `.gemini/` settings apply. The user's entries
  (`TRUST_PARENT`, `DO_NOT_TRUST`, or one for the same folder) are never changed.
- MCP: none registered by agentmem.
- Reminder: Gemini adds only JSON `hookSpecificOutput.additionalContext` to the model's context.
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
    from agentmem.store.base import StoreDescription

NAME = "gemini"
EVENTS = {"start": "SessionStart", "prompt": "BeforeAgent"}  # the Gemini events our reminder runs on
POLICY_FILE = "agentmem.toml"
POLICY_MARK = "# agentmem: managed file"
TRUST_FOLDER = "TRUST_FOLDER"


# Plain, in a folder it does not trust: exits 55 before any model request. Trusted: the policy runs the helper.
# Proved per CLI by tests/test_e2e_default_mode.py; the README's table is rendered from these (registry.py).
DEFAULT_MODE = DefaultMode(
    command="gemini -p", saves=False, searches=False,
    trusted_saves=True, trusted_searches=True,
    otherwise="`--skip-trust` (or trusting the folder at its prompt)",
)

def reminder_shape(event: str, text: str) -> str | dict:
    return {"hookSpecificOutput": {"hookEventName": EVENTS[event], "additionalContext": text}}


# The end-of-session reflection (hooks/reflect.py): an AfterAgent hook's `{"decision": "block",
# "reason": R}` makes Gemini CLI send R as the next message, also in `-p` mode, and the AfterAgent
# after it carries `stop_hook_active: true` (tests/test_e2e_reflect.py, 0.61.0).
REFLECTION = "AfterAgent hook, decision block"


def continue_shape(reason: str) -> dict:
    return {"decision": "block", "reason": reason}


def hook_groups(helper: list[str]) -> list[tuple[str, dict]]:
    """(event, group) of our entries: every matcher `*`, a name per handler, timeouts in milliseconds."""
    from agentmem.hooks.actions import STOP_BUDGET, STOP_GRACE
    from agentmem.hooks.config_files import hook_command

    entries = (
        ("SessionStart", ["reminder"], 10_000),
        ("BeforeAgent", ["reminder", "--event", "prompt"], 10_000),
        ("AfterAgent", ["stop"], int(STOP_BUDGET + STOP_GRACE + 3) * 1000),
    )
    return [(event, {"matcher": "*", "hooks": [{"type": "command", "name": f"agentmem-{args[0]}",
                                                "command": hook_command(helper, NAME, args), "timeout": timeout}]})
            for event, args, timeout in entries]


def policy_text(helper: list[str]) -> str:
    import shlex

    prefix = shlex.join(helper).replace("\\", "\\\\").replace('"', '\\"')
    return (f"{POLICY_MARK} (agentmem setup writes it; removing the runtime deletes it).\n"
            "# Lets Gemini CLI run the agentmem helper without asking, in every mode; any other\n"
            "# command, and a command that chains the helper with another, is decided as before.\n"
            "[[rule]]\n"
            'toolName = "run_shell_command"\n'
            f'commandPrefix = "{prefix}"\n'
            'decision = "allow"\n'
            "priority = 100\n")


def _read(path: "Path") -> str | None:
    from agentmem.fsutil import read_bytes

    try:
        return read_bytes(path).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return None


class Gemini:
    name = NAME
    permission_setting = True
    trust = None
    mcp = None

    def __init__(self, env: "Mapping[str, str] | None" = None):
        from agentmem.runtimes import base

        env = os.environ if env is None else env
        self.config_dir = base.home(env) / ".gemini"
        self.instructions = self.config_dir / "GEMINI.md"
        self.skills_root = base.agents_skills(env)
        self.hooks_file = self.config_dir / "settings.json"
        self.policy_file = self.config_dir / "policies" / POLICY_FILE
        moved = env.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        self.trusted_folders = base.home(env) / moved if moved else self.config_dir / "trustedFolders.json"

    def install_hooks(self, machine: str | os.PathLike, helper: list[str]) -> "HookChange":
        from agentmem.hooks import config_files

        return config_files.install(machine, NAME, self.hooks_file, hook_groups(helper))

    def remove_hooks(self, machine: str | os.PathLike) -> "HookChange":
        from agentmem.hooks import config_files

        return config_files.remove(machine, NAME, self.hooks_file)

    def hooks_status(self, helper: list[str] | None) -> dict:
        from agentmem.hooks import config_files

        return config_files.status(NAME, self.hooks_file, hook_groups(helper) if helper else None)

    def grant_permissions(self, machine: "Path", helper: list[str], store: "StoreDescription | None"
                          ) -> tuple[bool, str]:
        from agentmem.errors import InvalidInput
        from agentmem.fsutil import write_atomic

        path = self.policy_file
        policy = policy_text(helper)
        current = _read(path)
        if current is not None and not current.startswith(POLICY_MARK):
            raise InvalidInput(f"{path} exists and was not written by agentmem; it was left alone")
        if current != policy:
            write_atomic(path, policy.encode("utf-8"))
        return current != policy, f"{path} allows the helper's commands"

    def withdraw_permissions(self, machine: "Path") -> bool:
        current = _read(self.policy_file)
        if current is None or not current.startswith(POLICY_MARK):
            return False
        self.policy_file.unlink()
        return True

    def trust_projects(self, machine: "Path", folders: list[str], helper: list[str]) -> tuple[bool, str]:
        import sys

        from agentmem.machine import json_members

        fold = sys.platform in ("darwin", "win32")  # as Gemini's normalizePath: case-insensitive there
        wanted = {f.lower() if fold else f: TRUST_FOLDER for f in folders}
        changed, theirs = json_members.set_members(machine, self.trusted_folders, wanted)
        ours = [f for f in wanted if f not in theirs]
        detail = (f"{self.trusted_folders}: {', '.join(ours) or 'no folder'} = {TRUST_FOLDER}; plain `gemini -p` "
                  "runs in those folders and below (instead of exiting 55, untrusted), and their own .gemini/ "
                  "settings apply")
        if theirs:
            detail += f"; left your own entries for {', '.join(theirs)} as they are"
        return changed, detail

    def untrust_projects(self, machine: "Path") -> bool:
        from agentmem.machine import json_members

        return json_members.remove_members(machine, self.trusted_folders)

    def permissions_status(self, machine: "Path", helper: list[str], store: "StoreDescription | None"
                           ) -> tuple[bool, str] | None:
        current = _read(self.policy_file)
        if current is None:
            return False, f"{self.policy_file} is missing"
        if current != policy_text(helper):
            return False, f"{self.policy_file} is not the policy setup writes"
        return True, f"{self.policy_file} allows the helper's commands"

    def after_instructions(self, machine: "Path", existed: bool) -> tuple[str, str, str] | None:
        return None


SPEC = Spec(
    name=NAME, title="Gemini CLI", runtime=Gemini, default_mode=DEFAULT_MODE, reminder_shape=reminder_shape,
    reflection=Reflection(how=REFLECTION, continue_shape=continue_shape),
)
