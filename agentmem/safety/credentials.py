"""Find credentials in text before it leaves the machine, and redact them.

High precision first: each detector keys on a token format (a vendor prefix and charset, a fixed shape:
`tokens.py`), on the place a credential is passed (a command's option, a header, a URL's query:
`contexts.py`), on a file format whose lines are secrets (.netrc, .pgpass: `formats.py`) or on a
credential-named variable, key or option given a value, in any spelling, anywhere on a line
(`assignments.py`); stand-ins such as `<token>`, `${VAR}` or `changeme` are not flagged
(`placeholders.py`). Private key blocks are read line by line (`keyblocks.py`). A token split across lines
by a trailing backslash is found by scanning the text with those joins undone. Findings never carry the
secret; what save and output do with them: `screening.py`.

Cheap on the per-turn path (`search` withholds a query that holds a credential): nothing is compiled at
import, and each detector is compiled only once a text holds its literal anchor (`://`, `pass`, a
separator...), each anchor looked for once per scan; a line-bound detector then runs only on the lines
where it can start. So a plain query costs a few substring tests. Tests: tests/test_secrets_scan.py, the
corpora in tests/corpus/ and the generated one (tests/secrets_corpus.py).
"""

from __future__ import annotations

import bisect
import re

from agentmem.errors import NextStep, Option, SecretFound
from agentmem.safety import assignments, contexts, formats, tokens
from agentmem.safety.placeholders import has_letter_and_digit as _has_letter_and_digit
from agentmem.safety.placeholders import is_placeholder as _is_placeholder
from agentmem.safety.placeholders import names_no_password

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (search imports this module)
if TYPE_CHECKING:
    import os
    from collections.abc import Callable, Iterable

# Human names for the kinds, used in error messages.
KIND_NAMES = {
    "private-key": "a private key block",
    **tokens.KIND_NAMES,
    "url-credentials": "a password inside a URL",
    "bearer-token": "a bearer token",
    "password-assignment": "a password or secret assigned a literal value",
    **contexts.KIND_NAMES,
    **formats.KIND_NAMES,
    "env-credential": "the value of a credential variable from this environment",
}
UNBOUNDED_KEY = "a private key block without its BEGIN or END line"

# Environment variables whose values are this machine's credentials; their exact
# values are refused wherever they appear, whatever their shape.
CREDENTIAL_ENV_VARS = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
MIN_KNOWN_SECRET = 8

_patterns: dict[int, re.Pattern] = {}  # detector index -> compiled pattern, filled on first need


def _check_url_password(m: re.Match) -> bool:
    # Any password at all, lower case or two letters: only placeholders (`user:password@`, `:${PW}@`) pass.
    return not names_no_password(m.group("value"))


def _tokens(text: str, lowered: str, holds: _Anchors | _Direct) -> list[tuple[int, int, str]]:
    return tokens.find(text, holds.has_char)


def _assignments(text: str, lowered: str, holds: _Anchors | _Direct) -> list[tuple[int, int, str]]:
    return assignments.find(text, lowered, holds)


# (kind, anchors, regex or finder, check) in priority order: earlier kinds win overlapping spans. A detector
# runs only on text holding one of its anchors (lower-case anchors: in the lower-cased text) and every one of
# its _NEEDS: a query like "deploy key" compiles nothing. A finder (`tokens.find`, `assignments.find`) takes
# (text, lowered, holds) and gives (start, end, kind) itself; its anchors are its own to look for.
_DETECTORS: list[tuple[str, tuple[str, ...], str | Callable, Callable[[re.Match], bool] | None]] = [
    ("tokens", (), _tokens, None),
    *tokens.DETECTORS,
    *contexts.DETECTORS,
    # scheme://[user]:password@host; the password may hold `:` and `@` (the last `@` before the host ends it).
    ("url-credentials", ("://",),
     r"\b[a-z][a-z0-9+.-]{1,20}://[^\s/:@\"'<>]{0,64}:(?P<value>[^\s/\"'<>]{1,128})@[A-Za-z0-9.\[-]",
     _check_url_password),
    ("bearer-token", ("bearer",),
     r"(?i:\bbearer)\s+(?P<value>(?:[A-Za-z0-9._~+/-]|[()](?=[A-Za-z0-9._~+/-])){20,}+=*+)"
     r"(?![A-Za-z0-9._~+/=-])",  # a bracket inside the token is its own, as in contexts._HEADER_VALUE
     lambda m: _has_letter_and_digit(m.group("value")) and not _is_placeholder(m.group("value"))),
    *formats.DETECTORS,
    ("password-assignment", (), _assignments, None),
    *contexts.FALLBACKS,
]


