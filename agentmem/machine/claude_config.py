"""Managed entries in Claude Code's user config `~/.claude.json`, changing no other byte of it.

Claude Code keeps its user-scope MCP servers there, as `mcpServers.<name>` (what
`claude mcp add --scope user` writes, checked with Claude Code 2.1.332 on
2026-12-01), beside everything else it records about the user: a large file it
rewrites itself. Re-serialising it could change bytes agentmem never meant to
touch (number forms, escapes, spacing), so edits are splices of the text: the
member agentmem sets is inserted, replaced or cut out, indented like its
neighbours, and every other character stays where it was.

Which entries and containers agentmem created is recorded in the machine folder
(`claude-config-state.json`), so removing takes out exactly what it added: a
container (`mcpServers`) or the file itself goes only if agentmem created it and
nothing else is left in it; an empty container the user had keeps its spacing.
A malformed, non-UTF-8 or read-only file is reported and left alone; a symlinked
file is written in its target.

INV outside-untouched: no byte agentmem did not add changes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from agentmem.errors import InvalidInput
from agentmem.fsutil import read_bytes, read_state, write_atomic, write_state
from agentmem.userfiles import Change

STATE_FILE = "claude-config-state.json"


# --- reading: spans of an object's members in the text -------------------------------------------

def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def _end_of_value(text: str, i: int) -> int:
    """Index just past the JSON value starting at `i` (the text is known to be valid JSON)."""
    if text[i] == '"':
        i += 1
        while text[i] != '"':
            i += 2 if text[i] == "\\" else 1
        return i + 1
    if text[i] in "{[":
        depth = 0
        while True:
            ch = text[i]
            if ch == '"':
                i = _end_of_value(text, i)
                continue
            if ch in "{[":
                depth += 1
            elif ch in "}]":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
    while i < len(text) and text[i] not in ",}] \t\r\n":
        i += 1
    return i


class _Object:
    """An object's `{` and `}` positions and its members as (key, key start, value start, value end)."""

    def __init__(self, text: str, open_at: int):
        self.open = open_at
        self.members: list[tuple[str, int, int, int]] = []
        i = _skip_ws(text, open_at + 1)
        while text[i] != "}":
            key_end = _end_of_value(text, i)
            key = json.loads(text[i:key_end])
            value_at = _skip_ws(text, _skip_ws(text, key_end) + 1)  # past the colon
            value_end = _end_of_value(text, value_at)
            self.members.append((key, i, value_at, value_end))
            i = _skip_ws(text, value_end)
            if text[i] == ",":
                i = _skip_ws(text, i + 1)
        self.close = i

    def find(self, key: str) -> tuple[str, int, int, int] | None:
        return next((m for m in self.members if m[0] == key), None)


def _line_indent(text: str, at: int) -> str:
    start = text.rfind("\n", 0, at) + 1
    end = start
    while end < len(text) and text[end] in " \t":
        end += 1
    return text[start:end]


def _render(value: object, indent: str, step: str | None) -> str:
    """`value` as JSON, its inner lines indented from `indent` by `step` (None: on one line)."""
    if step is None:
        return json.dumps(value, ensure_ascii=False)
    lines = json.dumps(value, indent=len(step) if step.strip(" ") == "" else step, ensure_ascii=False).split("\n")
    return "\n".join([lines[0], *(indent + line for line in lines[1:])])


def _style(text: str, obj: _Object) -> tuple[str, str | None]:
    """(indent of the object's members, one indentation step; None for a file on one line)."""
    if "\n" not in text.strip():
        return "", None
    own = _line_indent(text, obj.open)
    if obj.members:
        member = _line_indent(text, obj.members[0][1])
        if len(member) > len(own) and member.startswith(own):
            return member, member[len(own):]
    step = "\t" if "\n\t" in text else "  "
    return own + step, step


# --- editing the text ----------------------------------------------------------------------------

def _insert(text: str, obj: _Object, key: str, value: object) -> str:
    indent, step = _style(text, obj)
    member = json.dumps(key, ensure_ascii=False) + ": " + _render(value, indent, step)
    if obj.members:
        # the same separator as between the existing members (or before the first one)
        first, last_end = obj.members[0], obj.members[-1][3]
        gap_from = text.index(",", first[3]) + 1 if len(obj.members) > 1 else obj.open + 1
        gap = text[gap_from:obj.members[1][1] if len(obj.members) > 1 else first[1]]
        return text[:last_end] + "," + (gap or " ") + member + text[last_end:]
    if step is None:
        return text[:obj.open + 1] + member + text[obj.close:]
    own = _line_indent(text, obj.open)
    return text[:obj.open + 1] + "\n" + indent + member + "\n" + own + text[obj.close:]


def _cut(text: str, obj: _Object, key: str, empty_inner: str | None) -> str:
    """The text without member `key`; an object left empty gets `empty_inner` (or nothing) inside."""
    index = next(i for i, m in enumerate(obj.members) if m[0] == key)
    _, key_at, _, value_end = obj.members[index]
    if len(obj.members) == 1:
        return text[:obj.open + 1] + (empty_inner or "") + text[obj.close:]
    if index > 0:
        return text[:obj.members[index - 1][3]] + text[value_end:]
    return text[:key_at] + text[obj.members[1][1]:]


