"""Find credentials in text before it leaves the machine, and redact them.

High precision first: each detector keys on a token format (a vendor prefix, a
fixed shape) or on an assignment of a literal value to a credential-named
variable; placeholders such as `<token>`, `${VAR}` or `changeme` are not
flagged. Private key blocks are read line by line (`keyblocks.py`). Findings
never carry the secret; what save and output do with them: `screening.py`.

Cheap on the per-turn path (`search` withholds a query that holds a credential):
nothing is compiled at import, and each detector is compiled only once a text
holds its literal anchor (`hf_`, `://`, `pass`...), so a plain query costs a few
substring tests. Tests: tests/test_secrets_scan.py and the corpora in
tests/corpus/ (benign text that must save, credentials that must not).
"""

from __future__ import annotations

import bisect
import re

from agentmem.errors import SecretFound

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (search imports this module)
if TYPE_CHECKING:
    from collections.abc import Callable

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
UNBOUNDED_KEY = "a private key block without its BEGIN or END line"

# Environment variables whose values are this machine's credentials; their exact
# values are refused wherever they appear, whatever their shape.
CREDENTIAL_ENV_VARS = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
MIN_KNOWN_SECRET = 8

# Values that stand for a secret rather than being one.
_PLACEHOLDER_RX = (
    r"""^(?:<[^>]*>|\$\{[^}]*\}|\$\(?[A-Za-z_][A-Za-z0-9_]*\)?|\{\{.*\}\}|%\(?[A-Za-z_]*\)?s|\{[A-Za-z_]*\}"""
    r"""|%[A-Za-z_][A-Za-z0-9_]*%|[*&][A-Za-z_][A-Za-z0-9_-]*)$"""  # %WINDOWS_VAR%, a YAML alias or anchor
    r"""|x{3,}|X{3,}|\*{3,}|\.{3}|…|redacted|example|changeme|change_me|change-me|placeholder"""
    r"""|your[_-]?|my[_-]?(?:secret|token|password|key)|dummy|sample|fake|test|todo|fixme"""
    r"""|os\.environ|getenv|environ\[|env\(|secrets\.|settings\.|config\.|process\.env|vault"""
    r"""|^(?:pass|password|passwd|pwd|secret|token|key|apikey|user|username|none|null|true|false|empty|bar)$"""
)
# Words a config, schema or log puts where a password goes (`password: required`, `"password": "expired"`):
# a description, not a value.
_DESCRIPTIVE = frozenset(
    "string str bool boolean required optional hidden masked omitted unset disabled enabled prompt prompted "
    "interactive generated random encrypted hashed plaintext inherit inherited default sensitive secretstr "
    "undefined nullable readonly writeonly expired invalid missing incorrect wrong weak strong changed valid "
    "locked unknown revoked rotated protected provided supplied stored".split()
)

_ASSIGN_NAME = (
    r"(?:client[_-]?secret|secret[_-]?access[_-]?key|secret[_-]?key|private[_-]?key|access[_-]?key"
    r"|api[_-]?key|apikey|auth[_-]?key|auth[_-]?token|access[_-]?token|refresh[_-]?token|_authToken"
    r"|password|passwd|passphrase|secret|token)s?"
)
_ASSIGN_ANCHORS = ("pass", "secret", "token", "key")  # every _ASSIGN_NAME holds one (lower-cased)

_patterns: dict[int, re.Pattern] = {}  # detector index -> compiled pattern, filled on first need
_helpers: dict[str, re.Pattern] = {}


def _rx(name: str, source: str) -> re.Pattern:
    found = _helpers.get(name)
    if found is None:
        found = _helpers[name] = re.compile(source, re.IGNORECASE)
    return found


