"""Managed entries in Codex's `$CODEX_HOME/config.toml`, keeping everything else of the user's.

Two kinds of entry, both recorded in the machine folder (`codex-config-state.json`)
so that removing takes out exactly what agentmem put there:

- a table agentmem owns whole, e.g. `mcp_servers.agentmem` (the MCP server);
- items agentmem added to a list the user may also fill, e.g.
  `sandbox_workspace_write.writable_roots` (the machine folder, a folder store).

Edits go through tomlkit, so the user's comments, order and layout survive; a
table or key agentmem created is removed again when its last managed entry
goes, one the user had is left in place. A malformed file is reported and never
rewritten. Codex itself may rewrite this file (reports say without comments),
so hooks stay in hooks.json; only what Codex reads nowhere else lives here.

INV outside-untouched: no key, item or comment agentmem did not add is changed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from agentmem.errors import InvalidInput
from agentmem.fsutil import read_bytes, read_state, write_atomic, write_state
from agentmem.userfiles import Change

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from typing import Any

    from tomlkit import TOMLDocument

STATE_FILE = "codex-config-state.json"


def _keys(dotted: str | tuple[str, ...]) -> list[str]:
    """A key path: dotted, or a tuple of keys (for a key that holds dots, e.g. a folder)."""
    keys = list(dotted) if isinstance(dotted, tuple) else dotted.split(".")
    if not all(keys):
        raise ValueError(f"bad key path {dotted!r}")
    return keys


def _name(dotted: str | tuple[str, ...]) -> str:
    """How the state file names a table: its dotted path, or a tuple's keys as JSON."""
    return dotted if isinstance(dotted, str) else json.dumps(list(dotted))


def _shown(dotted: str | tuple[str, ...]) -> str:
    return dotted if isinstance(dotted, str) else ".".join(json.dumps(k) if "." in k else k for k in dotted)


def _load(path: Path) -> tuple[TOMLDocument, str | None]:
    """(tomlkit document, original text or None when the file is absent)."""
    import tomlkit

    try:
        text = read_bytes(path).decode("utf-8")
    except FileNotFoundError:
        return tomlkit.document(), None
    except UnicodeDecodeError:
        raise InvalidInput(f"{path} is not UTF-8 text; nothing was changed") from None
    try:
        return tomlkit.parse(text), text
    except Exception as exc:  # tomlkit raises several parse error types
        raise InvalidInput(f"{path} is not valid TOML ({exc}); fix it first, nothing was changed") from None


def _save(path: Path, doc: TOMLDocument, before: str | None, *, removing: bool = False) -> bool:
    import tomlkit

    text = tomlkit.dumps(doc)
    if removing and before is not None and before.endswith("\n"):
        text = text.rstrip("\n") + "\n" if text.strip() else ""  # tomlkit leaves the blank line it added
    if text == (before or ""):
        return False
    target = Path(os.path.realpath(path))  # a symlinked config.toml (dotfiles) is written in its target
    write_atomic(target, text.encode("utf-8"), mode=_mode(target))
    return True


def _mode(target: Path) -> int:
    try:
        return os.stat(target).st_mode & 0o777
    except FileNotFoundError:
        return 0o600  # Codex's config may hold provider settings: private by default


def _state(machine: str | os.PathLike) -> dict:
    return read_state(os.path.join(machine, STATE_FILE))


def _save_state(machine: str | os.PathLike, state: dict) -> None:
    kept = {k: v for k, v in state.items() if any(v.values())}  # drop files with nothing of ours left
    write_state(os.path.join(machine, STATE_FILE), kept)


def _record(machine: str | os.PathLike[str], path: Path) -> tuple[dict, dict]:
    """(whole state, this file's record {"tables": {...}, "items": {...}, "created": [...]})."""
    state = _state(machine)
    mine = state.setdefault(str(path), {})
    for key, empty in (("tables", {}), ("items", {}), ("created", [])):
        mine.setdefault(key, empty)
    return state, mine


def _walk(doc: Any, keys: list[str], *, create: bool, created: list[str]) -> Any:
    """The table at `keys` (created when asked, noting which ones), or None."""
    import tomlkit

    node = doc
    for i, key in enumerate(keys):
        if key not in node:
            if not create:
                return None
            node[key] = tomlkit.table()
            created.append(".".join(keys[: i + 1]))
        node = node[key]
        if not isinstance(node, dict):
            where = ".".join(keys[: i + 1])
            raise InvalidInput(f"{where} in Codex's config.toml is not a table; nothing was changed")
    return node


def _prune(doc: TOMLDocument, created: list[str], mine: dict) -> None:
    """Remove tables agentmem created that are empty now, innermost first."""
    for dotted in sorted(created, key=lambda d: d.count("."), reverse=True):
        *parent_keys, last = _keys(dotted)
        parent = _walk(doc, parent_keys, create=False, created=[]) if parent_keys else doc
        if parent is not None and last in parent and isinstance(parent[last], dict) and not parent[last]:
            del parent[last]
            mine["created"].remove(dotted)


