"""The notes of the memory view, taken one at a time into what the page and its note files need.

A 100k-note view must not hold every note in memory (W item 5), so the notes pass twice:

1. `Collector.add`, as `data.gather` reads each note: its fields through the redaction (INV
   no-credentials), its states, and a light `Row` for the page's list (ID, short title, project,
   kind, agent, tags, states); everything else (whole title, body, sources, session, the states'
   details) goes to a spool file.
2. `Collector.finish` orders the rows as the page lists them (newest first) and links corrections
   both ways; `Collector.details` then reads the spool in that order, yielding each note's details
   as the page shows them, and meanwhile builds the search postings (`Postings`): the same terms,
   title weight and lengths `agentmem search` scores (search/words.py, search/index.py's `Doc`),
   taken from the redacted text the page shows.

What the page shows of note text goes through `framing.clean`, the CLI's own escape: characters that
hide, reorder or erase text (bidi controls, zero-width and other format characters) show as `<U+XXXX>`.
"""

from __future__ import annotations

import marshal
import os
import tempfile

from agentmem.safety.framing import clean
from agentmem.search import corrections, words
from agentmem.search.index import TITLE_WEIGHT

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Iterator

    from agentmem.note.document import Parsed
    from agentmem.search.stored import StoredTerms
    from agentmem.view.redactor import Redactor

# Characters of a title in the page's list (one line with an ellipsis); the whole title is in the note's file.
SHORT_TITLE = 72
# The one letter per state a row carries in the page (the page's table names and labels them).
STATE_CODES = {"pending": "u", "retracted": "r", "review-due": "d", "pinned": "p"}


class Row:
    """What the page's list knows of one note; its details wait in the spool (`at`, `size`)."""

    __slots__ = ("id", "project", "kind", "created", "agent", "tags", "states", "corrects", "title", "dl", "at",
                 "size", "corrected_by", "corrects_row", "indexed")

    def __init__(self, note_id: str, project: str, kind: str, created: str, agent: str, tags: list[str],
                 states: str, corrects: str | None, title: str, at: int, size: int):
        self.id, self.project, self.kind, self.created, self.agent = note_id, project, kind, created, agent
        self.tags, self.states, self.corrects, self.title = tags, states, corrects, title
        self.at, self.size = at, size
        self.indexed = False  # its search terms are the index's (a cached note the redaction left as it was)
        self.dl = 0  # the note's length in search terms (title terms count TITLE_WEIGHT times): set by `details`
        self.corrected_by: list[int] = []  # rows of the notes correcting this one, newest first
        self.corrects_row: int | None = None  # the row of the note this one corrects, when the page holds it


def one_line(text: str) -> str:
    """One-line note text as the page shows it: `<U+XXXX>` for what would hide or reorder text."""
    return text if text.isascii() and text.isprintable() else clean(text)


def shown_body(text: str) -> str:
    """A note body as the page shows it: line by line through `clean` (a line break stays a line break)."""
    return "\n".join(one_line(line) for line in text.split("\n"))


def short(title: str) -> str:
    return title if len(title) <= SHORT_TITLE else title[:SHORT_TITLE - 1].rstrip() + "…"


class Postings:
    """Each search term's notes, in page order, as the text the page's search reads (`view/search.js`).

    One note's entry: its row as the distance from the term's previous note (base 36), `/tf` when
    the term count is not the number of positions (a title term counts TITLE_WEIGHT times), then
    `.position` for each place the term stands in the note's terms (title and tags first, as the
    index keeps them), which the pair bonus and nothing else reads. Entries are joined by commas.
    """

    def __init__(self) -> None:
        if not _DIGITS:
            _DIGITS.extend(b36(n).encode() for n in range(_SMALL))
        self.text: dict[str, bytearray] = {}
        self.last: dict[str, int] = {}
        self.size = 0

    def add(self, row: int, title_terms: list[str], body_terms: list[str]) -> None:
        places: dict[str, list[int]] = {}
        for place, term in enumerate(title_terms + body_terms):
            seen = places.get(term)
            if seen is None:
                places[term] = [place]
            else:
                seen.append(place)
        titled, text, last, digits, size = len(title_terms), self.text, self.last, _DIGITS, 0
        for term, where in places.items():
            step = row - last.get(term, -1)
            last[term] = row
            entry = [digits[step] if step < _SMALL else b36(step).encode()]
            if where[0] < titled:  # a title term counts TITLE_WEIGHT times
                tf = len(where) + (TITLE_WEIGHT - 1) * sum(1 for p in where if p < titled)
                entry += (b"/", digits[tf] if tf < _SMALL else b36(tf).encode())
            entry.append(b".")
            entry.append(b".".join([digits[p] for p in where] if where[-1] < _SMALL else
                                   [b36(p).encode() for p in where]))
            done = b"".join(entry)
            size += len(done) + 1
            held = text.get(term)
            if held is None:
                text[term] = bytearray(done)
            else:
                held += b","
                held += done
        self.size += size


_SMALL = 36 ** 3
_DIGITS: list[bytes] = []  # b36(n) for n < _SMALL, as ASCII bytes, made on first use


