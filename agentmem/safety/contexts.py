"""Credentials known by where they are passed, whatever their shape: a command's option, an HTTP header, a URL's
query, a connection string, a registry login.

A password has no shape (`curl -u deploy:$PASS` shows the place, a real one fills it), so these detectors key on
the place and then ask `placeholders.py` whether the value stands for a secret or is one. Everyday forms
(issue 25): `curl -u`/`--user`, `Authorization: Basic` and other schemes, key headers (`X-API-Key`, `api-key`,
`X-Auth-Token`, `Private-Token`...), `PGPASSWORD=... psql` and other password variables before a command,
`mysql -p<password>` and `--password=`, `sshpass -p`, `docker login -p`, `redis-cli -a`, Azure `AccountKey=` and
SAS `sig=`, `?access_token=`/`?token=` in a URL, a Docker config.json `auth`.

What they leave alone: the option that prompts (`mysql -p` with nothing glued on, `curl -u user`), other tools'
`-p` (`mkdir -p`, `ssh -p 22`, `docker run -p 8080:80`), `--token-file`, a Codecov badge's graph token (made
to be published), and every stand-in (`<token>`, `$TOKEN`, `${{ secrets.X }}`). Each finding covers the value
only, so redaction keeps the command readable. `credentials.py` runs `DETECTORS` before its generic assignment
detectors and `FALLBACKS` after them.
"""

from __future__ import annotations

import re

