"""Telling a value that stands for a secret from one that is a secret.

Documentation, templates and code put a stand-in where a credential goes: `<token>`, `${VAR}`, `$PGPASSWORD`,
`{{ secrets.X }}`, `xxxx`, `changeme`, `YOUR_API_KEY`, a call that reads it (`os.environ[...]`), or a word that
describes it (`required`, `SecretStr`). Every detector that keys on where a value is put (an assignment, an
option, a header, a URL parameter) asks these questions before calling the value a credential; the patterns are
compiled on first use, so a text without such a place costs nothing here.

`changeme` and its kin count as stand-ins (2026-12-01, issue 25): they are what every compose file and README
writes for "put your password here", and refusing them would refuse most setup notes; a service actually
left on `changeme` is a misconfiguration to fix, not a secret a note can leak.
"""

from __future__ import annotations

import re

# Values that stand for a secret rather than being one.
PLACEHOLDER_RX = (
    r"""^(?:<[^>]*>|\$\{[^}]*\}|\$\(?[A-Za-z_][A-Za-z0-9_]*\)?|\{\{.*\}\}|%\(?[A-Za-z_]*\)?s|\{[A-Za-z_]*\}"""
    r"""|%[A-Za-z_][A-Za-z0-9_]*%|[*&][A-Za-z_][A-Za-z0-9_-]*)$"""  # %WINDOWS_VAR%, a YAML alias or anchor
    r"""|x{3,}|X{3,}|\*{3,}|\.{3}|…|redacted|example|changeme|change_me|change-me|placeholder"""
    r"""|your[_-]?|my[_-]?(?:secret|token|password|key)|dummy|sample|fake|test|todo|fixme"""
    r"""|os\.environ|getenv|environ\[|env\(|secrets\.|settings\.|config\.|process\.env|vault"""
    r"""|^(?:pass|password|passwd|pwd|secret|token|key|apikey|user|username|none|null|true|false|empty|bar)$"""
)
# Words a config, schema or log puts where a password goes (`password: required`, `"password": "expired"`):
# a description, not a value.
DESCRIPTIVE = frozenset(
    "string str bool boolean required optional hidden masked omitted unset disabled enabled prompt prompted "
    "interactive generated random encrypted hashed plaintext inherit inherited default sensitive secretstr "
    "undefined nullable readonly writeonly expired invalid missing incorrect wrong weak strong changed valid "
    "locked unknown revoked rotated protected provided supplied stored".split()
)

# Defaults every README and compose file prints (`POSTGRES_PASSWORD=postgres`, `MYSQL_ROOT_PASSWORD=root`): no
# more a secret than `changeme`. A value that repeats a word of its own name is one too.
DEFAULTS = frozenset("admin root guest postgres mysql redis demo default local user dev development".split())

_helpers: dict[str, re.Pattern] = {}


def rx(name: str, source: str) -> re.Pattern:
    """`source` compiled (case-insensitive) once, kept under `name`."""
    found = _helpers.get(name)
    if found is None:
        found = _helpers[name] = re.compile(source, re.IGNORECASE)
    return found


def has_letter_and_digit(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def is_placeholder(value: str) -> bool:
    """A stand-in (see PLACEHOLDER_RX), or filler with three distinct characters or fewer."""
    return bool(rx("placeholder", PLACEHOLDER_RX).search(value)) or len(set(value)) <= 3


def names_no_password(value: str) -> bool:
    """For a password, which may be short and plain (`pw`, `hunter`): only a stand-in or one repeated character
    (`***`, `xxxxxx`) is not one."""
    return bool(rx("placeholder", PLACEHOLDER_RX).search(value)) or (len(value) >= 3 and len(set(value)) == 1)


def is_described(value: str) -> bool:
    """`required`, `SecretStr`, `Optional[str]`: what a schema or a type annotation puts there."""
    if value.lower().rstrip("?!") in DESCRIPTIVE:
        return True
    return bool(rx("type", r"(?-i:[A-Z][a-z]+(?:[A-Z][a-z]+)*(?:\[[A-Za-z_., \[\]|]*\])?)").fullmatch(value))


def is_name_slug(value: str) -> bool:
    """`my-tls-secret-2`, `default-token-x7k2p`: a resource's name (words, numbers, a short suffix), not a key."""
    parts = value.split("-")
    if len(parts) < 2 or not all(parts):
        return False
    *head, last = parts
    words = all(p.isalpha() and p.islower() or p.isdigit() for p in head)
    return words and last.isascii() and last.isalnum() and last.lower() == last and (
        last.isalpha() or last.isdigit() or len(last) <= 5)


def is_default(value: str, name: str = "") -> bool:
    """A well-known default (`postgres`, `root`), or a word of the credential's own name."""
    lowered = value.lower()
    return lowered in DEFAULTS or (bool(name) and lowered in re.split(r"[^a-z0-9]+", name.lower()))


def is_hashed(value: str) -> bool:
    """A password hash in crypt's notation (`$2b$12$...`, `$argon2id$...`, `user:$apr1$...`): not the password."""
    return bool(rx("hashed", r"\$(?:apr1|2[abxy]?|argon2(?:id|i|d)|[156y]|sha1|md5|pbkdf2[-_a-z0-9]*|scrypt)\$")
                .search(value))