# What else a detector's match must hold (looked for before its anchors: these are the commoner misses), by kind.
_NEEDS = {
    "aws-secret-access-key": ("secret",),
    "url-credentials": ("@",),
    **formats.NEEDS,
}
# Asked first on a long text: each rules out, when missing, every longer anchor holding it (`key` before
# `accountkey`, `auth` before `authorization`), so those cost no search of their own.
_FIRST = ("key", "token", "pass", "secret", "auth")

_SITES = contexts.SITES


def _pattern(index: int) -> re.Pattern:
    found = _patterns.get(index)
    if found is None:
        pattern = _DETECTORS[index][2]
        assert isinstance(pattern, str)
        found = _patterns[index] = re.compile(pattern, re.MULTILINE)
    return found


class Finding:
    """A credential found in text: its kind, 1-based line, and character span (never the secret itself).

    `redactable` is False for a private key block whose BEGIN or END line is missing: its extent is unknown.
    """

    __slots__ = ("kind", "line", "start", "end", "redactable")

    def __init__(self, kind: str, line: int, start: int, end: int, redactable: bool = True):
        self.kind, self.line, self.start, self.end, self.redactable = kind, line, start, end, redactable

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Finding) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Finding({self.kind!r}, line {self.line}, {self.start}-{self.end})"

    def _key(self) -> tuple:
        return (self.kind, self.line, self.start, self.end, self.redactable)

    @property
    def name(self) -> str:
        return KIND_NAMES.get(self.kind, self.kind) if self.redactable else UNBOUNDED_KEY

    def describe(self, where: str = "") -> str:
        place = f"{where} line {self.line}" if where else f"line {self.line}"
        return f"{place}: {self.name} ({self.kind})"


def env_secrets() -> list[str]:
    """The values of this machine's credential variables (see CREDENTIAL_ENV_VARS)."""
    import os

    values = (os.environ.get(name, "").strip() for name in CREDENTIAL_ENV_VARS)
    return [v for v in values if len(v) >= MIN_KNOWN_SECRET]


def scan(text: str, known: tuple[str, ...] | list[str] = ()) -> list[Finding]:
    """Every credential in `text`, in order, with overlapping matches resolved to the most specific kind.

    `known`: exact secret values to find too (see `env_secrets`). A token split across lines by a trailing
    backslash (`hf_abc\\` then `def...` on the next line) is found too, its span covering both parts.
    """
    if not text:
        return []
    spans = _spans(text, known)
    if "\\\n" in text or "\\\r\n" in text:
        # What a join finds is the whole token; a match on one side of it (`TOKEN=hf_abc\\`) is only part.
        joined = sorted(_continued(text, known))
        for start, end, kind, redactable in spans:
            _accept(joined, start, end, kind, redactable)
        spans = joined
    out, line, counted = [], 1, 0
    for s, e, kind, r in spans:  # sorted by start: count the line breaks between one finding and the next
        line += text.count("\n", counted, s)
        counted = s
        out.append(Finding(kind, line, s, e, r))
    return out


def _accept(spans: list, start: int, end: int, kind: str, redactable: bool = True) -> None:
    """Add a span to the sorted `spans` unless it overlaps one found before it (the more specific kind)."""
    i = bisect.bisect_left(spans, (start,))
    if i > 0 and spans[i - 1][1] > start:
        return
    if i < len(spans) and spans[i][0] < end:
        return
    spans.insert(i, (start, end, kind, redactable))