def set_table(machine: str | os.PathLike, path: Path, dotted: str | tuple[str, ...], values: dict) -> Change:
    """Make the table at `dotted` (agentmem's own, e.g. `mcp_servers.agentmem`) hold exactly `values`."""
    import tomlkit

    doc, before = _load(path)
    state, mine = _record(machine, path)
    *parent_keys, name = _keys(dotted)
    parent = _walk(doc, parent_keys, create=True, created=mine["created"]) if parent_keys else doc
    table = tomlkit.table()
    for key, value in values.items():
        table[key] = value
    if name in parent and parent[name] == table:
        changed = False
    else:
        parent[name] = table
        changed = _save(path, doc, before)
    mine["tables"][_name(dotted)] = True
    _save_state(machine, state)
    return Change(path, changed, f"{'set' if changed else 'kept'} [{_shown(dotted)}]")


def remove_table(machine: str | os.PathLike, path: Path, dotted: str | tuple[str, ...],
                 if_equal: dict | None = None) -> Change:
    """Take out the table at `dotted` if agentmem set it; everything else stays. With `if_equal`, only
    while it still holds those values (one the user has edited since is theirs: only forgotten)."""
    state, mine = _record(machine, path)
    if not mine["tables"].pop(_name(dotted), None):
        _save_state(machine, state)
        return Change(path, False, f"[{_shown(dotted)}] is not agentmem's; left alone")
    if not path.exists():
        _save_state(machine, state)
        return Change(path, False, "file is gone")
    doc, before = _load(path)
    *parent_keys, name = _keys(dotted)
    parent = _walk(doc, parent_keys, create=False, created=[]) if parent_keys else doc
    if if_equal is not None and parent is not None and name in parent \
            and json.loads(json.dumps(parent[name].unwrap())) != if_equal:
        _save_state(machine, state)
        return Change(path, False, f"[{_shown(dotted)}] was edited since agentmem set it; left as it is")
    if parent is not None and name in parent:
        del parent[name]
    _prune(doc, mine["created"], mine)
    changed = _save(path, doc, before, removing=True)
    _save_state(machine, state)
    shown = _shown(dotted)
    return Change(path, changed, f"removed [{shown}]" if changed else f"[{shown}] was already gone")


def add_list_items(machine: str | os.PathLike, path: Path, dotted_key: str, items: list[str]) -> Change:
    """Add `items` to the list at `dotted_key` (creating it), beside the user's own items."""
    import tomlkit

    doc, before = _load(path)
    state, mine = _record(machine, path)
    *table_keys, key = _keys(dotted_key)
    table = _walk(doc, table_keys, create=True, created=mine["created"]) if table_keys else doc
    if key not in table:
        table[key] = tomlkit.array()
        mine["created"].append(dotted_key)
    current = table[key]
    if not isinstance(current, list):
        raise InvalidInput(f"{dotted_key} in {path} is not a list; nothing was changed")
    ours = mine["items"].setdefault(dotted_key, [])
    added = [item for item in items if item not in current]
    for item in added:
        current.append(item)
    ours.extend(item for item in added if item not in ours)
    changed = _save(path, doc, before)
    _save_state(machine, state)
    return Change(path, changed, f"added {len(added)} to {dotted_key}" if added else f"{dotted_key} already had them")


def remove_list_items(machine: str | os.PathLike, path: Path, dotted_key: str) -> Change:
    """Take out of the list at `dotted_key` the items agentmem added; the user's stay."""
    state, mine = _record(machine, path)
    ours = mine["items"].pop(dotted_key, [])
    if not ours or not path.exists():
        _save_state(machine, state)
        return Change(path, False, f"no agentmem entries in {dotted_key}")
    doc, before = _load(path)
    *table_keys, key = _keys(dotted_key)
    table = _walk(doc, table_keys, create=False, created=[]) if table_keys else doc
    if table is not None and isinstance(table.get(key), list):
        current = table[key]
        for item in ours:
            while item in current:
                current.remove(item)
        if not current and dotted_key in mine["created"]:
            del table[key]
            mine["created"].remove(dotted_key)
    _prune(doc, mine["created"], mine)
    changed = _save(path, doc, before, removing=True)
    _save_state(machine, state)
    return Change(path, changed, f"removed agentmem's entries from {dotted_key}" if changed else "nothing to remove")


def is_managed_table(machine: str | os.PathLike, path: Path, dotted: str | tuple[str, ...]) -> bool:
    """Did agentmem set the table at `dotted` in this file (and not remove it since)?"""
    return bool((_state(machine).get(str(path)) or {}).get("tables", {}).get(_name(dotted)))


def managed_tables(machine: str | os.PathLike, path: Path) -> list[str | tuple[str, ...]]:
    """Every table agentmem set in this file, as set (a dotted path, or a tuple of keys)."""
    names = (_state(machine).get(str(path)) or {}).get("tables", {})
    return [tuple(json.loads(n)) if n.startswith("[") else n for n, on in names.items() if on]


def read_table(path: Path, dotted: str | tuple[str, ...]) -> dict | None:
    """The table at `dotted` as plain data, or None (for status reports and tests)."""
    doc, _ = _load(path)
    table = _walk(doc, _keys(dotted), create=False, created=[])
    return None if table is None else json.loads(json.dumps(table.unwrap()))


def recorded_items(machine: str | os.PathLike, path: Path, dotted_key: str) -> list[str]:
    """The items agentmem added to the list at `dotted_key` (as recorded), e.g. to see if they changed."""
    return list((_state(machine).get(str(path)) or {}).get("items", {}).get(dotted_key) or [])
