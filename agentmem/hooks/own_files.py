"""Hook files that are agentmem's own: Copilot CLI's `hooks/agentmem.json` and OpenCode's plugin.

Copilot CLI loads every `$COPILOT_HOME/hooks/*.json` (version 1, camelCase events,
`{"type": "command", "bash": ..., "timeoutSec": ...}`), and OpenCode every `.js`
file in `$XDG_CONFIG_HOME/opencode/plugins/` (it has no command hooks; checked
with Copilot CLI 1.0.102 and OpenCode 1.18.33, 2026-12-01). So neither needs an
edit of a file the user owns: installing writes our own file, removing deletes it
(and the folder, if agentmem created it and it is empty). A file of that name
that agentmem did not write is reported and left alone.

What they run:
- Copilot: `sessionStart` and `userPromptSubmitted` run the reminder (printed as a
  top-level `additionalContext`, the one form Copilot injects), `agentStop` the retry.
- OpenCode: the plugin runs the reminder once when OpenCode loads it and adds it
  to the system prompt of each request (`experimental.chat.system.transform`);
  on `session.idle` (the end of a reply, also in `opencode run`) it runs the retry
  and waits for it, bounded by the same timeout as the other runtimes' stop hooks.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from agentmem.errors import Command, InvalidInput, NextStep
from agentmem.fsutil import read_bytes, write_atomic
from agentmem.hooks import config_files
from agentmem.hooks.actions import STOP_BUDGET, STOP_GRACE
from agentmem.machine.runtimes import runtime as get_runtime

REMINDER_TIMEOUT = 10  # seconds, as for the other runtimes' reminder hooks
STOP_TIMEOUT = int(STOP_BUDGET + STOP_GRACE) + 3
PLUGIN_MARK = "// agentmem: managed file"


def copilot_text(helper: list[str]) -> str:
    def entry(args, timeout):
        return {"type": "command", "bash": config_files.hook_command(helper, "copilot", args), "timeoutSec": timeout}

    data = {"version": 1, "hooks": {
        "sessionStart": [entry(["reminder"], REMINDER_TIMEOUT)],
        "userPromptSubmitted": [entry(["reminder", "--event", "prompt"], REMINDER_TIMEOUT)],
        "agentStop": [entry(["stop"], STOP_TIMEOUT)],
    }}
    return json.dumps(data, indent=2) + "\n"


def _copilot_is_ours(text: str) -> bool:
    try:
        data = json.loads(text)
    except ValueError:
        return False
    hooks = data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(hooks, dict) or not hooks:
        return False
    entries = [e for group in hooks.values() if isinstance(group, list) for e in group]
    return bool(entries) and all(isinstance(e, dict) and config_files.is_ours(e.get("bash")) for e in entries)


def opencode_text(helper: list[str]) -> str:
    return f"""{PLUGIN_MARK} (`agentmem hooks install` writes it, `agentmem hooks remove` deletes it).
// The agentmem memory reminder in each request's system prompt, and a bounded retry of pending
// note uploads when a session goes idle. It runs only the helper below; it never fails a session.
import {{ execFileSync }} from "node:child_process";

const HELPER = {json.dumps(helper)};

function hook(args, timeoutSeconds, input) {{
  try {{
    return execFileSync(HELPER[0], [...HELPER.slice(1), "hook", ...args, "--runtime", "opencode"], {{
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


def _opencode_is_ours(text: str) -> bool:
    return text.startswith(PLUGIN_MARK)


FORMATS = {"copilot": (copilot_text, _copilot_is_ours), "opencode": (opencode_text, _opencode_is_ours)}


def _read(path: Path) -> str | None:
    try:
        return read_bytes(path).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None


def install(machine: str | os.PathLike, runtime: str, helper: list[str], env: dict | None = None):
    path = get_runtime(runtime, env).hooks_file
    render, is_ours = FORMATS[runtime]
    wanted = render(helper)
    current = _read(path)
    if current is not None and not is_ours(current):
        raise InvalidInput(f"{path} exists and was not written by agentmem; it was left alone",
                           hint=NextStep("move it away, then run `{}` again", Command("hooks", "install")))
    if current == wanted:
        return config_files.Change(runtime, path, False, "already installed")
    state = config_files._load_state(machine)
    previous = state.get(runtime) if (state.get(runtime) or {}).get("file") == str(path) else None
    created_dir = not path.parent.exists() or bool(previous and previous.get("created_dir"))
    state[runtime] = {"file": str(path), "created_dir": created_dir}
    config_files._save_state(machine, state)
    write_atomic(path, wanted.encode("utf-8"))
    return config_files.Change(runtime, path, True, "installed")


def remove(machine: str | os.PathLike, runtime: str, env: dict | None = None):
    path = get_runtime(runtime, env).hooks_file
    _, is_ours = FORMATS[runtime]
    state = config_files._load_state(machine)
    record = state.pop(runtime, None) if (state.get(runtime) or {}).get("file") == str(path) else None
    current = _read(path)
    if current is None or not is_ours(current):
        if record is not None:
            config_files._save_state(machine, state)
        return config_files.Change(runtime, path, False, "no agentmem hooks found")
    path.unlink()
    detail = "removed the file agentmem had written"
    if record and record.get("created_dir"):
        try:
            path.parent.rmdir()  # only when empty: anything of the user's keeps it
        except OSError:
            pass
    if record is not None:
        config_files._save_state(machine, state)
    return config_files.Change(runtime, path, True, detail)


def status(runtime: str, helper: list[str] | None, env: dict | None = None) -> dict:
    path = get_runtime(runtime, env).hooks_file
    render, is_ours = FORMATS[runtime]
    current = _read(path)
    if current is None or not is_ours(current):
        return {"runtime": runtime, "file": str(path), "installed": False, "events": [],
                "current": None if not helper else False}
    events = list(json.loads(current)["hooks"]) if runtime == "copilot" else ["plugin"]
    return {"runtime": runtime, "file": str(path), "installed": True, "events": events,
            "current": current == render(helper) if helper else None}
