"""Private key blocks: found whatever surrounds their lines, and how far each one reaches.

A key pasted into a note rarely arrives as a clean PEM block: it is quoted in an
e-mail (`> `), commented out (`# `, ` * `, `// `), split into a Python or JS
string literal per line (`"MIIE...\\n"`), JSON-escaped onto one line, or wrapped
at 30 characters. So the BEGIN and END markers are found anywhere, and the text
between them is read line by line with that decoration stripped: a *key line*
holds only base64 runs, a *neutral* line is blank, decoration only, an RFC 1421
header (`Proc-Type: 4,ENCRYPTED`) or a short base64 run (a final `AbC=` line);
anything else is prose.

- BEGIN ... END with enough key material between them: the finding spans both
  markers, so redaction removes every character between them, prose included
  (nothing between a key's markers can be proved harmless).
- BEGIN with key lines but no END (or END with key lines but no BEGIN): found,
  but *not redactable*: where the key stops (or starts) cannot be told, so
  `save --redact` refuses instead of storing the part it could not see.
- A marker mentioned in prose, or a documented block whose body is `...`, has
  no key material and is not a finding.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

# Real key bodies, even the smallest, are well past this (docs/benchmarks.md);
# 64 leaves room for a key cut short while a documented block with a
# 32-character real-looking prefix stays clean.
MIN_MATERIAL = 64
MIN_TOKEN = 8  # base64 runs shorter than this neither count nor end a block (a last `AbC=` line)

_MARKER = r"-----{0}[A-Z0-9 ]{{0,40}}PRIVATE KEY(?: BLOCK)?-----"
_LEAD = " \t>#*;|\"'(+,/!%-"  # quote, comment and string-literal decoration in front of a key line
_TRAIL = " \t\"',;+)|\\"  # closing quotes, commas, concatenation, table cells, continuations after it


class _Patterns:
    """Compiled on the first text that mentions a private key."""

    def __init__(self) -> None:
        self.begin = re.compile(_MARKER.format("BEGIN"))
        self.end = re.compile(_MARKER.format("END"))
        self.line_break = re.compile(r"\r\n|[\r\n]|\\+[nr]")  # real breaks and escaped ones (`\n` in a literal)
        self.header = re.compile(r"[A-Za-z][A-Za-z0-9-]*:\s.*")
        self.token = re.compile(r"[A-Za-z0-9+/]+={0,3}")


_compiled: list[_Patterns] = []


def _rx() -> _Patterns:
    if not _compiled:
        _compiled.append(_Patterns())
    return _compiled[0]


def _line_material(line: str) -> int | None:
    """Base64 characters a key line carries; 0 for a neutral line; None for prose."""
    core = line.strip(_LEAD).rstrip(_TRAIL).lstrip(_LEAD)
    rx = _rx()
    if not core or rx.header.fullmatch(core):
        return 0
    total = 0
    tokens = core.split()
    if tokens[0][:-1].isdigit() and tokens[0][-1] in ":.)|":
        tokens = tokens[1:]  # a line number (`12: MIIE...`, as an editor or a numbered paste shows it)
    for token in tokens:
        if not rx.token.fullmatch(token):
            return None
        if len(token) >= MIN_TOKEN and _looks_random(token):
            total += len(token)
    return total


def _looks_random(token: str) -> bool:
    """Letters with digits or `+/`, as almost every base64 run of 8 or more has; a word has none."""
    bare = token.rstrip("=")
    return not bare.isalpha() and bare.upper() != bare.lower()


def _lines(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """(start, end) of each line of text[start:end], breaking on real and escaped line breaks (lazily)."""
    pos = start
    for m in _rx().line_break.finditer(text, start, end):
        yield pos, m.start()
        pos = m.end()
    yield pos, end


def _material_between(text: str, start: int, end: int) -> int:
    return sum(_line_material(text[a:b]) or 0 for a, b in _lines(text, start, end))


def _run(text: str, lines: Iterable[tuple[int, int]], forward: bool) -> tuple[int, int | None]:
    """Key material in the unbroken run of key and neutral lines `lines` starts with, and the far edge of
    its last key line (None if it has none)."""
    total, reach = 0, None
    for a, b in lines:
        got = _line_material(text[a:b])
        if got is None:
            break
        if got:
            total += got
            reach = b if forward else a
    return total, reach


def find(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, redactable) of every private key block in `text`, in order.

    The markers are taken in order: a BEGIN whose next marker is an END is a block (if key material lies
    between them); a BEGIN followed by another BEGIN or by nothing, and an END preceded by an END or by
    nothing, bound a run of key lines on one side only. Each stretch between two markers is read once.
    """
    if "PRIVATE KEY" not in text:
        return []
    rx = _rx()
    markers = sorted([(m.start(), m.end(), True) for m in rx.begin.finditer(text)]
                     + [(m.start(), m.end(), False) for m in rx.end.finditer(text)])
    found: list[tuple[int, int, bool]] = []
    paired = False  # the previous marker was a BEGIN whose block ends at the current END
    for i, (start, end, is_begin) in enumerate(markers):
        after = markers[i + 1] if i + 1 < len(markers) else None
        before_end = markers[i - 1][1] if i else 0
        if is_begin:
            paired = after is not None and not after[2]
            if paired:
                assert after is not None
                if _material_between(text, end, after[0]) >= MIN_MATERIAL:
                    found.append((start, after[1], True))
                continue
            limit = after[0] if after is not None else len(text)
            material, reach = _run(text, _lines(text, end, limit), True)
            if material >= MIN_MATERIAL and reach is not None:
                found.append((start, reach, False))
        elif paired:
            paired = False
        else:
            material, reach = _run(text, reversed(list(_lines(text, before_end, start))), False)
            if material >= MIN_MATERIAL and reach is not None:
                found.append((reach, end, False))
    return found
