"""A search result: what `search` shows of one note, and its JSON.

Its own module, below both search/find.py (which makes results) and search/corrections.py (which marks
them), so neither imports the other even for the type.
"""

from __future__ import annotations


class Result:
    def __init__(self, id: str, title: str, created: str, kind: str, pending: bool,
                 matches: list[dict] | None = None, corrects: str | None = None, score: float | None = None):
        self.id, self.title, self.created, self.kind, self.pending = id, title, created, kind, pending
        self.matches = matches or []
        self.corrects = corrects
        self.score = score
        self.corrected_by: list[str] = []  # IDs of the notes correcting this one, newest first
        self.meta: dict = {}  # the note's frontmatter (not in the JSON)
        self.retracted: dict | None = None  # the retraction record's summary, when shown (include_retracted)
        self.review_due = False
        self.pinned = False

    def to_json(self) -> dict:
        out = {
            "id": self.id,
            "title": self.title,
            "created": self.created,
            "kind": self.kind,
            "pending": self.pending,
            "matches": self.matches,
        }
        if self.corrects:
            out["corrects"] = self.corrects
        if self.corrected_by:
            out["corrected_by"] = self.corrected_by
        if self.score is not None:
            out["score"] = round(self.score, 4)
        if self.retracted is not None:
            out["retracted"] = self.retracted
        if self.review_due:
            out["review_due"] = True
        if self.pinned:
            out["pinned"] = True
        return out
