"""Our hook entries in Gemini CLI's `~/.gemini/settings.json`, beside the user's own settings.

Gemini CLI keeps hooks under the `hooks` key of its settings, in the same
`{EVENT: [{"matcher": ..., "hooks": [{"type": "command", "command": ...}]}]}`
shape as Claude Code, with its own event names and timeouts in milliseconds
(Gemini CLI 0.61.0, checked 2026-12-01):

- `SessionStart` and `BeforeAgent` (each prompt) run the reminder; Gemini adds
  only JSON `hookSpecificOutput.additionalContext` to the model's context, so the
  reminder prints that form for `--runtime gemini` (hooks/dispatch.py);
- `AfterAgent` (after each reply, also in `-p` mode) runs the bounded retry.

Reading, recognising and stripping our entries, the style-keeping rewrite and
the record of containers we created are config_files.py's, shared with Codex
and Claude Code; only the entries differ.
"""

from __future__ import annotations

import copy
import os

from agentmem.hooks import config_files
from agentmem.hooks.actions import STOP_BUDGET, STOP_GRACE
from agentmem.machine.runtimes import runtime as get_runtime

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
    path = get_runtime(RUNTIME, env).hooks_file
    data, text = config_files.read_json(path)
    base, _, _ = config_files.strip_ours(data or {})
    wanted = add_ours(base, helper)
    if data is not None and config_files.our_commands(data) == config_files.our_commands(wanted):
        return config_files.Change(RUNTIME, path, False, "already installed")
    state = config_files._load_state(machine)
    previous = state.get(RUNTIME) if (state.get(RUNTIME) or {}).get("file") == str(path) else None
    state[RUNTIME] = {
        "file": str(path),
        "created_file": data is None or bool(previous and previous.get("created_file")),
        "created_hooks": "hooks" not in base or bool(previous and previous.get("created_hooks")),
        "created_events": sorted(
            {e for e, *_ in ENTRIES if e not in (base.get("hooks") or {})}
            | set((previous or {}).get("created_events") or [])
        ),
    }
    config_files._save_state(machine, state)  # first: a failed write can still be undone
    path.parent.mkdir(parents=True, exist_ok=True)
    config_files._write(path, wanted, text)
    return config_files.Change(RUNTIME, path, True, "installed")


def remove(machine: str | os.PathLike, env: dict | None = None) -> config_files.Change:
    """The same undo as for Claude Code's settings.json (config_files.remove), on Gemini's file."""
    path = get_runtime(RUNTIME, env).hooks_file
    state = config_files._load_state(machine)
    record = state.get(RUNTIME) if (state.get(RUNTIME) or {}).get("file") == str(path) else None
    data, text = config_files.read_json(path)
    if data is None or not config_files.our_commands(data):
        if record is not None:
            state.pop(RUNTIME)
            config_files._save_state(machine, state)
        return config_files.Change(RUNTIME, path, False, "no agentmem hooks found")
    stripped, removed, emptied = config_files.strip_ours(data)
    hooks = stripped.get("hooks", {})
    created_events = set(record["created_events"]) if record else set(emptied)
    for event in list(hooks):
        if not hooks[event] and event in created_events:
            del hooks[event]
    if "hooks" in stripped and not hooks and (record is None or record.get("created_hooks")):
        del stripped["hooks"]
    if not stripped and record is not None and record.get("created_file"):
        path.unlink()
        detail = f"removed {removed} hook(s) and the file agentmem had created"
    else:
        config_files._write(path, stripped, text)
        detail = f"removed {removed} hook(s)"
    if record is not None:
        state.pop(RUNTIME)
        config_files._save_state(machine, state)
    return config_files.Change(RUNTIME, path, True, detail)


def status(helper: list[str] | None, env: dict | None = None) -> dict:
    path = get_runtime(RUNTIME, env).hooks_file
    data, _ = config_files.read_json(path)
    found = config_files.our_commands(data)
    current = config_files.our_commands(add_ours({}, helper)) if helper else None
    return {"runtime": RUNTIME, "file": str(path), "installed": bool(found), "events": [e for e, _ in found],
            "current": found == current if current is not None else None}
