"""The managed block in a runtime's user-level instruction file (AGENTS.md, CLAUDE.md).

A marker counts only as a line of its own at the top level of the Markdown: indented
by at most three spaces and outside every fenced (``` or ~~~) or indented code block,
so an example of our markers in the user's own code is the user's text. A file that
ends inside an unclosed fence is refused: a block appended there would be code.

INV outside-untouched: every byte outside our markers is kept exactly; a file with
malformed markers is refused and left untouched.
INV idempotent-apply: applying the same block twice changes nothing the second time.
INV user-files: links are written through, dangling ones refused, read-only files
left alone (`userfiles.py`).
"""

from __future__ import annotations

import re
from pathlib import Path

from agentmem import userfiles
from agentmem.errors import InvalidInput

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

BEGIN = "<!-- agent-memory:begin -->"
END = "<!-- agent-memory:end -->"


# CommonMark: a fence is 3+ backticks or tildes indented by at most 3 spaces; it is closed
# by a line of the same character, at least as long, with nothing after it.
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def _top_level_lines(text: str) -> Iterator[tuple[int | None, Any]]:
    """(start offset, line) of every line outside the user's fenced code blocks; then, as a last
    item, (None, number of the line that opened a fence still open at the end, or 0)."""
    pos, fence, fence_line = 0, "", 0
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        bare = line.rstrip("\r\n")
        start, pos = pos, pos + len(line)
        match = _FENCE.match(bare)
        if fence:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence) \
                    and not match.group(2).strip():
                fence = ""
        elif match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
            fence, fence_line = match.group(1), number
        else:
            yield start, line
    yield None, fence_line if fence else 0


def _scan(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The (start, end) offsets of our begin and end marker lines. A marker indented by a tab or
    four spaces is inside an indented code block (or a paragraph), so it is the user's text."""
    begins: list[tuple[int, int]] = []
    ends: list[tuple[int, int]] = []
    for start, line in _top_level_lines(text):
        if start is None:
            continue
        marker, lead = line.strip(), line[: len(line) - len(line.lstrip(" \t"))]
        if marker in (BEGIN, END) and len(lead) <= 3 and "\t" not in lead:
            (begins if marker == BEGIN else ends).append((start, start + len(line)))
    return begins, ends


def _unclosed_fence(text: str) -> int:
    """The line number of a code fence still open at the end of `text`, or 0."""
    last = 0
    for start, value in _top_level_lines(text):
        if start is None:
            last = value
    return last


def find_block(text: str, *, where: str = "the file") -> tuple[int, int] | None:
    """Offsets (start of begin line, end of end line) of our block, None if absent.

    Raises InvalidInput when the markers are unbalanced, duplicated or out of order.
    """
    begins, ends = _scan(text)
    if not begins and not ends:
        return None
    if len(begins) == 1 and len(ends) == 1 and begins[0][0] < ends[0][0]:
        return begins[0][0], ends[0][1]
    raise InvalidInput(
        f"{where} has {len(begins)} '{BEGIN}' and {len(ends)} '{END}' lines, in an order agentmem "
        "cannot manage; nothing was changed",
        hint="keep exactly one begin line followed by one end line, or delete both, then rerun setup",
    )


def render_block(body: str) -> str:
    return f"{BEGIN}\n{body.strip(chr(10))}\n{END}\n"


def _read(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput(f"{path} is not UTF-8 text; nothing was changed") from None


def _write(path: Path, text: str) -> None:
    userfiles.write_file(path, text.encode("utf-8"))


def with_block(text: str, body: str, *, where: str = "the file") -> str:
    """`text` with our block set to `body`: replaced in place, or appended after the user's text."""
    block = render_block(body)
    span = find_block(text, where=where)
    if span is not None:
        start, end = span
        return text[:start] + block + text[end:]
    if not text:
        return block
    opened = _unclosed_fence(text)
    if opened:
        raise InvalidInput(
            f"{where} ends inside an unclosed code fence (opened on line {opened}); agentmem's block "
            "appended there would be part of that code, so nothing was changed",
            hint="close the fence, then run this again",
        )
    separator = "\n" if text.endswith("\n") else "\n\n"
    return text + separator + block


def without_block(text: str, *, where: str = "the file") -> str:
    """`text` with our block (and the blank line we put before it) taken out."""
    span = find_block(text, where=where)
    if span is None:
        return text
    start, end = span
    before, after = text[:start], text[end:]
    if not after and before.endswith("\n\n"):
        before = before[:-1]
    return before + after


def apply_block(path: Path, body: str) -> bool:
    """Put our block holding `body` into the file at `path` (created if missing). True if it changed.

    A symlinked instruction file is followed, so the user's link stays a link; a dangling link
    is refused (InvalidInput) and a read-only file left alone (NoAccess) - INV user-files.
    """
    target = Path(userfiles.resolve(path))
    current = _read(target)
    updated = with_block(current or "", body, where=str(path))
    if current is not None and updated == current:
        return False
    userfiles.check_writable(target, shown=path)
    _write(target, updated)
    return True


def remove_block(path: Path) -> bool:
    """Take our block out of the file at `path`. True if it changed; a missing file is left missing."""
    if userfiles.dangling(path):
        return False  # nothing there to take our block out of
    target = Path(userfiles.resolve(path))
    current = _read(target)
    if current is None:
        return False
    updated = without_block(current, where=str(path))
    if updated == current:
        return False
    userfiles.check_writable(target, shown=path)
    _write(target, updated)
    return True