def _spans(text: str, known: tuple[str, ...] | list[str]) -> list[tuple[int, int, str, bool]]:
    spans: list[tuple[int, int, str, bool]] = []  # accepted, kept sorted by start
    for secret in known:
        if len(secret) < MIN_KNOWN_SECRET:
            continue
        pos = text.find(secret)
        while pos != -1:
            _accept(spans, pos, pos + len(secret), "env-credential")
            pos = text.find(secret, pos + len(secret))
    if "PRIVATE KEY" in text:
        from agentmem.safety import keyblocks

        for start, end, redactable in keyblocks.find(text):
            _accept(spans, start, end, "private-key", redactable)
    lowered = text.lower()
    holds = _Anchors(text, lowered) if len(text) > _SHORT else _Direct(text, lowered)
    if len(text) > _SHORT:
        for anchor in _FIRST:
            holds(anchor)
    windows_of: dict = {}  # sites function -> the lines it found, shared by the detectors using it
    for index, (kind, anchors, pattern, check) in enumerate(_DETECTORS):
        if kind in _NEEDS and not all(holds(n) for n in _NEEDS[kind]):
            continue
        if anchors and not any(holds(a) for a in anchors):
            continue
        if not isinstance(pattern, str):
            for start, end, found in pattern(text, lowered, holds):
                _accept(spans, start, end, found)
            continue
        assert check is not None
        # A line-bound detector runs only over the lines where it can start (_SITES).
        sites = _SITES.get(pattern)
        if sites is None:
            windows = [(0, len(text))]
        else:
            if sites not in windows_of:
                windows_of[sites] = _windows(sites(text, lowered), text, lowered)
            windows = windows_of[sites]
        for window_start, window_end in windows:
            for m in _pattern(index).finditer(text, window_start, window_end):
                if not check(m):
                    continue
                start, end = m.span("value") if kind in _VALUE_ONLY else m.span()
                _accept(spans, start, end, kind)
    return spans


def _windows(places: list[int] | None, text: str, lowered: str) -> list[tuple[int, int]]:
    """The lines holding `places` (None: too many to list, so all of the text). Where lower-casing changed the
    text's length (`İ` becomes two characters) a place in it is no place in the text: then all of it too."""
    if places is None or (places and len(lowered) != len(text)):
        return [(0, len(text))]
    return contexts.lines_at(text, places)


_SHORT = 2048  # below this (a query, a title) a direct search beats working out which to skip


class _Direct:
    """Whether a short text holds an anchor (or a character): a direct search each time."""

    def __init__(self, text: str, lowered: str):
        self.text, self.lowered = text, lowered

    def __call__(self, anchor: str) -> bool:
        return anchor in (self.lowered if anchor.islower() else self.text)

    def has_char(self, char: str) -> bool:
        return char in self.text


class _Anchors:
    """Which anchors a text holds, each looked for once per scan. An anchor holding one already missing
    (`token=` once `token` is not there), or a character the text lacks, is missing too without a search:
    a scan then costs fewer searches of the text than there are anchors, however many detectors share them."""

    def __init__(self, text: str, lowered: str):
        self.text, self.lowered = text, lowered
        self.seen: dict[str, bool] = {}
        self.missing_lower: list[str] = []  # lower-case anchors the lower-cased text lacks
        self.missing_exact: list[str] = []  # other anchors the text lacks

    def __call__(self, anchor: str) -> bool:
        found = self.seen.get(anchor)
        if found is not None:
            return found
        lower = anchor.islower()
        folded = anchor if lower else anchor.lower()
        if any(m in folded for m in self.missing_lower) or (not lower and any(m in anchor for m in self.missing_exact)):
            found = False
        elif any(not ("a" <= c <= "z") and not self.has_char(c) for c in anchor):
            # Base64 has no `_`, `-` or `"`, a config may have no capital: one search for a character (the
            # fastest there is) rules out every anchor holding it.
            found = False
        else:
            found = anchor in (self.lowered if lower else self.text)
            if not found:
                (self.missing_lower if lower else self.missing_exact).append(anchor)
        self.seen[anchor] = found
        return found

    def has_char(self, char: str) -> bool:
        found = self.seen.get(char)
        if found is None:
            found = self.seen[char] = char in self.text
        return found