def b36(n: int) -> str:
    """`n` (0 or more) in base 36, lower case: how the page's columns and postings write numbers."""
    if n < 36:
        return "0123456789abcdefghijklmnopqrstuvwxyz"[n]
    digits = []
    while n:
        n, d = divmod(n, 36)
        digits.append("0123456789abcdefghijklmnopqrstuvwxyz"[d])
    return "".join(reversed(digits))


class Collector:
    """Every note of the view: light rows in memory, details in a spool file. Close it when done."""

    def __init__(self, shown: Redactor) -> None:
        self.shown = shown
        self.rows: list[Row] = []
        self.spool = tempfile.TemporaryFile(prefix="agentmem-view-")
        self.postings = Postings()
        self.indexes: dict[str, StoredTerms | None] = {}

    def use_index(self, project: str, pdir: str) -> None:
        """Take the search terms of the project's cached notes from its search index, where there is one
        (`search/stored.py`): the same terms, without making them again."""
        from agentmem.search import stored

        self.indexes[project] = stored.stored_terms(pdir)

    def __len__(self) -> int:
        return len(self.rows)

    def close(self) -> None:
        self._close_indexes()
        self.spool.close()

    def _close_indexes(self) -> None:
        """End the look-ups in the projects' search indexes: their read transactions with them."""
        for look in self.indexes.values():
            if look is not None:
                look.close()
        self.indexes.clear()

    def add(self, note_id: str, project: str, parsed: Parsed, states: list[dict], review_by: str | None,
            cached: bool = False) -> None:
        """One note; `states`: what this machine knows of it (`data.note_states`), already redacted; `cached`:
        in the project's cache (so in its index, if it has one), not only pending here."""
        from agentmem.note import ids

        meta = parsed.meta
        given = {
            "title": parsed.title, "created": parsed.created, "agent": _str(meta.get("agent")),
            "session": _str(meta.get("session")), "tags": _strs(meta.get("tags")),
            "sources": _strs(meta.get("sources")), "body": parsed.body,
        }
        text = self.shown.fields(given)
        corrects = meta.get("corrects")
        detail = {"title": text["title"], "tags": text["tags"], "sources": text["sources"], "body": text["body"],
                  "session": text["session"], "states": states, "review_by": review_by}
        detail = {k: v for k, v in detail.items() if v}  # what a note lacks is left out: 100k notes lack much
        line = marshal.dumps(detail)  # this process's own temp file: the quickest way there and back
        at = self.spool.tell()
        self.spool.write(line)
        self.rows.append(Row(
            note_id, project, parsed.kind, text["created"], one_line(text["agent"]),
            [one_line(t) for t in text["tags"]], "".join(STATE_CODES[s["name"]] for s in states),
            corrects if isinstance(corrects, str) and ids.ID.match(corrects) else None,
            short(one_line(text["title"] or note_id)), at, len(line)))
        self.rows[-1].indexed = cached and text is given  # `fields` returns what it was given when nothing is withheld

    def finish(self) -> None:
        """Order the rows as the page lists them (newest first) and link corrections both ways, within
        each project (the same ID in two projects is two notes)."""
        self.rows.sort(key=lambda r: (r.created, r.id), reverse=True)
        where: dict[tuple[str, str], int] = {(r.project, r.id): i for i, r in enumerate(self.rows)}
        by_project: dict[str, dict[str, str]] = {}
        for r in self.rows:
            if r.corrects:
                by_project.setdefault(r.project, {})[r.id] = r.corrects
        for project, pairs in by_project.items():
            for target, fixers in corrections.corrected_by(pairs).items():
                at = where.get((project, target))
                if at is not None:
                    self.rows[at].corrected_by = [where[(project, f)] for f in fixers]
        for r in self.rows:
            if r.corrects:
                r.corrects_row = where.get((r.project, r.corrects))

    def details(self) -> Iterator[dict]:
        """Each note's details in page order, as the page shows them; builds `postings` meanwhile."""
        self.spool.flush()
        fd = self.spool.fileno()
        for i, row in enumerate(self.rows):
            detail = marshal.loads(os.pread(fd, row.size, row.at))
            title, body = detail.get("title", ""), detail.get("body", "")
            tags, sources = detail.get("tags", []), detail.get("sources", [])
            look = self.indexes.get(row.project) if row.indexed else None
            known = look(row.id) if look is not None else None
            if known is not None:
                title_terms, body_terms = known
            else:  # made as the index makes them, from the redacted text the page shows
                title_text, body_text = words.field_texts(title, tags, body, sources)
                title_terms, body_terms = words.terms(title_text), words.terms(body_text)
            row.dl = TITLE_WEIGHT * len(title_terms) + len(body_terms)
            self.postings.add(i, title_terms, body_terms)
            # as the page shows it; what the note lacks, or the row already says (a whole short title), is left out
            shown: dict = {"body": shown_body(body)}
            whole = one_line(title or row.id)
            if whole != row.title:
                shown["title"] = whole
            if sources:
                shown["sources"] = [one_line(s) for s in sources]
            if detail.get("session"):
                shown["session"] = one_line(detail["session"])
            if detail.get("states"):
                shown["states"] = [dict(s, detail=shown_body(s["detail"])) for s in detail["states"]]
            if detail.get("review_by"):
                shown["review_by"] = detail["review_by"]
            yield shown
        self._close_indexes()  # every look-up done: no index's writer waits on the page being written


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _strs(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
