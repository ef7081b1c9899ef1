"""Read a user's JSON file and write it back changing nothing we did not touch.

The standard library gets these wrong for a file we must rewrite: a key given
twice keeps only its last value, a number is turned into a float (`1e400` comes
back as `Infinity`, which is not JSON, and `1.50` as `1.5`), a lone `\\ud800`
escape cannot be encoded as UTF-8, and re-serialising loses the file's own
spacing, escapes (`\\/`), line endings (CRLF) and comments. Here a duplicated key
is refused, every number keeps its exact text, and writing back is an edit of
the text: every value we did not change is copied as the file had it (with the
separators, comments and line endings around it), and only what we add is
rendered, in the file's own layout (indentation or one line, its separators and
line ending). So adding our entries and taking them out again leaves the file
byte-equal, whatever its layout.

Comments (`// ...` and `/* ... */`, what Gemini CLI and OpenCode accept in their
settings: JSONC) are read as white space and kept in place.
"""

from __future__ import annotations

import json
import re

from agentmem.errors import InvalidInput

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from typing import Any, NoReturn


class Number:
    """A JSON number exactly as written in the file (never converted, never rounded)."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Number) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return self.text


class DuplicateKey(ValueError):
    def __init__(self, key: str):
        super().__init__(f"the key {key!r} twice in one object")
        self.key = key


# --- reading: values with their places in the text -----------------------------------------------

_TRIVIA = re.compile(r"(?:\s+|//[^\n]*|/\*.*?\*/)*", re.S)
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\.)*"', re.S)
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|NaN|-?Infinity")
_LITERALS = {"true": True, "false": False, "null": None}


class _Node:
    """A value and where it stands in the text (`start`, `end`); an object's or array's `children` as
    (where the member's key starts, the key; both None in an array, the value's node)."""

    __slots__ = ("value", "start", "end", "children")

    def __init__(self, value: Any, start: int, end: int, children: list[_Child] | None = None) -> None:
        self.value, self.start, self.end, self.children = value, start, end, children

    def starts(self) -> list[int]:
        """Where each child begins (its key, in an object)."""
        return [at if at is not None else node.start for at, _, node in self.children or ()]


_Child = tuple[int | None, str | None, _Node]


class _Parser:
    def __init__(self, text: str):
        self.text = text

    def fail(self, what: str, at: int) -> NoReturn:
        line = self.text.count("\n", 0, at) + 1
        column = at - (self.text.rfind("\n", 0, at) + 1) + 1
        raise ValueError(f"{what}: line {line} column {column} (char {at})")

    def skip(self, i: int) -> int:
        return _TRIVIA.match(self.text, i).end()  # type: ignore[union-attr]

    def value(self, i: int) -> _Node:
        text = self.text
        ch = text[i:i + 1]
        if ch == "{":
            return self.container(i, "}")
        if ch == "[":
            return self.container(i, "]")
        if ch == '"':
            m = _STRING.match(text, i)
            if m is None:
                self.fail("Unterminated string", i)
            return _Node(json.loads(m.group()), i, m.end())
        m = _NUMBER.match(text, i)
        if m is not None:
            return _Node(Number(m.group()), i, m.end())
        for word, value in _LITERALS.items():
            if text.startswith(word, i):
                return _Node(value, i, i + len(word))
        self.fail("Expecting value", i)
        raise AssertionError("unreachable")

    def container(self, i: int, closing: str) -> _Node:
        is_object = closing == "}"
        data: dict | list = {} if is_object else []
        children: list[_Child] = []
        j = self.skip(i + 1)
        if self.text[j:j + 1] != closing:
            while True:
                key_at, name = None, None
                if is_object:
                    if self.text[j:j + 1] != '"':
                        self.fail("Expecting property name enclosed in double quotes", j)
                    key_at, key = j, self.value(j)
                    name = key.value
                    j = self.skip(key.end)
                    if self.text[j:j + 1] != ":":
                        self.fail("Expecting ':' delimiter", j)
                    j = self.skip(j + 1)
                node = self.value(j)
                if isinstance(data, dict):
                    if name in data:
                        raise DuplicateKey(name)  # type: ignore[arg-type]
                    data[name] = node.value
                else:
                    data.append(node.value)
                children.append((key_at, name, node))
                j = self.skip(node.end)
                if self.text[j:j + 1] != ",":
                    break
                j = self.skip(j + 1)
            if self.text[j:j + 1] != closing:
                self.fail(f"Expecting ',' delimiter or '{closing}'", j)
        return _Node(data, i, j + 1, children)

    def document(self) -> _Node | None:
        start = self.skip(0)
        if start == len(self.text):
            return None
        root = self.value(start)
        if self.skip(root.end) != len(self.text):
            self.fail("Extra data", self.skip(root.end))
        return root


def loads(text: str) -> Any:
    """Parse `text` (comments allowed) keeping numbers as `Number`; raises ValueError (DuplicateKey for a
    repeated key). Empty text (or only comments) is an empty object."""
    root = _Parser(text).document()
    return {} if root is None else root.value


def read_object(raw: bytes, where: str) -> tuple[dict, str]:
    """(data, text) of a file that must hold a JSON object; InvalidInput naming `where` otherwise."""
    try:
        text = raw.decode("utf-8")
        data = loads(text)
    except DuplicateKey as exc:
        raise InvalidInput(f"{where} has {exc}; rewriting it would lose one of them, so nothing was changed",
                           hint="remove one of the two, then run this again") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise InvalidInput(f"{where} is not valid JSON ({exc}); fix it first, nothing was changed") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{where} does not hold a JSON object; fix it first, nothing was changed")
    return data, text


# --- the file's layout ---------------------------------------------------------------------------

class _Style:
    """How the file writes what we add: `unit` (indentation step, None on one line), `nl`, the spacing
    after a comma and a colon, and whether non-ASCII characters are escaped."""

    def __init__(self, text: str | None):
        self.unit, _, self.ascii = style(text)
        self.nl = "\r\n" if text and "\r\n" in text else "\n"
        self.comma, self.colon = ", ", ": "
        blanked = _strings_blanked(text or "")
        colon = re.search(r'"[ \t]*:([ \t]*)', blanked)
        if colon is not None:
            self.colon = ":" + (colon.group(1) and " ")
        commas = [m.group(1) for m in re.finditer(r"[\]}\"\w],([ \t]*)(?=[^\s])", blanked)]
        if commas or colon is not None:  # a comma on one line, else as the colon is spaced
            self.comma = "," + ((commas[0] if commas else colon.group(1)) and " ")  # type: ignore[union-attr]

    def flat(self) -> _Style:
        """This style on one line (inside a container the file wrote on one line)."""
        out = _Style.__new__(_Style)
        out.unit, out.nl, out.comma, out.colon, out.ascii = None, self.nl, self.comma, self.colon, self.ascii
        return out


def _strings_blanked(text: str) -> str:
    """`text` with every string's content blanked (quotes kept), so separators can be searched in it."""
    return _STRING.sub(lambda m: '"' + " " * (len(m.group()) - 2) + '"', text)


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


