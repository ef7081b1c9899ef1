"""The managed block in a runtime's user-level instruction file (AGENTS.md, CLAUDE.md).

INV outside-untouched: every byte outside our markers is kept exactly; a file with
malformed markers is refused and left untouched.
INV idempotent-apply: applying the same block twice changes nothing the second time.
"""

from __future__ import annotations

import os
from pathlib import Path

from agentmem.errors import InvalidInput
from agentmem.fsutil import write_atomic

BEGIN = "<!-- agent-memory:begin -->"
END = "<!-- agent-memory:end -->"


def _marker_lines(text: str, marker: str) -> list[tuple[int, int]]:
    """(start, end-after-newline) offsets of every line that holds exactly `marker`."""
    spans, pos = [], 0
    for line in text.splitlines(keepends=True):
        if line.strip() == marker:
            spans.append((pos, pos + len(line)))
        pos += len(line)
    return spans


def find_block(text: str, *, where: str = "the file") -> tuple[int, int] | None:
    """Offsets (start of begin line, end of end line) of our block, None if absent.

    Raises InvalidInput when the markers are unbalanced, duplicated or out of order.
    """
    begins, ends = _marker_lines(text, BEGIN), _marker_lines(text, END)
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
    mode = 0o644
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        pass
    write_atomic(path, text.encode("utf-8"), mode=mode)


def with_block(text: str, body: str, *, where: str = "the file") -> str:
    """`text` with our block set to `body`: replaced in place, or appended after the user's text."""
    block = render_block(body)
    span = find_block(text, where=where)
    if span is not None:
        start, end = span
        return text[:start] + block + text[end:]
    if not text:
        return block
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

    A symlinked instruction file is followed, so the user's link stays a link.
    """
    target = Path(os.path.realpath(path))
    current = _read(target)
    updated = with_block(current or "", body, where=str(path))
    if current is not None and updated == current:
        return False
    _write(target, updated)
    return True


def remove_block(path: Path) -> bool:
    """Take our block out of the file at `path`. True if it changed; a missing file is left missing."""
    target = Path(os.path.realpath(path))
    current = _read(target)
    if current is None:
        return False
    updated = without_block(current, where=str(path))
    if updated == current:
        return False
    _write(target, updated)
    return True


def read_block(path: Path) -> str | None:
    """The body of our block in the file at `path`, or None if there is none."""
    current = _read(Path(os.path.realpath(path)))
    if current is None:
        return None
    span = find_block(current, where=str(path))
    if span is None:
        return None
    inner = current[span[0] : span[1]].split("\n", 1)[1]
    return inner.rsplit(END, 1)[0].rstrip("\n")