def _has_letter_and_digit(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _is_placeholder(value: str) -> bool:
    return bool(_rx("placeholder", _PLACEHOLDER_RX).search(value)) or len(set(value)) <= 3


def _check_jwt(m: re.Match) -> bool:
    import base64
    import binascii
    import json

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
    dummy = _rx("dummy", r"x{4,}|0{6,}|example|abcdefgh|1234567890")
    return len(set(text)) >= 10 and not dummy.search(text)


def _check_value(m: re.Match) -> bool:
    return not _is_placeholder(m.group("value"))


def _names_a_password(m: re.Match) -> bool:
    name = m.group("name") or m.group(0)[:12]  # the option form has no name: `--password ...`
    return "pass" in name.lower()


def _is_described(value: str) -> bool:
    """`required`, `SecretStr`, `Optional[str]`: what a schema or a type annotation puts there."""
    if value.lower().rstrip("?!") in _DESCRIPTIVE:
        return True
    return bool(_rx("type", r"(?-i:[A-Z][a-z]+(?:[A-Z][a-z]+)*(?:\[[A-Za-z_., \[\]|]*\])?)").fullmatch(value))


def _is_name_slug(value: str) -> bool:
    """`my-tls-secret-2`, `default-token-x7k2p`: a resource's name (words, numbers, a short suffix), not a key."""
    parts = value.split("-")
    if len(parts) < 2 or not all(parts):
        return False
    *head, last = parts
    words = all(p.isalpha() and p.islower() or p.isdigit() for p in head)
    return words and last.isascii() and last.isalnum() and last.lower() == last and (
        last.isalpha() or last.isdigit() or len(last) <= 5)


def _check_quoted_assignment(m: re.Match) -> bool:
    value = m.group("value")
    if _is_placeholder(value) or value.startswith(("#", "$(")) or len(value) < 6:
        return False
    # A literal password is a single token (strings with spaces are messages) and needs no variety; a token
    # or key mixes letters and digits (`pad_token = "[PAD]"`, `HELPER_TOKEN = "@AGENTMEM@"` are not secrets).
    if _names_a_password(m):
        return not _is_described(value)
    return _has_letter_and_digit(value) and not _is_name_slug(value)


def _check_url_password(m: re.Match) -> bool:
    value = m.group("value")
    # Any password at all, lower case or two letters: only placeholders (`user:password@`, `:${PW}@`) pass.
    return not _rx("placeholder", _PLACEHOLDER_RX).search(value) and not (len(value) >= 3 and len(set(value)) == 1)


def _check_bare_assignment(m: re.Match) -> bool:
    value = m.group("value")
    if _is_placeholder(value) or value.startswith(("/", "./", "~/", "$(")) or "://" in value:
        return False
    # Code is a reference, not a value: a dotted name (settings.SECRET_KEY), a call or an index
    # (`token = parts[2]`, `b64encode(x).decode()`), an item of a literal (`"password": password.password,`).
    code = r"(?-i:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*|\[[^\]]*\]+|\([^)]*\)+)*[\[(]?[,;]?)"
    if _rx("code", code).fullmatch(value) and any(c in value for c in ".([,;"):
        return False
    if _names_a_password(m):
        # `DB_PASSWORD=correcthorsebattery` has no digit and is one; `password = key_password` is a variable.
        return not _is_described(value) and not _rx("variable", r"(?-i:[a-z]+(?:_[a-z0-9]+)+)").fullmatch(value)
    return _has_letter_and_digit(value) and not _is_name_slug(value)


def _check_openai(m: re.Match) -> bool:
    value = m.group("value")
    if value is None:
        return True  # sk-proj-, sk-svcacct-, sk-admin-
    # `#sk-3f9a...` (a CSS id, a hash) is hex; a key's 32 or more characters are mixed-case alphanumerics.
    return _has_letter_and_digit(value) and not re.fullmatch(r"[0-9a-f]+|[0-9A-F]+", value)


# (kind, anchors, regex, check) in priority order: earlier kinds win overlapping spans. A detector runs only
# on text holding one of its anchors (lower-case anchors: in the lower-cased text) and, if it has any,
# one of its _NEEDS: a query like "deploy key" compiles nothing.
_B = r"(?<![A-Za-z0-9])"  # start boundary: `_` may touch a token (`MY_hf_...`)
_E = r"(?![A-Za-z0-9])"  # end boundary
_DETECTORS: list[tuple[str, tuple[str, ...], str, Callable[[re.Match], bool]]] = [
    ("hf-token", ("hf_",), _B + r"hf_[A-Za-z0-9]{34,}" + _E, _not_dummy),
    ("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
     _B + r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})" + _E, _not_dummy),
    ("gitlab-token", ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "gloas-"),
     _B + r"(?:glpat|gldt|glrt|glptt|glcbt|gloas)-[A-Za-z0-9_-]{20,}" + _E, _not_dummy),
    # Bot, user and app-level tokens (xoxb-, xoxp-, xoxe-1-, xapp-1-A0...-...).
    ("slack-token", ("xox", "xapp-"), _B + r"(?:xox[abposre]|xapp)-[0-9]{1,20}-[A-Za-z0-9-]{16,}" + _E, _not_dummy),
    ("slack-webhook", ("hooks.slack.com",),
     r"https://hooks\.slack\.com/(?:services|workflows|triggers)/T[A-Z0-9]{6,}/[A-Za-z0-9/_-]{16,}", _not_dummy),
    ("stripe-key", ("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
     _B + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}" + _E, _not_dummy),
    ("anthropic-key", ("sk-ant-",), _B + r"sk-ant-[a-z]{2,10}[0-9]{2}-[A-Za-z0-9_-]{32,}" + _E, _not_dummy),
    ("openai-key", ("sk-",),
     r"(?<![A-Za-z0-9_-])sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{32,}|(?P<value>[A-Za-z0-9]{32,}))"
     r"(?![A-Za-z0-9_-])", _check_openai),
    ("npm-token", ("npm_",), _B + r"npm_[A-Za-z0-9]{36}" + _E, _not_dummy),
    ("pypi-token", ("pypi-AgE",), _B + r"pypi-AgE[A-Za-z0-9_-]{50,}" + _E, _not_dummy),
    ("aws-access-key-id", ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
     r"(?<![A-Z0-9])(?P<value>(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16})(?![A-Z0-9])", _check_value),
    ("aws-secret-access-key", ("aws",),
     r"(?i:aws)[A-Za-z0-9_.-]{0,20}(?i:secret)[A-Za-z0-9_.-]{0,20}[\"']?\s*(?::=|=>|=|:)\s*[\"']?"
     r"(?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])", _check_value),
    ("gcp-api-key", ("AIza",), _B + r"AIza[0-9A-Za-z_-]{35}" + _E, _not_dummy),
    ("jwt", (".ey",), _B + r"ey[A-Za-z0-9_-]{10,}\.ey[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{16,}" + _E, _check_jwt),
    # scheme://[user]:password@host; the password may hold `:` and `@` (the last `@` before the host ends it).
    ("url-credentials", ("://",),
     r"\b[a-z][a-z0-9+.-]{1,20}://[^\s/:@\"'<>]{0,64}:(?P<value>[^\s/\"'<>]{1,128})@[A-Za-z0-9.\[-]",
     _check_url_password),
    ("bearer-token", ("bearer",),
     r"(?i:\bbearer)\s+(?P<value>[A-Za-z0-9._~+/-]{20,}=*)(?![A-Za-z0-9._~+/=-])",
     lambda m: _has_letter_and_digit(m.group("value")) and not _is_placeholder(m.group("value"))),
    ("password-assignment", _ASSIGN_ANCHORS,
     r"(?<![A-Za-z0-9])(?P<name>(?i:" + _ASSIGN_NAME + r"))(?![A-Za-z0-9_])[\"']?\]?[ \t]*"
     r"(?::=|=>|==?|:)[ \t]*(?:[A-Za-z]{1,2})?(?P<q>[\"'])(?P<value>[^\"'`\s\\]{1,200})(?P=q)",
     _check_quoted_assignment),
    # Config and shell style: `API_KEY=...`, `password: ...` with a bare value ending the line (or followed by
    # an option), and `--password ...` followed by anything.
    ("password-assignment", _ASSIGN_ANCHORS,
     r"(?:^[ \t]*(?:export[ \t]+|set[ \t]+)?[\"']?(?P<name>(?i:[A-Za-z0-9_.-]*" + _ASSIGN_NAME + r"))[\"']?"
     r"[ \t]*(?:=|:)[ \t]*|(?i:--(?:password|passwd|token|api-key|secret|access-token|auth-token))"
     r"(?:=|[ \t]+)(?P<option>))"
     r"(?P<value>[^\s\"'`]{8,200})(?=[ \t]*(?:#.*)?$|[ \t]+-|(?(option)[ \t]|(?!)))",
     _check_bare_assignment),
]