def _render(value: object, base: str, st: _Style) -> str:
    """A value we add, in the file's layout, its inner lines indented from `base`."""
    if isinstance(value, Number):
        return value.text
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return json.dumps(value, allow_nan=False)
    if isinstance(value, str):
        return _string(value, st.ascii)
    inner = base + (st.unit or "")
    if isinstance(value, dict):
        items = [_string(str(k), st.ascii) + st.colon + _render(v, inner, st) for k, v in value.items()]
        return _join(items, "{", "}", base, st)
    if isinstance(value, list | tuple):
        return _join([_render(v, inner, st) for v in value], "[", "]", base, st)
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def _join(items: list[str], opening: str, closing: str, base: str, st: _Style) -> str:
    if not items:
        return opening + closing
    if st.unit is None:
        return opening + st.comma.join(items) + closing
    inner = st.nl + base + st.unit
    return opening + inner + ("," + inner).join(items) + st.nl + base + closing


# --- writing: an edit of the text ----------------------------------------------------------------

def _same(a: Any, b: Any) -> bool:
    """Equal as JSON values of the same types (True is not 1), keys in the same order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _line_indent(text: str, at: int) -> str:
    start = text.rfind("\n", 0, at) + 1
    end = start
    while end < len(text) and text[end] in " \t":
        end += 1
    return text[start:end]


class _Writer:
    def __init__(self, text: str):
        self.text, self.st = text, _Style(text)

    def emit(self, node: _Node, new: object, base: str) -> str:
        """`new` in the place of `node`: the node's own text where nothing changed, else edited."""
        if _same(node.value, new):
            return self.text[node.start:node.end]
        if isinstance(new, dict) and isinstance(node.value, dict):
            return self._object(node, new, base)
        if isinstance(new, list) and isinstance(node.value, list):
            return self._array(node, new, base)
        return _render(new, base, self._inside(node))

    def _inside(self, node: _Node) -> _Style:
        """The style for what goes inside `node`: one line if the file wrote it, with children, on one line."""
        if node.children and "\n" not in self.text[node.start:node.end]:
            return self.st.flat()
        return self.st

    def _member_indent(self, node: _Node, base: str) -> str:
        """The indentation of the node's children: as its first child has it, when on a line of its own."""
        if node.children:
            first = node.starts()[0]
            if "\n" in self.text[node.start:first]:
                return _line_indent(self.text, first)
        return base + (self.st.unit or "")

    def _object(self, node: _Node, new: dict, base: str) -> str:
        assert node.children is not None
        text, inner, st = self.text, self._member_indent(node, base), self._inside(node)
        at = {key: (i, key_at, child) for i, (key_at, key, child) in enumerate(node.children)}
        items: list[tuple[int | None, str]] = []
        for key, value in new.items():
            if key in at:
                i, key_at, child = at[key]
                items.append((i, text[key_at:child.start] + self.emit(child, value, inner)))
            else:
                items.append((None, _string(str(key), st.ascii) + st.colon + _render(value, inner, st)))
        return self._assemble(node, items, inner, st)

    def _array(self, node: _Node, new: list, base: str) -> str:
        """Old items matched to new ones in order: equal ones kept, skipped ones dropped, a changed
        container edited in place; what is left is new."""
        assert node.children is not None
        inner, st = self._member_indent(node, base), self._inside(node)
        old = [child for _, _, child in node.children]
        items: list[tuple[int | None, str]] = []
        j = 0
        for value in new:
            k = next((k for k in range(j, len(old)) if _same(old[k].value, value)), None)
            if k is None and j < len(old) and type(old[j].value) is type(value) and isinstance(value, dict | list):
                k = j  # the same item, changed inside
            if k is None:
                items.append((None, _render(value, inner, st)))
                continue
            items.append((k, self.emit(old[k], value, inner)))
            j = k + 1
        return self._assemble(node, items, inner, st)

    def _assemble(self, node: _Node, items: list[tuple[int | None, str]], inner: str, st: _Style) -> str:
        assert node.children is not None
        text, children, starts = self.text, node.children, node.starts()
        opening, closing = text[node.start], text[node.end - 1]
        if not children:
            lead = tail = ""
            if st.unit is not None and items:
                lead, tail = st.nl + inner, st.nl + _line_indent(text, node.start)
            if text[node.start + 1:node.end - 1].strip():  # a comment inside an empty container stays
                lead = text[node.start + 1:node.end - 1] + lead
        else:
            lead, tail = text[node.start + 1:starts[0]], text[children[-1][2].end:node.end - 1]
        if not items:  # emptied: only a comment that was inside stays
            return opening + (lead + tail if (lead + tail).strip() else "") + closing
        out = [opening, lead]
        for n, (i, item) in enumerate(items):
            if n:
                prev = items[n - 1][0]
                if prev is not None and i is not None and i == prev + 1:
                    out.append(text[children[prev][2].end:starts[i]])
                else:
                    out.append(self._separator(node, starts, inner, st))
            out.append(item)
        out += [tail, closing]
        return "".join(out)

    def _separator(self, node: _Node, starts: list[int], inner: str, st: _Style) -> str:
        if st.unit is None:
            return st.comma
        if len(starts) > 1:
            between = self.text[node.children[0][2].end:starts[1]]  # type: ignore[index]
            if "\n" not in between:
                return st.comma
        return "," + st.nl + inner


def dumps_like(data: dict, text: str | None) -> bytes:
    """`data` as JSON in the layout of `text` (the file's previous content, None for a new file): the
    text edited where `data` differs from what it holds, every other byte kept."""
    st = _Style(text)
    root = _Parser(text).document() if text is not None else None
    if root is None:
        rendered = _render(data, "", st) + ("\n" if text is None or text.endswith("\n") else "")
        return ((text or "") + rendered if text and text.strip() else rendered).encode("utf-8")
    assert text is not None
    edited = _Writer(text).emit(root, data, _line_indent(text, root.start))
    return (text[:root.start] + edited + text[root.end:]).encode("utf-8")
