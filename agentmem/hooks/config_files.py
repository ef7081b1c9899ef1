"""Install and remove our hook entries in a runtime's JSON file, keeping everything else.

Codex reads `~/.codex/hooks.json`, Claude Code and Gemini CLI the `hooks` key of
their `settings.json` (paths from `runtimes/`); all use the shape
`{"hooks": {EVENT: [{"matcher": ..., "hooks": [{"type": "command", "command": ...}]}]}}`.
Which groups a runtime gets (events, matchers, timeouts) its runtime module says;
`standard_groups` are Codex's and Claude Code's.

Our entries are recognised exactly, by their whole command: a helper command
(an absolute `.../agentmem` launcher, or an absolute interpreter with `-m
agentmem`) followed by one of our hook argument lists and `--runtime NAME`, in
the quoting `shlex.join` writes. A user's command that merely mentions ours is
theirs. Installing strips any earlier entries of ours and appends the current
ones; other hooks, keys and their order are kept. Removing takes out only ours,
and also the containers we created (recorded in `$AGENTMEM_HOME/hooks-state.json`,
which holds no content of the user's file; a damaged record is ignored).
Files are edited, not re-serialised (`hooks/jsonedit.py`): what we did not add
keeps its text (numbers, escapes, spacing, line endings, comments) and ours follow
the file's layout, so any file comes back byte-equal after install + remove. A file with a key given
twice is refused. Links, dangling links and read-only files follow the rule of
`userfiles.py` (INV user-files).
"""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from agentmem import userfiles
from agentmem.errors import Command, InvalidInput, NextStep, NotConfigured
from agentmem.fsutil import read_bytes, write_atomic
from agentmem.hooks import jsonedit
from agentmem.hooks.actions import STOP_BUDGET, STOP_GRACE

STATE_FILE = "hooks-state.json"

# (event, matcher, helper arguments after `hook`, runtime timeout in seconds): Codex's and
# Claude Code's entries (standard_groups). Both runtimes add SessionStart and UserPromptSubmit stdout to the model's
# context and run Stop hooks in non-interactive mode (checked with Codex 0.171.0
# and Claude Code 2.1.332, 2026-11-30).
ENTRIES = (
    ("SessionStart", "startup|resume|clear|compact", ["reminder"], 10),
    ("UserPromptSubmit", None, ["reminder", "--event", "prompt"], 10),
    ("Stop", None, ["stop"], int(STOP_BUDGET + STOP_GRACE) + 3),
)


@dataclass
class Change:
    runtime: str
    path: Path
    changed: bool
    detail: str


def helper_command(config_data: dict) -> list[str]:
    """The absolute helper command recorded at setup (`[helper] command`), never a PATH lookup."""
    cmd = (config_data.get("helper") or {}).get("command")
    if not isinstance(cmd, list) or not cmd or not all(isinstance(p, str) and p for p in cmd):
        raise NotConfigured(
            "config.toml has no [helper] command = [...]; hooks need the helper's absolute command",
            hint=NextStep("run `{}` again", Command("setup")),
        )
    if not os.path.isabs(cmd[0]):
        raise InvalidInput(f"[helper] command must start with an absolute path, not {cmd[0]!r}")
    return list(cmd)


def hook_command(helper: list[str], runtime: str, args: list[str]) -> str:
    return shlex.join([*helper, "hook", *args, "--runtime", runtime])


# The argument lists after `hook` that our entries use; a command is ours only with one of them.
HOOK_ARGS = (*(tuple(args) for _, _, args, _ in ENTRIES), ("approve",))  # approve: hooks/approve.py
_RUNTIME_WORD = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
_LAUNCHERS = ("agentmem", "agentmem.exe", "agentmem.cmd")


def _is_helper(words: list[str]) -> bool:
    """An absolute helper command: `/.../agentmem`, or `/.../python [-opts] -m agentmem`."""
    if not words or not os.path.isabs(words[0]):
        return False
    if len(words) == 1:
        return os.path.basename(words[0]) in _LAUNCHERS
    return words[-2:] == ["-m", "agentmem"] and all(w.startswith("-") and w != "-m" for w in words[1:-2])