def _continued(text: str, known: tuple[str, ...] | list[str]) -> list[tuple[int, int, str, bool]]:
    """Findings in `text` with each backslash-newline that splits a word removed (`abc\\` + newline + `def`, a
    shell continuation inside a token), mapped back to `text`; only those that cross such a join."""
    cuts: list[tuple[int, int]] = []  # (where the join is in the joined text, characters removed there)
    joined, last, removed = [], 0, 0
    for m in re.finditer(r"\\\r?\n", text):
        if m.start() and not text[m.start() - 1].isspace():
            joined.append(text[last : m.start()])
            cuts.append((m.start() - removed, m.end() - m.start()))
            removed += m.end() - m.start()
            last = m.end()
    if not cuts:
        return []
    joined.append(text[last:])
    found = []
    for start, end, kind, redactable in _spans("".join(joined), known):
        if not any(start < at < end for at, _ in cuts):
            continue
        shift_start = sum(n for at, n in cuts if at <= start)
        shift_end = sum(n for at, n in cuts if at < end)
        found.append((start + shift_start, end + shift_end, kind, redactable))
    return found


# Kinds whose finding covers only the value, so redaction keeps the name (`password = "[REDACTED:...]"`).
_VALUE_ONLY = {"aws-secret-access-key", "url-credentials", "bearer-token", "password-assignment",
               *contexts.VALUE_ONLY, *formats.VALUE_ONLY}


class Unredactable(SecretFound):
    """A credential whose extent cannot be told (a key block without its BEGIN or END line)."""


def redact(text: str, known: tuple[str, ...] | list[str] = ()) -> str:
    """`text` with each credential replaced by `[REDACTED:<kind>]`.

    Raises Unredactable rather than return text that may still hold part of a secret: a key block
    whose BEGIN or END line is missing, or (never seen) a replacement that leaves something to find.
    """
    for _ in range(4):  # a replacement exposes nothing new in practice, but stay bounded whatever happens
        findings = scan(text, known)
        if not findings:
            return text
        unbounded = [f for f in findings if not f.redactable]
        if unbounded:
            raise Unredactable(
                NextStep.of(f"refusing to save: {unbounded[0].describe()}; ", Option("redact"), " cannot tell where "
                            "it starts or ends, so it removes nothing and nothing was written"),
                hint="delete the whole key from the note and save again",
            )
        parts, pos = [], 0
        for f in findings:
            parts.append(text[pos : f.start])
            parts.append(f"[REDACTED:{f.kind}]")
            pos = f.end
        parts.append(text[pos:])
        text = "".join(parts)
    if scan(text, known):
        raise Unredactable("refusing to save: redaction left a credential behind; nothing was written",
                           hint="remove the credential")
    return text


def raise_for(places: list[str], action: str = "save", redact_option: bool = True) -> None:
    """Raise SecretFound listing up to five described findings; the message never holds the secret."""
    shown = "; ".join(places[:5])
    more = f" and {len(places) - 5} more" if len(places) > 5 else ""
    nothing = "nothing was written" if action == "save" else "nothing was published"
    hint: list[str | NextStep] = ["remove the credential"]
    if redact_option:  # an alternative (words starting "or "): the front ends join it with a comma
        hint.append(NextStep("or pass {} to replace it with [REDACTED:<kind>]", Option("redact")))
    raise SecretFound(f"refusing to {action}: {shown}{more}; {nothing}", hint=hint)


def scan_files(paths: Iterable[str | os.PathLike[str]], root: str | os.PathLike[str] | None = None,
               known: tuple[str, ...] | list[str] = ()) -> list[tuple[str, Finding]]:
    """Scan text files; returns (display path, finding) pairs. Binary files (NUL bytes, not UTF-8) are skipped."""
    from pathlib import Path

    out: list[tuple[str, Finding]] = []
    for path in paths:
        path = Path(path)
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if b"\x00" in data:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        shown = str(path.relative_to(root)) if root is not None else str(path)
        out.extend((shown, f) for f in scan(text, known))
    return out
