"""A note cut into passages for sentence vectors (hybrid mode).

The encoder reads at most `encoder.MAX_TOKENS` word pieces, so a long note
embedded whole is judged by its opening alone. Here a note becomes runs of
whole body lines, each run as long as fits beside the note's title (a line
longer than that is cut between words). Every passage starts with the title,
so a passage knows what note it belongs to. A short note is one passage whose
text is the title and the whole body, as before passages existed.

Passages are a pure function of the note's text: an index updated note by note
holds the same passages, hence the same vectors, as a rebuilt one.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Callable

# At most this many passages per note are embedded; the rest of a longer note is still
# searched by its words. 128 passages hold about as much prose as the largest note a save accepts.
MAX_PASSAGES = 128
# A passage never leaves less than this many word pieces for the body, however long the title.
MIN_ROOM = 32
# A Markdown heading, or a blank line once the passage is half full, ends a passage holding at least
# this many pieces: a section of a checkpoint is embedded on its own rather than diluted by its
# neighbours, which can hide it from a query about that section alone (an example: docs/benchmarks.md).
MIN_SECTION = 16


class Passage:
    __slots__ = ("first", "last", "text")

    def __init__(self, first: int, last: int, text: str) -> None:
        self.first, self.last, self.text = first, last, text  # body line numbers (0-based, inclusive)

    def __repr__(self) -> str:
        return f"Passage({self.first}, {self.last}, {self.text!r})"


def split(title: str, body: str, count: Callable[[str], int], budget: int) -> list[Passage]:
    """The passages of a note. `count(text)` is the number of word pieces in `text`; `budget` the encoder's
    limit (its own two markers included)."""
    lines = body.split("\n")
    room = max(MIN_ROOM, budget - 2 - count(title))
    sizes = [count(line) for line in lines]
    if sum(sizes) <= room:
        return [Passage(0, len(lines) - 1, f"{title}\n{body}")]
    out: list[Passage] = []
    start, used = 0, 0
    for i, size in enumerate(sizes):
        if size > room:  # a line too long for one passage: close the run, then cut the line between words
            _close(out, title, lines, start, i - 1)
            out.extend(Passage(i, i, f"{title}\n{piece}") for piece in _cut(lines[i], count, room))
            start, used = i + 1, 0
        elif i > start and (used + size > room or (used >= MIN_SECTION and _starts_section(lines, i, used, room))):
            _close(out, title, lines, start, i - 1)
            start, used = i, size
        else:
            used += size
        if len(out) >= MAX_PASSAGES:
            return out[:MAX_PASSAGES]
    _close(out, title, lines, start, len(lines) - 1)
    return out[:MAX_PASSAGES]


def _starts_section(lines: list[str], i: int, used: int, room: int) -> bool:
    line = lines[i].lstrip()
    return line.startswith("#") or (not line and 2 * used >= room)


def _close(out: list[Passage], title: str, lines: list[str], first: int, last: int) -> None:
    """Add the run of lines first..last as a passage, unless it holds no text."""
    run = lines[first : last + 1]
    if any(line.strip() for line in run):
        out.append(Passage(first, last, title + "\n" + "\n".join(run)))


def _cut(line: str, count: Callable[[str], int], room: int) -> list[str]:
    """`line` in pieces of at most `room` word pieces, cut between words (a single longer word stands alone)."""
    out: list[str] = []
    current: list[str] = []
    used = 0
    for word in line.split():
        size = count(word)
        if current and used + size > room:
            out.append(" ".join(current))
            current, used = [], 0
        current.append(word)
        used += size
    if current:
        out.append(" ".join(current))
    return out
