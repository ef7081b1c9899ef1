"""Our hook entries in Gemini CLI's `~/.gemini/settings.json`, beside the user's own settings.

Gemini CLI keeps hooks under the `hooks` key of its settings, in the same
`{EVENT: [{"matcher": ..., "hooks": [{"type": "command", "command": ...}]}]}`
shape as Claude Code, with its own event names and timeouts in milliseconds
(Gemini CLI 0.61.0, checked 2026-12-01):

- `SessionStart` and `BeforeAgent` (each prompt) run the reminder; Gemini adds
  only JSON `hookSpecificOutput.additionalContext` to the model's context, so the
  reminder prints that form for `--runtime gemini` (hooks/dispatch.py);
- `AfterAgent` (after each reply, also in `-p` mode) runs the bounded retry.

Reading, recognising and stripping our entries, installing and removing them
(with the user-files rule), the style-keeping rewrite and the record of
containers we created are config_files.py's, shared with Codex and Claude
Code; only the entries, built here, differ.
"""

from __future__ import annotations

import copy
import os

from agentmem.hooks import config_files
from agentmem.hooks.actions import STOP_BUDGET, STOP_GRACE

RUNTIME = "gemini"
# (event, matcher, helper arguments after `hook`, timeout in milliseconds).
ENTRIES = (
    ("SessionStart", "*", ["reminder"], 10_000),
    ("BeforeAgent", "*", ["reminder", "--event", "prompt"], 10_000),
    ("AfterAgent", "*", ["stop"], int(STOP_BUDGET + STOP_GRACE + 3) * 1000),
)


def add_ours(data: dict, helper: list[str]) -> dict:
    out = copy.deepcopy(data)
    hooks = out.setdefault("hooks", {})
    for event, matcher, args, timeout in ENTRIES:
        handler = {"type": "command", "name": f"agentmem-{args[0]}",
                   "command": config_files.hook_command(helper, RUNTIME, args), "timeout": timeout}
        hooks.setdefault(event, []).append({"matcher": matcher, "hooks": [handler]})
    return out


def install(machine: str | os.PathLike, helper: list[str], env: dict | None = None) -> config_files.Change:
    return config_files.install(machine, RUNTIME, helper, env)


def remove(machine: str | os.PathLike, env: dict | None = None) -> config_files.Change:
    return config_files.remove(machine, RUNTIME, env)


def status(helper: list[str] | None, env: dict | None = None) -> dict:
    return config_files.status(RUNTIME, helper, env)
