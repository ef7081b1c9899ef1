"""Members agentmem adds to the top-level object of a user's JSON file, removed again exactly.

Used for Gemini CLI's `~/.gemini/trustedFolders.json` (`{"<folder>": "TRUST_FOLDER"}`, what its
own trust prompt writes), beside the folders the user trusted or distrusted there.

A member the file already has and agentmem did not add is the user's: it is never changed
or removed, whatever its value, and is reported back so the caller can say so. What
agentmem added (key and value) and whether it created the file are recorded in the
machine folder (`json-members-state.json`); removing takes out only members that still
hold the value agentmem wrote (one the user has changed since is theirs now), and the
file if agentmem created it and nothing else is left. Reading and the text-keeping
rewrite are the hook files' (hooks/config_files.py, hooks/jsonedit.py): the file's
layout and comments stay. A file that is not valid JSON is reported and left alone.

INV outside-untouched: no member agentmem did not add is changed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from agentmem.fsutil import read_state, write_state

STATE_FILE = "json-members-state.json"


def _state(machine: str | os.PathLike) -> dict:
    return read_state(os.path.join(machine, STATE_FILE))


def _save_state(machine: str | os.PathLike, state: dict) -> None:
    write_state(os.path.join(machine, STATE_FILE), {f: r for f, r in state.items() if r.get("members")})


def recorded(machine: str | os.PathLike, path: Path) -> dict[str, object]:
    """The members agentmem added to `path`, with the values it wrote."""
    members = (_state(machine).get(str(path)) or {}).get("members")
    return dict(members) if isinstance(members, dict) else {}


def set_members(machine: str | os.PathLike, path: Path, members: Mapping[str, object]) -> tuple[bool, list[str]]:
    """Make agentmem's members of `path` exactly `members` (ones it added before and no longer wants
    go), never touching a member of the user's. Returns (changed, the keys left to the user's entry)."""
    from agentmem.hooks import config_files

    data, text = config_files.read_json(path)
    doc: dict = {} if data is None else dict(data)
    state = _state(machine)
    record: dict = state.get(str(path)) if isinstance(state.get(str(path)), dict) else {}  # type: ignore[assignment]
    ours = dict(record.get("members") or {})
    theirs = [key for key in members if key in doc and key not in ours]
    for key, value in ours.items():  # no longer wanted: out, unless the user changed it since
        if key not in members and doc.get(key) == value:
            del doc[key]
    ours = {k: v for k, v in ours.items() if k in members and k in doc}  # the user may have removed one
    for key, value in members.items():
        if key not in theirs:
            doc[key] = value
            ours[key] = value
    created = data is None or bool(record.get("created_file"))
    state[str(path)] = {"members": ours, "created_file": created}
    _save_state(machine, state)  # first: a failed write can still be undone
    if data is not None and list(doc.items()) == list(data.items()):
        return False, theirs
    if not doc and created:
        return _unlink(path), theirs
    path.parent.mkdir(parents=True, exist_ok=True)
    config_files._write(path, doc, text)
    return True, theirs


def remove_members(machine: str | os.PathLike, path: Path) -> bool:
    """Take out what agentmem added to `path` (and the file, if agentmem created it and it is empty now)."""
    state = _state(machine)
    record = state.pop(str(path), None)
    _save_state(machine, state)
    if not isinstance(record, dict) or not record.get("members"):
        return False
    from agentmem.hooks import config_files

    data, text = config_files.read_json(path)
    if data is None:
        return False
    doc = {k: v for k, v in data.items() if not (k in record["members"] and v == record["members"][k])}
    if len(doc) == len(data):
        return False
    if not doc and record.get("created_file"):
        return _unlink(path)
    config_files._write(path, doc, text)
    return True


def _unlink(path: Path) -> bool:
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True
