"""Find credentials in text before it leaves the machine, and redact them.

High precision first: each detector keys on a token format (a vendor prefix, a
fixed shape) or on an assignment of a literal value to a credential-named
variable; placeholders such as `<token>`, `${VAR}` or `changeme` are not
flagged. Pure regex, compiled on first use; findings never carry the secret.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentmem.errors import SecretFound

# Human names for the kinds, used in error messages.
KIND_NAMES = {
    "private-key": "a private key block",
    "hf-token": "a Hugging Face token",
    "github-token": "a GitHub token",
    "gitlab-token": "a GitLab token",
    "slack-token": "a Slack token",
    "slack-webhook": "a Slack webhook URL",
    "stripe-key": "a Stripe secret key",
    "anthropic-key": "an Anthropic API key",
    "openai-key": "an OpenAI API key",
    "npm-token": "an npm token",
    "pypi-token": "a PyPI token",
    "aws-access-key-id": "an AWS access key ID",
    "aws-secret-access-key": "an AWS secret access key",
    "gcp-api-key": "a Google API key",
    "jwt": "a JSON Web Token",
    "url-credentials": "a password inside a URL",
    "bearer-token": "a bearer token",
    "password-assignment": "a password or secret assigned a literal value",
    "env-credential": "the value of a credential variable from this environment",
}

# Environment variables whose values are this machine's credentials; their exact
# values are refused wherever they appear, whatever their shape.
CREDENTIAL_ENV_VARS = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
MIN_KNOWN_SECRET = 8

# Values that stand for a secret rather than being one.
_PLACEHOLDER = re.compile(
    r"""^(?:<[^>]*>|\$\{[^}]*\}|\$\(?[A-Za-z_][A-Za-z0-9_]*\)?|\{\{.*\}\}|%\(?[A-Za-z_]*\)?s|\{[A-Za-z_]*\})$"""
    r"""|x{3,}|X{3,}|\*{3,}|\.{3}|…|redacted|example|changeme|change_me|change-me|placeholder"""
    r"""|your[_-]|my[_-]?(?:secret|token|password|key)|dummy|sample|fake|test|todo|fixme"""
    r"""|os\.environ|getenv|environ\[|env\(|secrets\.|settings\.|config\.|process\.env|vault"""
    r"""|^(?:pass|password|passwd|secret|token|key|apikey|user|username|none|null|true|false|empty)$""",
    re.IGNORECASE,
)

_ASSIGN_NAME = (
    r"(?:client[_-]?secret|secret[_-]?access[_-]?key|secret[_-]?key|private[_-]?key|access[_-]?key"
    r"|api[_-]?key|apikey|auth[_-]?key|auth[_-]?token|access[_-]?token|refresh[_-]?token|_authToken"
    r"|password|passwd|passphrase|secret|token)s?"
)

_Check = Callable[[re.Match], bool] | None  # a second look at a match: False rejects it
_compiled: list[tuple[str, re.Pattern, _Check]] | None = None


def _has_letter_and_digit(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _is_placeholder(value: str) -> bool:
    return bool(_PLACEHOLDER.search(value)) or len(set(value)) <= 3


def _check_jwt(m: re.Match) -> bool:
    head = m.group(0).split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
        header = json.loads(decoded)
    except (binascii.Error, ValueError):
        return False
    return isinstance(header, dict) and "alg" in header


def _not_dummy(m: re.Match) -> bool:
    """A vendor-shaped token that is really filler (`hf_xxxx...`, `...EXAMPLE`) is documentation."""
    text = m.group(0)
    return len(set(text)) >= 10 and not _DUMMY.search(text)


_DUMMY = re.compile(r"x{4,}|X{4,}|0{6,}|example|EXAMPLE|abcdefgh|ABCDEFGH|1234567890", re.IGNORECASE)


def _check_value(m: re.Match) -> bool:
    value = m.group("value")
    return not _is_placeholder(value)


def _is_complex(value: str) -> bool:
    """At least two of: lowercase, uppercase, digit, symbol. Words and slugs (`integer`, `fal-ai-key`) are not."""
    classes = (
        any(c.islower() for c in value),
        any(c.isupper() for c in value),
        any(c.isdigit() for c in value),
        any(not c.isalnum() and c not in "-_." for c in value),
    )
    return sum(classes) >= 2


def _check_quoted_assignment(m: re.Match) -> bool:
    value = m.group("value")
    if _is_placeholder(value) or value.startswith("#") or "(" in value:
        return False
    # A literal password is a single token (strings with spaces are messages) with some variety.
    return len(value) >= 6 and _is_complex(value)


def _check_url_password(m: re.Match) -> bool:
    value = m.group("value")
    return _is_complex(value) and not _is_placeholder(value)


def _check_bare_assignment(m: re.Match) -> bool:
    value = m.group("value")
    if _is_placeholder(value) or not _has_letter_and_digit(value) or value.startswith(("/", "./", "~/")):
        return False
    # A dotted name (settings.SECRET_KEY) is a reference, not a value.
    return not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+", value)


def _check_alnum_mix(m: re.Match) -> bool:
    value = m.group("value")
    return _has_letter_and_digit(value) and not _is_placeholder(value)


def _detectors() -> list[tuple[str, re.Pattern, _Check]]:
    """(kind, pattern, check) in priority order: earlier kinds win overlapping spans."""
    global _compiled
    if _compiled is not None:
        return _compiled
    b = r"(?<![A-Za-z0-9_])"  # start boundary
    e = r"(?![A-Za-z0-9_])"  # end boundary
    table: list[tuple[str, str, _Check]] = [
        (
            "private-key",
            r"-----BEGIN[A-Z0-9 ]{0,30} PRIVATE KEY(?: BLOCK)?-----"
            r"(?:\\[nr]|[\s:A-Za-z0-9,-]){0,400}?(?P<value>[A-Za-z0-9+/=]{40,})"
            r"(?:(?:\\[nr]|[\sA-Za-z0-9+/=]){0,20000}?-----END[A-Z0-9 ]{0,30} PRIVATE KEY(?: BLOCK)?-----)?",
            None,
        ),
        ("hf-token", b + r"hf_[A-Za-z0-9]{34,}" + e, _not_dummy),
        ("github-token", b + r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})" + e, _not_dummy),
        ("gitlab-token", b + r"(?:glpat|gldt|glrt|glptt|glcbt|gloas)-[A-Za-z0-9_-]{20,}" + e, _not_dummy),
        ("slack-token", b + r"xox[abposre]-(?:[0-9]{6,}-)+[A-Za-z0-9-]{8,}" + e, _not_dummy),
        (
            "slack-webhook",
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/T[A-Z0-9]{6,}/[A-Za-z0-9/_-]{16,}",
            _not_dummy,
        ),
        ("stripe-key", b + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}" + e, _not_dummy),
        ("anthropic-key", b + r"sk-ant-[a-z]{2,10}[0-9]{2}-[A-Za-z0-9_-]{32,}" + e, _not_dummy),
        (
            "openai-key",
            b + r"sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{32,}|(?P<value>[A-Za-z0-9]{32,}))" + e,
            lambda m: m.group("value") is None or _has_letter_and_digit(m.group("value")),
        ),
        ("npm-token", b + r"npm_[A-Za-z0-9]{36}" + e, _not_dummy),
        ("pypi-token", b + r"pypi-AgE[A-Za-z0-9_-]{50,}" + e, _not_dummy),
        (
            "aws-access-key-id",
            r"(?<![A-Z0-9])(?P<value>(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16})(?![A-Z0-9])",
            _check_value,
        ),
        (
            "aws-secret-access-key",
            r"(?i:aws)[A-Za-z0-9_.-]{0,20}(?i:secret)[A-Za-z0-9_.-]{0,20}[\"']?\s*(?::=|=>|=|:)\s*[\"']?"
            r"(?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
            _check_value,
        ),
        ("gcp-api-key", b + r"AIza[0-9A-Za-z_-]{35}" + e, _not_dummy),
        ("jwt", b + r"ey[A-Za-z0-9_-]{10,}\.ey[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{16,}" + e, _check_jwt),
        (
            "url-credentials",
            r"\b[a-z][a-z0-9+.-]{1,20}://[^\s/:@\"'<>]{1,64}:(?P<value>[^\s/:@\"'<>]{3,128})@[A-Za-z0-9.\[-]",
            _check_url_password,
        ),
        (
            "bearer-token",
            r"(?i:\bbearer)\s+(?P<value>[A-Za-z0-9._~+/-]{20,}=*)(?![A-Za-z0-9._~+/=-])",
            _check_alnum_mix,
        ),
        (
            "password-assignment",
            r"(?i:" + b + _ASSIGN_NAME + r")(?![A-Za-z0-9_])[\"']?\]?[ \t]*(?::=|=>|==?|:)[ \t]*"
            r"(?:[A-Za-z]{1,2})?(?P<q>[\"'])(?P<value>[^\"'`\s\\]{1,200})(?P=q)",
            _check_quoted_assignment,
        ),
        (
            "password-assignment",
            # Config and shell style: `API_KEY=...`, `password: ...`, `--token ...` with a bare value.
            r"(?:^[ \t]*(?:export[ \t]+|set[ \t]+)?[\"']?(?i:[A-Za-z0-9_.-]*" + _ASSIGN_NAME + r")[\"']?"
            r"[ \t]*(?:=|:)[ \t]*|(?i:--(?:password|passwd|token|api-key|secret|access-token|auth-token))"
            r"(?:=|[ \t]+))"
            r"(?P<value>[A-Za-z0-9_+/=.!@#%^&*~-]{8,200})(?=[ \t]*(?:#.*)?$|[ \t]+-)",
            _check_bare_assignment,
        ),
    ]
    _compiled = [(kind, re.compile(rx, re.MULTILINE), check) for kind, rx, check in table]
    return _compiled


@dataclass(frozen=True)
class Finding:
    """A credential found in text: its kind, 1-based line, and character span (never the secret itself)."""

    kind: str
    line: int
    start: int
    end: int

    def describe(self, where: str = "") -> str:
        name = KIND_NAMES.get(self.kind, self.kind)
        place = f"{where} line {self.line}" if where else f"line {self.line}"
        return f"{place}: {name} ({self.kind})"


def env_secrets() -> list[str]:
    """The values of this machine's credential variables (see CREDENTIAL_ENV_VARS)."""
    import os

    values = (os.environ.get(name, "").strip() for name in CREDENTIAL_ENV_VARS)
    return [v for v in values if len(v) >= MIN_KNOWN_SECRET]


def scan(text: str, known: tuple[str, ...] | list[str] = ()) -> list[Finding]:
    """Every credential in `text`, in order, with overlapping matches resolved to the most specific kind.

    `known`: exact secret values to find too (see `env_secrets`).
    """
    if not text:
        return []
    spans: list[tuple[int, int, str]] = []  # accepted, kept sorted by start

    def accept(start: int, end: int, kind: str) -> None:
        i = bisect.bisect_left(spans, (start,))
        if i > 0 and spans[i - 1][1] > start:
            return
        if i < len(spans) and spans[i][0] < end:
            return
        spans.insert(i, (start, end, kind))

    for secret in known:
        if len(secret) < MIN_KNOWN_SECRET:
            continue
        pos = text.find(secret)
        while pos != -1:
            accept(pos, pos + len(secret), "env-credential")
            pos = text.find(secret, pos + len(secret))
    for kind, pattern, check in _detectors():
        for m in pattern.finditer(text):
            if check is not None and not check(m):
                continue
            start, end = m.span("value") if kind in _VALUE_ONLY else m.span()
            accept(start, end, kind)
    breaks = [i for i, c in enumerate(text) if c == "\n"] if spans else []
    return [Finding(kind, bisect.bisect_left(breaks, s) + 1, s, e) for s, e, kind in spans]


# Kinds whose finding covers only the value, so redaction keeps the name (`password = "[REDACTED:...]"`).
_VALUE_ONLY = {"aws-secret-access-key", "url-credentials", "bearer-token", "password-assignment"}


def redact(text: str, known: tuple[str, ...] | list[str] = ()) -> str:
    """`text` with each credential replaced by `[REDACTED:<kind>]`."""
    for _ in range(4):  # a replacement can expose nothing new, but stay bounded whatever happens
        findings = scan(text, known)
        if not findings:
            return text
        parts, pos = [], 0
        for f in findings:
            parts.append(text[pos : f.start])
            parts.append(f"[REDACTED:{f.kind}]")
            pos = f.end
        parts.append(text[pos:])
        text = "".join(parts)
    return text


def check_text(text: str, where: str = "", known: tuple[str, ...] | list[str] = ()) -> None:
    """Raise SecretFound naming each line and kind if `text` holds a credential."""
    findings = scan(text, known)
    if findings:
        raise_for([f.describe(where) for f in findings])


def raise_for(places: list[str], action: str = "save", redact_option: bool = True) -> None:
    """Raise SecretFound listing up to five described findings; the message never holds the secret."""
    shown = "; ".join(places[:5])
    more = f" and {len(places) - 5} more" if len(places) > 5 else ""
    nothing = "nothing was written" if action == "save" else "nothing was published"
    hint = "remove the credential"
    if redact_option:
        hint += ", or pass --redact to replace it with [REDACTED:<kind>]"
    raise SecretFound(f"refusing to {action}: {shown}{more}; {nothing}", hint=hint)


def screen(fields: dict, *, redact_found: bool = False, known=()) -> tuple[dict, list[dict]]:
    """Check named fields (a string, a list of strings, or None) for credentials.

    Multi-line text is reported by line ("line 3"), one-line fields by name
    ("title", "tag 2"). Without `redact_found` any finding raises SecretFound;
    with it, returns the fields redacted and what was replaced ({"where", "kind"}).
    """
    places: list[str] = []
    replaced: list[dict] = []
    out: dict = {}
    for name, value in fields.items():
        items = value if isinstance(value, list) else [value]
        cleaned = []
        for i, item in enumerate(items):
            if not item:
                cleaned.append(item)
                continue
            label = f"{name} {i + 1}" if isinstance(value, list) else name
            for f in scan(item, known):
                where = f"line {f.line}" if name == "body" else label
                places.append(f"{where}: {KIND_NAMES.get(f.kind, f.kind)} ({f.kind})")
                replaced.append({"where": where, "kind": f.kind})
            cleaned.append(redact(item, known) if redact_found else item)
        out[name] = cleaned if isinstance(value, list) else cleaned[0]
    if places and not redact_found:
        raise_for(places)
    return out, replaced


def scan_files(paths, root: Path | None = None, known=()) -> list[tuple[str, Finding]]:
    """Scan text files; returns (display path, finding) pairs. Binary files (NUL bytes, not UTF-8) are skipped."""
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
