"""Notes and checkpoints: the Markdown + frontmatter format, and validation (IDs: `ids.py`).

A note is UTF-8 Markdown with a small frontmatter block. We write one key per
line as `key: <JSON value>`: valid YAML for any other reader, and parsed here
without a YAML library. INV one-key-per-line: what a reader could take for a line
break (U+0085, U+2028, U+2029, C1 controls) is written as a JSON `\\uXXXX` escape,
and parsing splits at `\\n` only, so no field can cut off the note's metadata.
Frontmatter written by anything else falls back to PyYAML's safe loader, bounded
in size and checked for shape.
"""

from __future__ import annotations

import json

from agentmem import patterns
from agentmem.errors import InvalidInput
from agentmem.note.ids import ALLOCATED, check_id, new_id, note_file  # noqa: F401 - part of the note API
from agentmem.store import layout

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from datetime import datetime

KINDS = ("note", "checkpoint")
# `propose: "team"` in a personal note's frontmatter: its member marked it for the team (`save --propose`),
# so `review` lists it for a writer to `promote` (issue X, item 4).
PROPOSE_TEAM = "team"
# An author: the member's name (config.AGENT_NAME's rule, repeated here to keep config off this import).
_AUTHOR = patterns.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$")

# Limits: a checkpoint is meant to be concise; 64 KiB is about
# 16k tokens, far above any useful note, and keeps one read cheap for an agent.
MAX_NOTE_BYTES = 64 * 1024
MAX_TITLE = 200
MAX_LIST_ITEMS = 32
MAX_ITEM = 500
MAX_FRONTMATTER_BYTES = 8 * 1024

_FENCE = "---"

# Characters json.dumps leaves raw but a reader may take as a line break (U+0085, U+2028, U+2029: YAML
# and str.splitlines do) or YAML refuses unescaped (C1 controls, U+FFFE/U+FFFF). In a frontmatter line
# they can only sit inside a JSON string, where `\uXXXX` means the same character: one key, one line.
_JSON_ESCAPES = {c: f"\\u{c:04x}" for c in (*range(0x7F, 0xA0), 0x2028, 0x2029, 0xFFFE, 0xFFFF)}
# What a one-line field (tag, source, session) may not hold: any line break str.splitlines (and so a
# reader) honours. Other controls are kept as given: JSON escapes them and output shows them as <U+XXXX>.
_NOT_ONE_LINE = patterns.compile(r"[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")


