"""Hook files that are agentmem's own, whole: installed by writing them, removed by deleting them.

Copilot CLI loads every `$COPILOT_HOME/hooks/*.json` and OpenCode every `.js` file
in `$XDG_CONFIG_HOME/opencode/plugins/` (runtimes/copilot.py, runtimes/opencode.py
render the text), so neither needs an edit of a file the user owns. Installing
writes our file, removing deletes it (and the folder, if agentmem created it and
it is empty). A file of that name that agentmem did not write is reported and left
alone. Which folders agentmem created is recorded with the other hooks' records
(`hooks-state.json`, config_files.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from agentmem.errors import Command, InvalidInput, NextStep
from agentmem.fsutil import read_bytes, write_atomic
from agentmem.hooks import config_files
from agentmem.hooks.actions import STOP_BUDGET, STOP_GRACE

REMINDER_TIMEOUT = 10  # seconds, as for the other runtimes' reminder hooks
STOP_TIMEOUT = int(STOP_BUDGET + STOP_GRACE) + 3


def _read(path: Path) -> str | None:
    try:
        return read_bytes(path).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None


def install(machine: str | os.PathLike, runtime: str, path: Path, wanted: str,
            is_ours: Callable[[str], bool]) -> config_files.Change:
    """Write `wanted` at `path` unless a file there is not ours; `runtime` keys the record."""
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


def remove(machine: str | os.PathLike, runtime: str, path: Path, is_ours: Callable[[str], bool]) -> config_files.Change:
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


def status(runtime: str, path: Path, wanted: str | None, is_ours: Callable[[str], bool],
           events: Callable[[str], list[str]]) -> dict:
    """What of ours is at `path`; `current` compares it with `wanted` (None: no helper known)."""
    current = _read(path)
    if current is None or not is_ours(current):
        return {"runtime": runtime, "file": str(path), "installed": False, "events": [],
                "current": None if wanted is None else False}
    return {"runtime": runtime, "file": str(path), "installed": True, "events": events(current),
            "current": current == wanted if wanted is not None else None}
