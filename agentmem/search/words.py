"""Words for ranked search: tokens, stopwords, stems, and the indexable text of a note."""

from __future__ import annotations

from agentmem import patterns
from agentmem.note.document import Parsed
from agentmem.search.stemmer import MEMO, stem

# Bump when tokenising or stemming changes: an index built by another version is rebuilt.
VERSION = "1"

_WORD = patterns.compile(r"[^\W_]+")
_PHRASE = patterns.compile(r'"([^"]*)"')

# Function words and question words: they carry no topic. Our own list (2026-11-30).
STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing done down during each either
    else ever few for from further had has have having he her here hers herself him
    himself his how i if in into is it its itself just let lets me more most much my myself no
    nor not now of off on once only or other our ours ourselves out over own same shall she
    should so some such than that the their theirs them themselves then there these they this
    those through to too under until up upon us very was we were what whatever when where which
    while who whom whose why will with would you your yours yourself yourselves
    s t d ll m re ve don doesn didn isn wasn aren weren won wouldn couldn shouldn
    """.split()
)


def words(text: str) -> list[str]:
    """Lower-case word tokens, stopwords kept (used for phrases and excerpts)."""
    return _WORD.findall(text.casefold())


def terms(text: str) -> list[str]:
    """Stemmed index terms in order, stopwords removed."""
    memo = MEMO.get  # a stem is never empty, so `or` falls through to stem() only on a miss
    return [(memo(w) or stem(w)) if w.isascii() else w for w in words(text) if w not in STOPWORDS]


def has_any_term(text: str, wanted: set[str]) -> bool:
    """Does `text` hold one of the `wanted` terms? The same answer as `set(terms(text)) & wanted`.

    A stem keeps its word's first letter (the stemmer only rewrites endings), so
    only words starting like a wanted term are stemmed: stemming every word of ten
    results' excerpts cost a search measurable time (docs/benchmarks.md).
    """
    firsts = {t[0] for t in wanted}
    memo = MEMO.get
    for w in words(text):
        if w[0] in firsts and w not in STOPWORDS and ((memo(w) or stem(w)) if w.isascii() else w) in wanted:
            return True
    return False


def split_query(query: str) -> tuple[list[str], list[str]]:
    """(quoted phrases, lower-cased; the query's terms, phrase words included)."""
    phrases = [p.strip().casefold() for p in _PHRASE.findall(query) if p.strip()]
    return phrases, terms(query.replace('"', " "))


def _strings(parsed: Parsed, key: str) -> list[str]:
    values = parsed.meta.get(key)
    return [v for v in values if isinstance(v, str)] if isinstance(values, list) else []


def field_texts(title: str, tags: list[str], body: str, sources: list[str]) -> tuple[str, str]:
    """(title text: title and tags; body text: body and sources): what a note's title terms and body terms
    are made of, for the index and for the memory view's postings (view/collect.py) alike."""
    listed = " ".join(sources)
    return f"{title} {' '.join(tags)}".strip(), f"{body}\n{listed}" if listed else body


def note_fields(parsed: Parsed) -> tuple[str, str]:
    """`field_texts` of a parsed note."""
    return field_texts(parsed.title, _strings(parsed, "tags"), parsed.body, _strings(parsed, "sources"))


def searchable_text(parsed: Parsed) -> str:
    """What a quoted phrase is matched against: title, tags and body, case-folded."""
    title, body = note_fields(parsed)
    return f"{title}\n{body}".casefold()
