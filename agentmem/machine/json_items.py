"""Items agentmem adds to a list in a user's JSON settings file, removed again exactly.

Used for Claude Code's `permissions.allow` (the helper's command, so memory works
in Claude Code's default permission mode) and OpenCode's `instructions` (keeping a
user's `~/.claude/CLAUDE.md` visible to OpenCode once its own AGENTS.md exists).

What agentmem added, and which containers (the file, objects, the list) it
created, is recorded in the machine folder (`json-items-state.json`), so that
removing takes out only those items and containers; the user's own items, keys
and their order stay. Reading and the style-keeping rewrite are the hook files'
(hooks/config_files.py), so a file in any layout, comments included, comes back
byte-equal after add + remove. A file that is not valid JSON is reported and
left untouched.

INV outside-untouched: no key or item agentmem did not add is changed.
"""

from __future__ import annotations

import os
from pathlib import Path

from agentmem.errors import InvalidInput
from agentmem.fsutil import read_state, write_state

STATE_FILE = "json-items-state.json"


def _state(machine: str | os.PathLike) -> dict:
    return read_state(os.path.join(machine, STATE_FILE))


def _save_state(machine: str | os.PathLike, state: dict) -> None:
    write_state(os.path.join(machine, STATE_FILE), {f: keys for f, keys in state.items() if keys})


def recorded(machine: str | os.PathLike, path: Path, dotted: str) -> list[str]:
    """The items agentmem added to the list at `dotted` in `path`."""
    return list(((_state(machine).get(str(path)) or {}).get(dotted) or {}).get("items") or [])


def _read(path: Path) -> tuple[dict | None, str | None]:
    from agentmem.hooks.config_files import read_json

    return read_json(path)


def _write(path: Path, data: dict, text: str | None) -> None:
    from agentmem.hooks import config_files

    path.parent.mkdir(parents=True, exist_ok=True)
    config_files._write(path, data, text)


def add_items(machine: str | os.PathLike, path: Path, dotted: str, items: list[str]) -> bool:
    """Make the list at `dotted` (e.g. `permissions.allow`) hold `items`, beside the user's. True if changed."""
    data, text = _read(path)
    doc = {} if data is None else data
    keys = dotted.split(".")
    state = _state(machine)
    mine = state.setdefault(str(path), {}).setdefault(dotted, {"items": [], "created": []})
    if data is None:
        mine["created"] = sorted(set(mine["created"]) | {""})  # "": the file itself
    table: dict = doc
    for i, key in enumerate(keys):
        last = i == len(keys) - 1
        if key not in table:
            table[key] = [] if last else {}
            mine["created"] = sorted(set(mine["created"]) | {".".join(keys[: i + 1])})
        if not isinstance(table[key], list if last else dict):
            raise InvalidInput(f"{'.'.join(keys[: i + 1])} in {path} is not a {'list' if last else 'JSON object'}; "
                               "nothing was changed")
        if not last:
            table = table[key]
    node: list = table[keys[-1]]
    added = [item for item in items if item not in node]
    node.extend(added)
    mine["items"] = list(dict.fromkeys([*mine["items"], *added]))
    _save_state(machine, state)  # first: a failed write can still be undone
    if added:
        _write(path, doc, text)
    return bool(added)


def remove_items(machine: str | os.PathLike, path: Path, dotted: str) -> bool:
    """Take out of the list at `dotted` what agentmem added, and the containers it created. True if changed."""
    state = _state(machine)
    mine = (state.get(str(path)) or {}).pop(dotted, None)
    _save_state(machine, state)
    if not mine:
        return False
    data, text = _read(path)
    if data is None:
        return False
    keys = dotted.split(".")
    chain = [data]
    for key in keys:
        node = chain[-1].get(key) if isinstance(chain[-1], dict) else None
        if node is None:
            return False
        chain.append(node)
    target = chain[-1]
    if not isinstance(target, list):
        return False
    before = len(target)
    target[:] = [item for item in target if item not in mine["items"]]
    changed = len(target) != before
    created = set(mine.get("created") or [])
    for depth in range(len(keys), 0, -1):  # innermost first: drop what agentmem created and is empty now
        parent, key = chain[depth - 1], keys[depth - 1]
        if ".".join(keys[:depth]) in created and not parent[key]:
            del parent[key]
            changed = True
    if not data and "" in created:
        path.unlink()
        return True
    if changed:
        _write(path, data, text)
    return changed