# What else a detector's match must hold (looked for in the lower-cased text), by kind.
_NEEDS = {
    "aws-secret-access-key": ("secret",),
    "url-credentials": ("@",),
}


def _may_assign(lowered: str) -> bool:
    """Whether an _ASSIGN_NAME can stand before `=` or `:` here (or an option name appear): a cheap test,
    true wherever the password-assignment patterns can match, so most queries compile neither."""
    if "--" in lowered:
        return True
    for anchor in _ASSIGN_ANCHORS:
        pos = lowered.find(anchor)
        while pos != -1:
            # At most 12 more name characters (`secret_access_key`), a closing quote or `]`, blanks, then =/:
            rest = lowered[pos + len(anchor) : pos + len(anchor) + 24]
            name_end = rest.lstrip("abcdefghijklmnopqrstuvwxyz_-")
            if len(rest) - len(name_end) <= 12 and name_end.lstrip("\"'] \t")[:1] in ("=", ":"):
                return True
            pos = lowered.find(anchor, pos + 1)
    return False


def _pattern(index: int) -> re.Pattern:
    found = _patterns.get(index)
    if found is None:
        found = _patterns[index] = re.compile(_DETECTORS[index][2], re.MULTILINE)
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

    `known`: exact secret values to find too (see `env_secrets`).
    """
    if not text:
        return []
    spans: list[tuple[int, int, str, bool]] = []  # accepted, kept sorted by start

    def accept(start: int, end: int, kind: str, redactable: bool = True) -> None:
        i = bisect.bisect_left(spans, (start,))
        if i > 0 and spans[i - 1][1] > start:
            return
        if i < len(spans) and spans[i][0] < end:
            return
        spans.insert(i, (start, end, kind, redactable))

    for secret in known:
        if len(secret) < MIN_KNOWN_SECRET:
            continue
        pos = text.find(secret)
        while pos != -1:
            accept(pos, pos + len(secret), "env-credential")
            pos = text.find(secret, pos + len(secret))
    if "PRIVATE KEY" in text:
        from agentmem.safety import keyblocks

        for start, end, redactable in keyblocks.find(text):
            accept(start, end, "private-key", redactable)
    lowered = text.lower()
    may_assign = None
    for index, (kind, anchors, _, check) in enumerate(_DETECTORS):
        if not any(a in (lowered if a.islower() else text) for a in anchors):
            continue
        if kind in _NEEDS and not any(n in lowered for n in _NEEDS[kind]):
            continue
        if kind == "password-assignment":
            may_assign = _may_assign(lowered) if may_assign is None else may_assign
            if not may_assign:
                continue
        for m in _pattern(index).finditer(text):
            if not check(m):
                continue
            start, end = m.span("value") if kind in _VALUE_ONLY else m.span()
            accept(start, end, kind)
    breaks = [i for i, c in enumerate(text) if c == "\n"] if spans else []
    return [Finding(kind, bisect.bisect_left(breaks, s) + 1, s, e, r) for s, e, kind, r in spans]


# Kinds whose finding covers only the value, so redaction keeps the name (`password = "[REDACTED:...]"`).
_VALUE_ONLY = {"aws-secret-access-key", "url-credentials", "bearer-token", "password-assignment"}


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
                f"refusing to save: {unbounded[0].describe()}; --redact cannot tell where it starts or ends, "
                "so it removes nothing and nothing was written",
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
    hint = "remove the credential"
    if redact_option:
        hint += ", or pass --redact to replace it with [REDACTED:<kind>]"
    raise SecretFound(f"refusing to {action}: {shown}{more}; {nothing}", hint=hint)


def scan_files(paths, root=None, known=()) -> list[tuple[str, Finding]]:
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