def is_ours(command: object) -> bool:
    """True exactly for a command this module writes: `<helper> hook <our args> --runtime NAME`."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if shlex.join(words) != command:
        return False  # we write commands with shlex.join; anything else was written by someone else
    for args in HOOK_ARGS:
        tail = len(args) + 3
        if (len(words) > tail and words[-tail:-1] == ["hook", *args, "--runtime"]
                and _RUNTIME_WORD.match(words[-1]) and _is_helper(words[:-tail])):
            return True
    return False


# -- reading and writing the user's file --------------------------------------------------------

def read_json(path: Path) -> tuple[dict | None, str | None]:
    """(data, text) of the file, or (None, None) when it does not exist. Never changes it.

    Numbers in `data` are `jsonedit.Number`s holding their exact text.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None
    data, text = jsonedit.read_object(raw, str(path))
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict) or not all(isinstance(v, list) for v in hooks.values()):
        raise InvalidInput(f"{path}: \"hooks\" is not an object of event lists; nothing was changed")
    return data, text


def _dump(data: dict, text: str | None) -> bytes:
    return jsonedit.dumps_like(data, text)


def _write(path: Path, data: dict, text: str | None) -> None:
    """Write into the file `path` stands for (through a link); a new file is private to the user."""
    userfiles.write_file(path, _dump(data, text), new_mode=0o600)


# -- pure transformations -----------------------------------------------------------------------

def strip_ours(data: dict) -> tuple[dict, int, list[str]]:
    """A copy without our handlers; returns (copy, handlers removed, events whose lists we emptied)."""
    out = copy.deepcopy(data)
    hooks = out.get("hooks")
    removed, emptied = 0, []
    if not isinstance(hooks, dict):
        return out, 0, []
    for event, groups in hooks.items():
        kept_groups = []
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list):
                kept_groups.append(group)
                continue
            kept = [h for h in handlers if not (isinstance(h, dict) and is_ours(h.get("command")))]
            removed += len(handlers) - len(kept)
            if kept or len(kept) == len(handlers):
                group = dict(group, hooks=kept) if len(kept) != len(handlers) else group
                kept_groups.append(group)
        if groups and not kept_groups:
            emptied.append(event)
        hooks[event] = kept_groups
    return out, removed, emptied


def standard_groups(runtime: str, helper: list[str]) -> list[tuple[str, dict]]:
    """(event, group) of our entries in Codex's and Claude Code's shape (`ENTRIES`)."""
    out = []
    for event, matcher, args, timeout in ENTRIES:
        group: dict[str, object] = {
            "hooks": [{"type": "command", "command": hook_command(helper, runtime, args), "timeout": timeout}]}
        if matcher:
            group = {"matcher": matcher, **group}
        out.append((event, group))
    return out


def add_ours(data: dict, groups: list[tuple[str, dict]]) -> dict:
    """A copy of `data` with each group appended to its event's list."""
    out = copy.deepcopy(data)
    hooks = out.setdefault("hooks", {})
    for event, group in groups:
        hooks.setdefault(event, []).append(copy.deepcopy(group))
    return out


def our_commands(data: dict | None) -> list[tuple[str, str]]:
    """(event, command) of every handler of ours in `data`, in file order."""
    found = []
    for event, groups in ((data or {}).get("hooks") or {}).items():
        for group in groups:
            for h in (group.get("hooks") or []) if isinstance(group, dict) else []:
                if isinstance(h, dict) and is_ours(h.get("command")):
                    found.append((event, h["command"]))
    return found


# -- state: which containers we created ---------------------------------------------------------

def _valid_record(record: object) -> bool:
    return (isinstance(record, dict) and isinstance(record.get("file"), str)
            and all(isinstance(record.get(k, False), bool) for k in ("created_file", "created_hooks"))
            and isinstance(record.get("created_events", []), list)
            and all(isinstance(e, str) for e in record.get("created_events", [])))