def _replace(text: str, obj: _Object, key: str, value: object) -> str:
    _, _, value_at, value_end = obj.find(key)  # type: ignore[misc]
    indent, step = _style(text, obj)
    return text[:value_at] + _render(value, indent, step) + text[value_end:]


# --- the file and the record of what is ours -------------------------------------------------------

def _load(path: Path) -> tuple[str | None, object]:
    """(text, parsed data), or (None, None) when the file does not exist."""
    try:
        raw = read_bytes(path)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}; nothing was changed") from None
    try:
        text = raw.decode("utf-8")
        data = json.loads(text)
    except (UnicodeDecodeError, ValueError) as exc:
        raise InvalidInput(f"{path} is not valid JSON ({exc}); fix it first, nothing was changed") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{path} does not hold a JSON object; nothing was changed")
    return text, data


def _check_writable(path: Path) -> None:
    """A file made read-only (no write permission for anyone, or none for us) is the user's decision."""
    target = os.path.realpath(path)
    if os.stat(target).st_mode & 0o222 == 0 or not os.access(target, os.W_OK):
        raise InvalidInput(f"{path} is read-only; nothing was changed")


def _save(path: Path, text: str, existed: bool) -> None:
    target = Path(os.path.realpath(path))  # a symlinked file (dotfiles) is written in its target
    mode = os.stat(target).st_mode & 0o777 if existed else 0o600  # it holds the user's account data
    write_atomic(target, text.encode("utf-8"), mode=mode)


def _state(machine: str | os.PathLike) -> dict:
    return read_state(os.path.join(machine, STATE_FILE))


def _save_state(machine: str | os.PathLike, state: dict) -> None:
    write_state(os.path.join(machine, STATE_FILE), {k: v for k, v in state.items() if v.get("members")})


def is_managed(machine: str | os.PathLike[str], path: Path, container: str, name: str) -> bool:
    """Did agentmem set `container.name` in this file (and not remove it since)?"""
    return bool(_state(machine).get(str(path), {}).get("members", {}).get(f"{container}.{name}"))


def read_member(path: Path, container: str, name: str) -> object:
    """The value at `container.name`, or None (for status reports and tests)."""
    _, data = _load(path)
    inner = (data or {}).get(container)  # type: ignore[attr-defined]
    return inner.get(name) if isinstance(inner, dict) else None


def set_member(machine: str | os.PathLike[str], path: Path, container: str, name: str, value: dict) -> Change:
    """Make `container.name` (a member agentmem owns, e.g. mcpServers.agentmem) hold exactly `value`."""
    text, data = _load(path)
    existed = text is not None
    state = _state(machine)
    mine = state.setdefault(str(path), {})
    mine.setdefault("members", {})
    created = mine.setdefault("created", {})
    label = f"{container}.{name}"
    if text is None:
        text, data = "{\n}\n", {}
        mine["created_file"] = True
    assert isinstance(data, dict)
    top = _Object(text, _skip_ws(text, 0))
    held = data.get(container)
    if held is not None and not isinstance(held, dict):
        raise InvalidInput(f"{container} in {path} is not an object; nothing was changed")
    if held is None:
        new = _insert(text, top, container, {name: value})
        created[container] = True
    else:
        inner = _Object(text, top.find(container)[2])  # type: ignore[index]
        if name not in held:
            if not inner.members:  # the user's empty container: its spacing comes back on removal
                created[container + ".inner"] = text[inner.open + 1:inner.close]
            new = _insert(text, inner, name, value)
        elif held[name] == value:
            new = text
        else:
            new = _replace(text, inner, name, value)
    changed = not existed or new != text
    if changed and existed:
        _check_writable(path)
    mine["members"][label] = True
    _save_state(machine, state)  # first: if the write fails, a later remove still knows what is ours
    if changed:
        _save(path, new, existed=existed)
    return Change(path, changed, f"{'set' if changed else 'kept'} {label}")


def remove_member(machine: str | os.PathLike[str], path: Path, container: str, name: str) -> Change:
    """Take out `container.name` if agentmem set it, and what it created around it; nothing else."""
    state = _state(machine)
    mine = state.get(str(path)) or {}
    label = f"{container}.{name}"
    if not mine.get("members", {}).get(label):
        return Change(path, False, f"{label} is not agentmem's; left alone")
    text, data = _load(path)
    created = mine.get("created", {})
    held = (data or {}).get(container)  # type: ignore[attr-defined]
    if text is None or not isinstance(held, dict) or name not in held:
        del mine["members"][label]
        _save_state(machine, state)
        return Change(path, False, f"{label} was already gone")
    _check_writable(path)
    top = _Object(text, _skip_ws(text, 0))
    inner = _Object(text, top.find(container)[2])  # type: ignore[index]
    if len(inner.members) == 1 and created.get(container):
        new = _cut(text, top, container, None)
    else:
        new = _cut(text, inner, name, created.get(container + ".inner"))
    del mine["members"][label]
    created.pop(container, None)
    created.pop(container + ".inner", None)
    if mine.get("created_file") and json.loads(new) == {} and not mine["members"]:
        os.unlink(os.path.realpath(path))
        detail = f"removed {label} and the file agentmem had created"
    else:
        _save(path, new, existed=True)
        detail = f"removed {label}"
    _save_state(machine, state)
    return Change(path, True, detail)
