"""Read a user's JSON file and write it back changing nothing we did not touch.

The standard library gets three things wrong for a file we must rewrite: a key
given twice keeps only its last value, a number is turned into a float (so
`1e400` comes back as `Infinity`, which is not JSON, and `1.50` as `1.5`), and
a lone `\\ud800` escape cannot be encoded as UTF-8. Here a duplicated key is
refused, every number keeps its exact text, and a lone surrogate is written as
the escape it was read from. The layout (indentation, final newline, ASCII
escapes) follows the file's own, so a file in json.dumps' layout comes back
byte-equal.
"""

from __future__ import annotations

import json
import re

from agentmem.errors import InvalidInput


class Number:
    """A JSON number exactly as written in the file (never converted, never rounded)."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __eq__(self, other) -> bool:
        return isinstance(other, Number) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return self.text


class DuplicateKey(ValueError):
    def __init__(self, key: str):
        super().__init__(f"the key {key!r} twice in one object")
        self.key = key


def _object(pairs: list[tuple[str, object]]) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKey(key)
        out[key] = value
    return out


def loads(text: str):
    """Parse `text` keeping numbers as `Number`; raises ValueError (DuplicateKey for a repeated key)."""
    return json.loads(text, object_pairs_hook=_object, parse_float=Number, parse_int=Number,
                      parse_constant=Number)


def read_object(raw: bytes, where: str) -> tuple[dict, str]:
    """(data, text) of a file that must hold a JSON object; InvalidInput naming `where` otherwise."""
    try:
        text = raw.decode("utf-8")
        data = loads(text) if text.strip() else {}
    except DuplicateKey as exc:
        raise InvalidInput(f"{where} has {exc}; rewriting it would lose one of them, so nothing was changed",
                           hint="remove one of the two, then run this again") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise InvalidInput(f"{where} is not valid JSON ({exc}); fix it first, nothing was changed") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{where} does not hold a JSON object; fix it first, nothing was changed")
    return data, text


def style(text: str | None) -> tuple[str | None, bool, bool]:
    """(indent unit or None for one line, trailing newline, ASCII escapes) of an existing JSON text;
    two spaces and a newline for a new file."""
    if text is None:
        return "  ", True, False
    match = re.search(r"\n([ \t]+)\S", text)
    if match is None:
        indent = None if "\n" not in text.strip() else "  "
    else:
        ws = match.group(1)
        indent = ws if "\t" in ws else " " * len(ws)
    return indent, text.endswith("\n"), text.isascii() and "\\u" in text


_SURROGATE = re.compile("[\ud800-\udfff]")


def _string(value: str, ascii_only: bool) -> str:
    out = json.dumps(value, ensure_ascii=ascii_only)
    if not ascii_only:  # a surrogate left unpaired by the file's own escapes: write the escape again
        out = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", out)
    return out


def _encode(value, indent: str | None, level: int, ascii_only: bool) -> str:
    if isinstance(value, Number):
        return value.text
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return json.dumps(value, allow_nan=False)
    if isinstance(value, str):
        return _string(value, ascii_only)
    if isinstance(value, dict):
        items = [f"{_string(str(k), ascii_only)}: {_encode(v, indent, level + 1, ascii_only)}"
                 for k, v in value.items()]
        return _join(items, "{", "}", indent, level)
    if isinstance(value, list | tuple):
        return _join([_encode(v, indent, level + 1, ascii_only) for v in value], "[", "]", indent, level)
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def _join(items: list[str], opening: str, closing: str, indent: str | None, level: int) -> str:
    if not items:
        return opening + closing
    if indent is None:
        return opening + ", ".join(items) + closing
    inner, outer = "\n" + indent * (level + 1), "\n" + indent * level
    return opening + inner + ("," + inner).join(items) + outer + closing


def dumps_like(data: dict, text: str | None) -> bytes:
    """`data` as JSON in the layout of `text` (the file's previous content, None for a new file)."""
    indent, newline, ascii_only = style(text)
    return (_encode(data, indent, 0, ascii_only) + ("\n" if newline else "")).encode("utf-8")