def _load_state(machine: str | os.PathLike) -> dict:
    """Which containers we created, per runtime. A damaged file or record counts as no record:
    remove then takes out only our handlers and the event lists they leave empty."""
    try:
        data = json.loads(read_bytes(os.path.join(machine, STATE_FILE)))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {name: record for name, record in data.items() if _valid_record(record)}


def _save_state(machine: str | os.PathLike, state: dict) -> None:
    path = os.path.join(machine, STATE_FILE)
    try:
        if state:
            write_atomic(path, (json.dumps(state, indent=2, sort_keys=True) + "\n").encode())
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as exc:  # a folder or an unwritable file where our record goes
        raise InvalidInput(f"cannot write {path} ({exc.strerror}); move it away, nothing else was changed") from None


# -- install / remove / status ------------------------------------------------------------------

def install(machine: str | os.PathLike, runtime: str, path: Path, groups: list[tuple[str, dict]]) -> Change:
    """Put `groups` into the hook file at `path` in place of any entries of ours; `runtime` keys the record."""
    real = userfiles.resolve(path)  # INV user-files: a dangling link is refused before anything is read
    data, text = read_json(path)
    base, _, _ = strip_ours(data or {})
    wanted = add_ours(base, groups)
    if data is not None and our_commands(data) == our_commands(wanted):
        return Change(runtime, path, False, "already installed")
    state = _load_state(machine)
    previous = state.get(runtime) if (state.get(runtime) or {}).get("file") == str(path) else None
    created = {
        "file": str(path),
        "created_file": data is None or bool(previous and previous.get("created_file")),
        "created_hooks": "hooks" not in base or bool(previous and previous.get("created_hooks")),
        "created_events": sorted(
            {e for e, _ in groups if e not in (base.get("hooks") or {})}
            | set((previous or {}).get("created_events") or [])
        ),
    }
    userfiles.check_writable(real, shown=path)  # a read-only file is left alone, and nothing recorded
    # Record first: if the write then fails, a later remove still knows what to undo.
    state[runtime] = created
    _save_state(machine, state)
    _write(path, wanted, text)
    return Change(runtime, path, True, "installed")


def remove(machine: str | os.PathLike, runtime: str, path: Path) -> Change:
    state = _load_state(machine)
    record = state.get(runtime) if (state.get(runtime) or {}).get("file") == str(path) else None
    data, text = read_json(path)
    if data is None or not our_commands(data):
        if record is not None:
            state.pop(runtime)
            _save_state(machine, state)
        return Change(runtime, path, False, "no agentmem hooks found")
    stripped, removed, emptied = strip_ours(data)
    hooks = stripped.get("hooks", {})
    created_events = set(record["created_events"]) if record else set(emptied)
    for event in list(hooks):
        if not hooks[event] and event in created_events:
            del hooks[event]
    if "hooks" in stripped and not hooks and (record is None or record.get("created_hooks")):
        del stripped["hooks"]
    userfiles.check_writable(userfiles.resolve(path), shown=path)
    if not stripped and record is not None and record.get("created_file") and not path.is_symlink():
        path.unlink()
        detail = f"removed {removed} hook(s) and the file agentmem had created"
    else:
        _write(path, stripped, text)
        detail = f"removed {removed} hook(s)"
    if record is not None:
        state.pop(runtime)
        _save_state(machine, state)
    return Change(runtime, path, True, detail)


def status(runtime: str, path: Path, groups: list[tuple[str, dict]] | None) -> dict:
    """What of ours is in the file at `path`, and whether it matches `groups` (None: no helper known)."""
    data, _ = read_json(path)
    found = our_commands(data)
    current = our_commands(add_ours({}, groups)) if groups is not None else None
    return {
        "runtime": runtime,
        "file": str(path),
        "installed": bool(found),
        "events": [e for e, _ in found],
        "current": found == current if current is not None else None,
    }