def utc_timestamp(now: datetime | None = None) -> str:
    from datetime import UTC, datetime

    now = (now or datetime.now(UTC)).astimezone(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def note_path(project: str, note_id: str) -> str:
    """The object path of a note in a store."""
    return layout.note_path(project, check_id(note_id))


class Note:
    """A note about to be saved. (Plain classes here: the per-turn paths avoid importing dataclasses.)"""

    def __init__(self, *, id: str, title: str, kind: str, project: str, created: str, agent: str, body: str,
                 sources: list[str] | None = None, tags: list[str] | None = None,
                 session: str | None = None, corrects: str | None = None, review_by: str | None = None,
                 author: str | None = None, promoted_from: str | None = None, propose: str | None = None):
        self.id, self.title, self.kind, self.project = id, title, kind, project
        self.created, self.agent, self.body = created, agent, body
        self.sources = sources or []
        self.tags = tags or []
        self.session, self.corrects = session, corrects
        self.review_by = review_by
        self.author, self.promoted_from, self.propose = author, promoted_from, propose

    def frontmatter(self) -> dict:
        meta: dict[str, str | list[str]] = {
            "id": self.id,
            "title": self.title,
            "kind": self.kind,
            "project": self.project,
            "created": self.created,
            "agent": self.agent,
        }
        if self.author:  # absent from notes saved before authors were stamped (issue X, item 5)
            meta["author"] = self.author
        meta["sources"] = self.sources
        for key in _OPTIONAL_AFTER_SOURCES:  # in this order, each only when set
            value = getattr(self, key)
            if value:
                meta[key] = value
        return meta

    def render(self) -> bytes:
        return render_parts(self.frontmatter(), self.body.strip("\n") + "\n")


_OPTIONAL_AFTER_SOURCES = ("tags", "session", "corrects", "review_by", "promoted_from", "propose")


def render_parts(meta: dict, body: str) -> bytes:
    """A note's bytes from its metadata (one `key: <JSON>` line each) and body, as agentmem writes notes;
    without metadata, the body alone."""
    if not meta:
        return body.encode("utf-8")
    lines = [_FENCE]
    for key, value in meta.items():
        lines.append(f"{key}: {json.dumps(value, ensure_ascii=False).translate(_JSON_ESCAPES)}")
    lines.append(_FENCE)
    return ("\n".join(lines) + "\n\n" + body).encode("utf-8")


def _clean_list(name: str, values: Iterable[object] | None, *, item_limit: int = MAX_ITEM) -> list[str]:
    values = list(values or [])
    if len(values) > MAX_LIST_ITEMS:
        raise InvalidInput(f"too many {name}: at most {MAX_LIST_ITEMS}")
    out = []
    for v in values:
        v = str(v).strip()
        if not v or len(v) > item_limit or _NOT_ONE_LINE.search(v):
            raise InvalidInput(f"invalid {name[:-1]} {v[:40]!r}: one line (no line break or separator), "
                               f"1-{item_limit} characters")
        _check_unicode(name[:-1], v)
        out.append(v)
    return out


def _check_unicode(name: str, value: str) -> None:
    """Refuse lone surrogates (what the OS hands Python for argument bytes that are not UTF-8)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"the {name} is not valid UTF-8 text (undecodable bytes)") from None


def decode_body(raw: bytes) -> str:
    """Decode a note body given by the agent, rejecting what cannot be a note."""
    if len(raw) > MAX_NOTE_BYTES:
        raise InvalidInput(f"note is {len(raw)} bytes; the limit is {MAX_NOTE_BYTES} bytes (64 KiB)")
    if b"\x00" in raw:
        raise InvalidInput("note body contains NUL bytes; notes are UTF-8 text")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"note body is not UTF-8 text (byte {exc.start})") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise InvalidInput("note body is empty")
    return text


def build(
    *,
    body: str,
    title: str | None,
    kind: str,
    project: str,
    agent: str,
    sources: Iterable[str] = (),
    tags: Iterable[str] = (),
    session: str | None = None,
    corrects: str | None = None,
    review_by: str | None = None,
    note_id: str | None = None,
    now: datetime | None = None,
    author: str | None = None,
    promoted_from: str | None = None,
    propose: str | None = None,
) -> Note:
    """Validate the agent's input and assemble a new note with a fresh ID. `author`: the member who wrote
    it; `promoted_from`: the personal note a team note was promoted from; `propose`: "team" when the
    member marks it for the team (a writer may then promote it)."""
    if kind not in KINDS:
        raise InvalidInput(f"invalid kind {kind!r}: use 'note' or 'checkpoint'")
    if not body.strip():
        raise InvalidInput("note body is empty")
    if title is None or not title.strip():
        first = next((ln.strip() for ln in body.splitlines() if ln.strip()), "")
        title = first.lstrip("#").strip()[:MAX_TITLE] or "Untitled"
    title = " ".join(title.split())
    _check_unicode("title", title)
    _check_unicode("note body", body)
    if len(title) > MAX_TITLE:
        raise InvalidInput(f"title is too long: at most {MAX_TITLE} characters")
    if corrects is not None:
        check_id(corrects)
    if promoted_from is not None:
        check_id(promoted_from)
    if propose not in (None, PROPOSE_TEAM):
        raise InvalidInput(f"invalid proposal {propose!r}: only {PROPOSE_TEAM!r}")
    if author is not None:
        check_author(author)
    if review_by is not None:
        review_by = check_review_date(review_by)
    if session is not None:
        session = _clean_list("sessions", [session])[0]
    from datetime import UTC, datetime  # lazy: search and read never need it

    now = now or datetime.now(UTC)
    note = Note(
        id=note_id or new_id(now),
        title=title,
        kind=kind,
        project=project,
        created=utc_timestamp(now),
        agent=agent,
        body=body,
        sources=_clean_list("sources", sources),
        tags=_clean_list("tags", tags, item_limit=64),
        session=session,
        corrects=corrects,
        review_by=review_by,
        author=author,
        promoted_from=promoted_from,
        propose=propose,
    )
    data = note.render()
    if len(data) > MAX_NOTE_BYTES:
        raise InvalidInput(f"note is {len(data)} bytes; the limit is {MAX_NOTE_BYTES} bytes (64 KiB)")
    return note


def check_author(name: str) -> str:
    if not isinstance(name, str) or not _AUTHOR.match(name):
        raise InvalidInput(f"invalid author name {str(name)[:40]!r}: 1-64 letters, digits, '.', '_', '@', '+' "
                           "or '-', starting with a letter or digit")
    return name


def author_of(meta: dict) -> str | None:
    """The author a note's metadata names, or None: notes saved before authors were stamped have none, and
    a name that breaks the rule (another writer's) is not shown as one."""
    value = meta.get("author")
    return value if isinstance(value, str) and _AUTHOR.match(value) else None


_DATE = patterns.compile(r"^\d{4}-\d{2}-\d{2}$")


def check_review_date(value: str) -> str:
    """A review date as `YYYY-MM-DD` (a real calendar date; one already past is accepted: due at once)."""
    from datetime import date

    text = value.strip() if isinstance(value, str) else ""
    try:
        if not _DATE.match(text):
            raise ValueError(text)
        date.fromisoformat(text)
    except ValueError:
        raise InvalidInput(f"invalid review date {str(value)[:40]!r}: use an ISO date, YYYY-MM-DD") from None
    return text


def review_date(meta: dict, review_after: float | None = None) -> str | None:
    """When the note is due for review (`YYYY-MM-DD`): its `review_by`, else `created` + `review_after`
    days ([memory] review_after), else None (never due). Lenient: odd metadata means no date."""
    given = meta.get("review_by")
    if isinstance(given, str) and _DATE.match(given):
        return given
    created = meta.get("created")
    if review_after is None or not isinstance(created, str) or not _DATE.match(created[:10]):
        return None
    from datetime import date, timedelta

    try:
        return (date.fromisoformat(created[:10]) + timedelta(days=int(review_after))).isoformat()
    except (ValueError, OverflowError):
        return None


def is_due(meta: dict, today: str, review_after: float | None = None) -> bool:
    """Whether the note's review date (see `review_date`) is `today` (`YYYY-MM-DD`, UTC) or earlier."""
    when = review_date(meta, review_after)
    return when is not None and when <= today


def today() -> str:
    """Today's date in UTC, `YYYY-MM-DD` (`AGENTMEM_TODAY` sets it, for tests and benchmarks)."""
    import os
    import time

    return os.environ.get("AGENTMEM_TODAY") or time.strftime("%Y-%m-%d", time.gmtime())


class Parsed:
    """A note read back from bytes: its metadata (possibly empty) and its body."""

    __slots__ = ("meta", "body")

    def __init__(self, meta: dict, body: str):
        self.meta, self.body = meta, body

    def get(self, key: str, default: object = None) -> object:
        value = self.meta.get(key, default)
        return value

    @property
    def title(self) -> str:
        value = self.meta.get("title")
        return value if isinstance(value, str) else ""

    @property
    def created(self) -> str:
        value = self.meta.get("created")
        return value if isinstance(value, str) else ""

    @property
    def kind(self) -> str:
        value = self.meta.get("kind")
        return value if value in KINDS else "note"


def _scalar_or_list(value: object) -> str | bool | None | list[str]:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value if not isinstance(value, (int, float)) or isinstance(value, bool) else str(value)
    if isinstance(value, list) and len(value) <= MAX_LIST_ITEMS:
        if all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value):
            return [str(v)[:MAX_ITEM] for v in value]
    raise ValueError("frontmatter values must be scalars or short lists of scalars")


def _parse_meta(block: str) -> dict:
    meta = {}
    try:
        # Lines end at "\n" only: splitlines() would also break at U+0085, U+2028 or U+2029 inside a JSON
        # string (as an older agentmem wrote them raw) and throw the whole block to the fallback below.
        for line in block.split("\n"):
            line = line.removesuffix("\r")
            if not line.strip():
                continue
            key, sep, rest = line.partition(": ")
            if not sep or not key.isidentifier():
                raise ValueError(line)
            meta[key] = _scalar_or_list(json.loads(rest))
        return meta
    except (ValueError, RecursionError):  # RecursionError: hostile nesting, e.g. [[[[...]]]]
        pass
    # Written by something else: a bounded YAML read, refusing anything but a flat mapping.
    data = foreign_yaml(block)
    if data is None:
        return {}
    out = {}
    for key, value in data.items():
        if isinstance(key, str):
            try:
                out[key] = _scalar_or_list(value)
            except ValueError:
                continue
    return out


def foreign_yaml(block: str) -> dict | None:
    """Frontmatter another program wrote, as a mapping, or None. Bounded, as everything read from
    elsewhere: at most MAX_FRONTMATTER_BYTES, read with PyYAML's safe loader, and refused when it holds
    an anchor or an alias (found by the scanner, which expands nothing): a 455-byte alias bomb expands
    to gigabytes once anything walks it, and metadata has no use for either."""
    if len(block) > MAX_FRONTMATTER_BYTES or len(block.encode("utf-8", errors="replace")) > MAX_FRONTMATTER_BYTES:
        return None
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        if any(isinstance(t, (yaml.AnchorToken, yaml.AliasToken)) for t in yaml.scan(block, Loader=loader)):
            return None
        data = yaml.load(block, Loader=loader)
    except (yaml.YAMLError, RecursionError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def parse(data: bytes) -> Parsed:
    """Parse note bytes leniently: never raises on odd content, returns what it can."""
    text = data.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    if text.startswith(_FENCE + "\n") or text.startswith(_FENCE + "\r\n"):
        end = text.find("\n" + _FENCE, len(_FENCE))
        if end != -1 and end <= MAX_FRONTMATTER_BYTES:
            after = text.find("\n", end + 1 + len(_FENCE))
            block = text[len(_FENCE) + 1 : end]
            body = text[after + 1 :] if after != -1 else ""
            return Parsed(_parse_meta(block), body.lstrip("\n"))
    return Parsed({}, text)