from agentmem.safety.placeholders import (
    has_letter_and_digit,
    is_default,
    is_described,
    is_name_slug,
    is_placeholder,
    names_no_password,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Callable

KIND_NAMES = {
    "basic-auth": "an HTTP Basic user and password",
    "auth-header": "a credential in an HTTP header",
    "command-password": "a password given to a command",
    "azure-key": "an Azure account or access key",
    "azure-sas": "an Azure shared access signature",
    "url-token": "a token in a URL's query",
    "docker-auth": "a registry login from a Docker config",
}
VALUE_ONLY = frozenset(KIND_NAMES)

# Text between a command's name and its option: the same command (no `|`, `;`, `&`), lines continued with `\`.
_SAME_COMMAND = r"(?:[^\n|;&]|(?<=\\)\n){0,400}?"
# One argument, quoted or bare; the value inside the quotes.
_ARG = r"""(?P<q>['"])?(?P<value>(?(q)[^'"\n]{1,200}|[^\s'"`;|&)]{1,200}))(?(q)(?P=q))"""


def _password(m: re.Match) -> bool:
    value = m.group("value")
    return not names_no_password(value) and not value.startswith(("$", "`")) and not is_described(value)


def _token(m: re.Match) -> bool:
    value = m.group("value")
    return (len(value) >= 8 and has_letter_and_digit(value) and not is_placeholder(value)
            and not is_name_slug(value))


def _decodes_to_login(value: str) -> bool:
    """Base64 of `user:password` (Basic auth, a Docker `auth`) with a real password after the colon."""
    import base64
    import binascii

    try:
        text = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    user, colon, password = text.partition(":")
    printable = text.isprintable() and not any(c.isspace() for c in text)
    return bool(colon) and printable and bool(password) and not names_no_password(password)


def _basic(m: re.Match) -> bool:
    return _decodes_to_login(m.group("value"))


def _is_code(m: re.Match) -> bool:
    """`{'Authorization': auth_header}`: a quoted name and a bare snake_case value is code naming a variable."""
    value = m.group("value")
    bare_after_quote = m.group("nq") is not None and m.group("vq") is None
    return bare_after_quote or bool(re.fullmatch(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+", value))


def _authorization(m: re.Match) -> bool:
    """`Authorization: Token abc123...`, `Bot ...`, `SSWS ...` or a bare value; Bearer and Basic have their own
    detectors (and Digest carries a hash, not the password)."""
    scheme = (m.group("scheme") or "").lower()
    return (scheme not in ("bearer", "basic", "digest", "negotiate", "ntlm", "aws4-hmac-sha256") and _token(m)
            and not _is_code(m))


def _key_header(m: re.Match) -> bool:
    name = m.group("name").lower()
    return "csrf" not in name and "xsrf" not in name and _token(m) and not _is_code(m)


def _docker(m: re.Match) -> bool:
    if m.group("name").lower() == "auth":
        return _decodes_to_login(m.group("value"))
    return _token(m)


def _public_badge(m: re.Match) -> bool:
    return public_badge_at(m.string, m.start())


def public_badge_at(text: str, start: int) -> bool:
    """Codecov's badge URLs carry a graph token made to be published in READMEs (`.../graph/badge.svg?token=`)."""
    url_start = max(text.rfind(c, 0, start) for c in " \t\n\"'(<")
    url = text[url_start + 1 : start]
    return "codecov.io/" in url and "/graph/" in url


def _query_value(m: re.Match) -> bool:
    from urllib.parse import unquote

    if _public_badge(m):
        return False
    value = unquote(m.group("value"))
    if value.startswith(("$", "{", "%", "<", "[")) or is_placeholder(value):
        return False
    if "pass" in m.group("name").lower():
        return len(value) >= 6 and not is_described(value)
    return len(value) >= 8 and has_letter_and_digit(value) and not is_name_slug(value)


def _sas(m: re.Match) -> bool:
    from urllib.parse import unquote

    value = unquote(m.group("value"))
    return len(value) >= 16 and has_letter_and_digit(value) and not is_placeholder(value)


def _account_key(m: re.Match) -> bool:
    value = m.group("value")
    return has_letter_and_digit(value) and len(set(value)) >= 10 and not is_placeholder(value)


def _env_prefix(m: re.Match) -> bool:
    name = m.group("name")
    if name.endswith("ASKPASS"):
        return False  # a helper program's path, not a password
    if "PASS" in name or name in ("MYSQL_PWD", "REDISCLI_AUTH"):
        # Four characters or more: `NO_PASSWORD=1` is a switch; `POSTGRES_PASSWORD=postgres` a default.
        value = m.group("value")
        return len(value) >= 4 and _password(m) and not value.startswith(("/", "./", "~/")) and (
            not is_default(value, name))
    return _token(m)


# Header names that carry a credential: X-API-Key, api-key, X-Auth-Token, Private-Token, X-Vault-Token,
# Ocp-Apim-Subscription-Key... (a vendor word or two may come first); `X-Idempotency-Key`, `X-Cache-Key` do not.
_HEADER_NAME = (
    r"(?P<name>(?i:(?:[a-z0-9]+-){0,3}(?:api[_-]?key|apikey|api[_-]?token|auth[_-]?token|access[_-]?token"
    r"|private[_-]?token|session[_-]?token|security[_-]?token|subscription[_-]?key|auth[_-]?key|app[_-]?key"
    r"|application[_-]?key|secret[_-]?key|master[_-]?key|client[_-]?secret)"
    r"|x-(?:[a-z0-9]+-){0,3}(?:token|secret|auth)))"
)
_HEADER_ANCHORS = ("key", "token", "secret", "auth")  # every _HEADER_NAME ends in one
# Possessive (`{8,}+`): a run is taken whole or not at all, so a long run of value characters costs one pass.
# A bracket between value characters is the value's own (`abc)def`: the rest must not stay in the note); one
# at its end closes the code or prose around it.
_HEADER_VALUE = r"(?P<value>(?:[A-Za-z0-9._~+/=:-]|[()](?=[A-Za-z0-9._~+/=:-])){8,}+)"


def _word_start(m: re.Match) -> bool:
    """The match starts a word (`curl`, not `libcurl` or `my-curl`): patterns start with their literal, which
    the regex engine finds fastest, and leave this test to the check."""
    start = m.start()
    return not start or not (m.string[start - 1].isalnum() or m.string[start - 1] in "_.-")


def _command_password(m: re.Match) -> bool:
    return _word_start(m) and _password(m)


# (kind, anchors, regex, check), as credentials._DETECTORS; lower-case anchors are looked for in lower case.
DETECTORS = [
    ("basic-auth", ("basic",),
     r"(?i:\bbasic)[ \t]+(?P<value>[A-Za-z0-9+/]{8,}+={0,2}+)(?![A-Za-z0-9+/=])", _basic),
    # `-u user` (prompts), `-u :` and `-u $USER:$TOKEN` hold no password.
    ("basic-auth", ("curl",),
     r"curl(?:\.exe)?\b" + _SAME_COMMAND + r"\s(?:-u[ \t]*|--user(?:[ \t]+|=))"
     r"""(?P<q>['"])?[^\s:'"]*:(?P<value>(?(q)[^'"\n]{1,200}|[^\s'"`;|&)]{1,200}))(?(q)(?P=q))""",
     _command_password),
    ("auth-header", ("authorization",),
     r"(?<![A-Za-z0-9_-])(?i:authorization)(?P<nq>[\"'])?[ \t]*[:=][ \t]*(?P<vq>[\"'])?"
     r"(?:(?P<scheme>[A-Za-z][A-Za-z0-9-]{1,30})[ \t]+)?" + _HEADER_VALUE, _authorization),
    ("auth-header", _HEADER_ANCHORS,
     r"(?<![A-Za-z0-9_-])" + _HEADER_NAME + r"(?P<nq>[\"'])?[ \t]*:[ \t]*(?P<vq>[\"'])?" + _HEADER_VALUE,
     _key_header),
    ("azure-key", ("accountkey", "sharedaccesskey"),
     r"(?<![A-Za-z0-9])(?i:AccountKey|SharedAccessKey)[ \t]*=[ \t]*(?P<value>[A-Za-z0-9+/]{20,}+={0,2}+)"
     r"(?![A-Za-z0-9+/=])", _account_key),
    ("azure-sas", ("sig=",),
     r"sig=(?P<value>[A-Za-z0-9%+/=_-]{16,}+)", lambda m: _word_start(m) and _sas(m)),
    ("url-token", ("token=", "key=", "secret=", "password=", "passwd="),
     r"[?&#;](?P<name>(?i:access_token|token|auth_token|api_key|apikey|api-key|private_token|client_secret"
     r"|refresh_token|id_token|password|passwd|secret|x-amz-security-token))"
     r"=(?P<value>[^&\s#\"'<>()\[\]`]{1,1000})", _query_value),
    ("docker-auth", ('"auth"', '"identitytoken"', '"registrytoken"'),
     r"\"(?P<name>(?i:auth|identitytoken|registrytoken))\"[ \t]*:[ \t]*\"(?P<value>[A-Za-z0-9+/=._-]{8,}+)\"",
     _docker),
]

_PASSWORD_VARIABLES = ("PASSWORD=", "PASSWD=", "SSHPASS=", "MYSQL_PWD=", "REDISCLI_AUTH=", "_TOKEN=", "_SECRET=",
                       "_KEY=", "_APIKEY=")

# After the generic assignment detectors, which already name `--password=<value>` and `PASSWORD=...` at
# the end of a line: these add the short values and the ones a command follows.
FALLBACKS = [
    ("command-password", ("mysql", "mariadb"),
     r"(?:mysql(?:dump|admin|import|check|show|pump|sh|slap|binlog)?|mariadb(?:-dump|-admin)?)\b"
     + _SAME_COMMAND + r"\s(?:-p(?=\S)|--password=)" + _ARG, _command_password),
    ("command-password", ("sshpass",),
     r"sshpass\b" + _SAME_COMMAND + r"\s-p[ \t]*" + _ARG, _command_password),
    ("command-password", ("login",),
     r"(?:docker|podman|nerdctl|helm(?:[ \t]+registry)?)[ \t]+login\b" + _SAME_COMMAND
     + r"\s(?:-p|--password)(?:[ \t]+|=)" + _ARG, _command_password),
    ("command-password", ("redis-cli",),
     r"redis-cli\b" + _SAME_COMMAND + r"\s(?:-a|--pass)[ \t]+" + _ARG, _command_password),
    # `PGPASSWORD=... psql`, `DEPLOY_TOKEN=... ./deploy.sh`: a variable set for the command that follows.
    ("command-password", _PASSWORD_VARIABLES,
     r"(?<![^\s;&|(`])(?P<name>(?:[A-Z][A-Z0-9_]*_)?(?:PASSWORD|PASSWD)|PGPASSWORD|SSHPASS|MYSQL_PWD"
     r"|REDISCLI_AUTH|[A-Z][A-Z0-9_]*_(?:TOKEN|SECRET|API_KEY|APIKEY|ACCESS_KEY|SECRET_KEY))="
     + _ARG + r"(?=[ \t]*$|[ \t]*[;&|]|[ \t]+[A-Za-z./~])", _env_prefix),
]


# Past this many candidate lines, one run of a pattern over the whole text costs less than a run per line plus
# finding them; the measured crossover is lower (bench/scan_speed.py; docs/benchmarks.md).
MAX_SITES = 300


def next_line(text: str, pos: int) -> int:
    """Where the line after the one holding `pos` starts (past the end if none): a site found on a line makes
    the rest of that line's sites moot."""
    end = text.find("\n", pos)
    return len(text) if end == -1 else end + 1


def _finds(needles: tuple[str, ...]) -> Callable[[str, str], list[int] | None]:
    """Where any of `needles` occurs, once a line (in the lower-cased text for lower-case needles)."""
    def sites(text: str, lowered: str) -> list[int] | None:
        out: list[int] = []
        for needle in needles:
            hay = lowered if needle.islower() else text
            pos = hay.find(needle)
            while pos != -1:
                if len(out) == MAX_SITES:
                    return None
                out.append(pos)
                pos = hay.find(needle, next_line(hay, pos))
        return out

    return sites


def _header_sites(text: str, lowered: str) -> list[int] | None:
    """Where a key-header name can end before `:`: an anchor, then a closing quote or blanks, then `:` (so prose
    that says "token" or "key" runs nothing)."""
    out: list[int] = []
    for anchor in _HEADER_ANCHORS:
        pos = lowered.find(anchor)
        while pos != -1:
            if lowered[pos + len(anchor) : pos + len(anchor) + 4].lstrip("\"' \t")[:1] == ":":
                if len(out) == MAX_SITES:
                    return None
                out.append(pos)
                pos = next_line(lowered, pos) - 1
            pos = lowered.find(anchor, pos + 1)
    return out


# Detectors that match within one line, by pattern: where in a text they can start, which is where their
# anchors are (for key headers, an anchor before `:`); None: in too many places to be worth listing.
# `credentials.scan` runs each only over the lines holding such a place, so a long note pays for its few
# candidate lines, not for the pattern tried at every character.
_LINE_BOUND = [("basic",), ("authorization",), _HEADER_ANCHORS, ("accountkey", "sharedaccesskey"),
               ('"auth"', '"identitytoken"', '"registrytoken"'), _PASSWORD_VARIABLES]
SITES = {pattern: _header_sites if anchors == _HEADER_ANCHORS else _finds(anchors)
         for _, anchors, pattern, _ in DETECTORS + FALLBACKS if anchors in _LINE_BOUND}


def lines_at(text: str, positions: list[int]) -> list[tuple[int, int]]:
    """The lines (start, end) holding `positions`, each once, in order."""
    windows: list[tuple[int, int]] = []
    for pos in sorted(positions):
        if windows and pos < windows[-1][1]:
            continue
        end = text.find("\n", pos)
        windows.append((text.rfind("\n", 0, pos) + 1, len(text) if end == -1 else end))
    return windows
