"""Credentials given to a credential-named variable, key, member or option, anywhere on a line.

A name is judged by its words, whatever the spelling: `db_password`, `dbPassword`, `DB-PASSWORD`,
`x-api-key`, `secretAccessKey`, `spring.datasource.password`, `_authToken` and `--db-password` all end in a
credential word (password, passwd, pass, pwd, passphrase; secret; token; a key qualified as api, access,
secret, private, client...). A trailing `_value`, `_base` or `_data` does not change what a name holds
(`SECRET_KEY_BASE`, kubeconfig's `client-key-data`); any other last word does (`token_type`,
`password_file`, `secret_name`, `api_key_header` name something else).

The value may follow `=`, `:`, `=>`, `:=` or `==` (a JSON or YAML member, a config line, code, a `key=value`
pair in a log line or a libpq string), or a space after a `--name` option; quoted or bare, of any length.
It is a credential unless `placeholders.py` calls it a stand-in, or it is code that names the value instead
of holding it (`settings.SECRET_KEY`, `parts[2]`, `getpass()`, `dbPassword`, `API_KEY`), a path, a URL, or a
default every README prints (`POSTGRES_PASSWORD=postgres`). A token or key needs letters and digits and
eight characters; a password needs four, and one that is a plain word met in prose after a colon
(`password: forgotten, reset it`) is a sentence, not a password.

Found by `str.find` of each credential word, so text that never says one costs a few searches; each
finding is the value only (`password = "[REDACTED:password-assignment]"`).
"""

from __future__ import annotations

from agentmem.safety.contexts import public_badge_at
from agentmem.safety.placeholders import (
    has_letter_and_digit,
    is_default,
    is_described,
    is_hashed,
    is_name_slug,
    is_placeholder,
    rx,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the scanner is on the save path)
if TYPE_CHECKING:
    from collections.abc import Callable

KIND = "password-assignment"
COMMAND_KIND = "command-password"  # `API_TOKEN=... ./deploy.sh`: a variable set for the command that follows

# Pieces one of which every credential name holds (lower-case ones looked for in the lower-cased text);
# `pwd` only after another word (`MYSQL_PWD`, `dbPwd`): alone it is the working directory.
ANCHORS = ("pass", "secret", "token", "key", "_pwd", "Pwd")

_PASSWORD_WORDS = ("password", "passwd", "passphrase", "passcode")
# Words that qualify `key` as a credential (`api_key`, `accessKey`); `cache_key`, `public_key` stay names.
_KEY_QUALIFIERS = frozenset(
    "api access secret private auth master encryption signing client app application account subscription "
    "service session hmac shared webhook admin bot license".split())
_GLUED_KEYS = tuple(q + "key" for q in ("api", "access", "secret", "private", "auth", "master", "signing", "client"))
# Words before `token`/`secret` that make it something else: a position in a listing, a form's nonce, a
# tokenizer's special token, a count.
_NOT_CREDENTIAL = frozenset(
    "page next prev previous continuation sync cursor csrf xsrf max min num total input output prompt completion "
    "context bos eos pad unk mask sep cls start end stop special image sequence no is has show use".split())
_TRAILERS = frozenset(("value", "base", "data", "string", "str", "raw", "plain"))
_FILE_ENDINGS = (".key", ".pem", ".crt", ".cer", ".p12", ".pfx", ".jks", ".json", ".txt", ".env", ".yaml",
                 ".yml", ".gpg", ".asc", ".der")
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")
_FORWARD = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-")  # what may follow the anchor in the same name
_STOPS = frozenset(",;&")  # end a bare value: list items, connection-string fields, query parameters
_CLOSERS = {")": "(", "]": "[", "}": "{", ">": "<"}
_LOOK_BACK = 512  # how far before a name its enclosing brackets are counted (a call spread over a few lines)


def words(name: str) -> list[str]:
    """The lower-cased words of a name in any spelling: `dbPassword` -> db, password; `APIKey` -> api, key."""
    found = rx("words", r"(?-i:[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+)").findall(name)
    return [w.lower() for w in found if not w.isdigit()]


def credential_class(name: str) -> str | None:
    """"password" or "secret" if `name` names a credential, else None."""
    parts = words(name)
    while len(parts) > 1 and parts[-1] in _TRAILERS:
        parts.pop()
    if not parts:
        return None
    last, before = parts[-1], (parts[-2] if len(parts) > 1 else "")
    if last == "pass" or (last == "pwd" and before):  # `pwd` alone is the working directory
        return "password"
    if last.endswith(_PASSWORD_WORDS):  # `dbpassword`, `MYSQLPASSWORD` glued
        return "password"
    for word in ("secret", "secrets", "token"):
        if last.endswith(word):
            qualifier = last[: -len(word)] or before
            return None if qualifier in _NOT_CREDENTIAL else "secret"
    if last in ("key", "keys"):
        return "secret" if before in _KEY_QUALIFIERS else None
    if last == "apikey" or last.endswith(_GLUED_KEYS):
        return "secret"
    return None


def find(text: str, lowered: str, holds: Callable[[str], bool]) -> list[tuple[int, int, str]]:
    """(start, end, kind) of each credential value assigned to a credential name in `text`."""
    out: list[tuple[int, int, str]] = []
    if len(lowered) != len(text):  # `İ` lower-cases to two characters: positions must be the text's own
        lowered = text.translate(_ASCII_LOWER)
    done: set[int] = set()  # where each name looked at ends: `secretAccessKey` holds two anchors, read once
    for anchor in ANCHORS:
        if not holds(anchor):
            continue
        hay = lowered if anchor.islower() else text
        pos = hay.find(anchor)
        while pos != -1:
            end = pos + len(anchor)
            limit = end + 16
            while end < limit and end < len(lowered) and lowered[end] in _FORWARD:
                end += 1
            if end not in done and _may_assign(lowered, pos, end):
                done.add(end)
                found = _assignment(text, pos, end)
                if found is not None:
                    value_start, value_end, end, kind = found
                    if kind:
                        out.append((value_start, value_end, kind))
            pos = hay.find(anchor, end)
    out.sort()
    return out


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _may_assign(lowered: str, pos: int, end: int) -> bool:
    """A cheap look past a name: `=` or `:` must come next (after a closing quote or bracket and blanks), or
    a blank after an option (`--password X`)."""
    rest = lowered[end : end + 40]
    if rest.lstrip("\"']").lstrip(" \t")[:1] in ("=", ":"):
        return True
    if rest[:1] not in (" ", "\t"):
        return False
    start = pos
    while start > 0 and pos - start < 64 and lowered[start - 1] in _NAME_CHARS:
        start -= 1
    return lowered.startswith("--", start)


def _assignment(text: str, pos: int, name_end: int) -> tuple[int, int, int, str] | None:
    """(value start, value end, where to look next, kind) of a credential given to the name around `pos`;
    None when there is none. Where to look next is past the value whether or not it is one, so a long run
    of assignments (`?token=?token=...`) is read once."""
    start = pos
    while start > 0 and pos - start < 64 and text[start - 1] in _NAME_CHARS:
        start -= 1
    option = text.startswith("--", start)
    name = text[start:name_end].lstrip("-.")
    cls = credential_class(name)
    if cls is None:
        return None
    if start and text[start - 1] in "?&#" and public_badge_at(text, start):
        return None  # a Codecov badge's graph token, made to be published
    # After the name: the quote that closed it (`"api_key":`), a `]` (`ENV["TOKEN"] =`), blanks, the operator.
    at = name_end
    opened = text[start - 1] if start else ""
    if opened and opened in "\"'" and text.startswith(opened, at):
        at += 1
    if text.startswith("]", at):
        at += 1
    while at < len(text) and text[at] in " \t":
        at += 1
    sep = ""
    for op in ("=>", ":=", "==", "=", ":"):
        if text.startswith(op, at):
            sep = op
            break
    if sep:
        after = text[at + len(sep) : at + len(sep) + 1]
        if after in ("=", "~") or (sep == ":" and after == ":"):  # `===`, `=~`, `::`
            return None
        at += len(sep)
        if option and sep == "=" and text[at : at + 1] in (" ", "\t"):
            return None  # `--password= x`: the option given nothing, then another word
    elif not (option and at > name_end):  # only an option takes its value after a blank: `--password X`
        return None
    while at < len(text) and text[at] in " \t":
        at += 1
    value_start, value_end, quoted = _value(text, at, start)
    if value_end <= value_start:
        return None
    value = text[value_start:value_end]
    if sep == "" and value.startswith("-"):
        return None  # `--token --verbose`: the next option, not a value
    past = value_end + quoted
    rest = text[value_end + quoted : value_end + quoted + 64].split("\n", 1)[0].strip()
    if not _is_credential(cls, name, value, quoted, sep, rest):
        return value_start, value_start, past, ""
    kind = KIND
    if sep == "=" and (rest[:1].isalpha() or rest.startswith(("./", "/", "~/"))) and _starts_command(text, start):
        kind = COMMAND_KIND  # `PGPASSWORD=... psql`: the environment of the command that follows
    return value_start, value_end, past, kind


def _value(text: str, at: int, name_start: int) -> tuple[int, int, int]:
    """(start, end, quoted: 1 for a quoted value) of the value starting at `at`, within its line, given to the
    name starting at `name_start`."""
    if at < len(text) - 1 and text[at] in "bBrRfFuU" and text[at + 1] in "\"'":
        at += 1  # b"...", r'...', f"..."
    quote = text[at : at + 1]
    if quote in ("\"", "'", "`"):
        m = rx("quoted" + quote, "(?-i:" + quote + "([^" + quote + "\n]*)" + quote + ")").match(text, at)
        if m is not None:
            return m.start(1), m.end(1), 1
        at += 1
    # Bare: up to a blank or a quote, and before a `,`, `;` or `&` (list items, connection-string fields).
    bare = rx("bare", r"[^\s\"'`,;&]*+").match(text, at)
    end = bare.end() if bare else at
    # A closing bracket with no opener inside the value closes the code around it (`connect(password=...)`)
    # only if that code opened one before the name; else it is the value's own last character, and redacted.
    before = text[max(0, name_start - _LOOK_BACK) : name_start]
    opened = {c: before.count(c) - before.count(closer) for closer, c in _CLOSERS.items()}
    while end > at and text[end - 1] in _CLOSERS:
        opener = _CLOSERS[text[end - 1]]
        if opener in text[at : end - 1] or opened[opener] <= 0:
            break
        opened[opener] -= 1
        end -= 1
    return at, end, 0


def _is_credential(cls: str, name: str, value: str, quoted: int, sep: str, rest: str) -> bool:
    if is_placeholder(value) or is_described(value.rstrip("?")):
        return False
    if value[0] in "$%{<[(&*#@!|>" and not (cls == "password" and quoted and value[0] in "#@!&*%"):
        return False  # a variable, a template, a YAML anchor or block, a list; a quoted password may start so
    if value.startswith(("/", "./", "~/", "../")) or "://" in value or value.lower().endswith(_FILE_ENDINGS):
        return False
    if not quoted and _is_reference(value):
        return False
    if is_default(value, name) or value.lower() in words(name) or is_hashed(value):
        return False
    if quoted and any(c.isspace() for c in value):
        return False  # a message
    # A plain word after a colon with more words after it is a sentence (`Password: forgotten, reset it`).
    prose = sep == ":" and not quoted and bool(rest) and not rest.startswith("#")
    if prose and value.isalpha() and (value.islower() or value.istitle()):
        return False
    if cls == "password":
        # `password = key_password` names a variable
        return len(value) >= 4 and not rx("snake", r"(?-i:[a-z]+(?:_[a-z0-9]+)+)").fullmatch(value)
    return len(value) >= 8 and has_letter_and_digit(value) and not is_name_slug(value)


def _is_reference(value: str) -> bool:
    """Code that names the value: a dotted name, a call, an index, or an identifier that itself says
    password, secret, token or key (`dbPassword`, `API_KEY`, `self.token`)."""
    code = r"(?-i:[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*|\[[^\]]*\]+|\([^)]*\)*)*[\[(]?)"
    # A digit inside a word (`B2vjlEr.oq`) is random material, not a name.
    if rx("code", code).fullmatch(value) and any(c in value for c in ".([") and not rx(
            "digit-in-word", r"[0-9][A-Za-z]").search(value):
        return True
    # A call; but a closing bracket with a letter or digit glued after it (`ab(cd)ef`) is no code's.
    if "(" in value and rx("call", r"(?-i:[A-Za-z_][\w.]*\()").match(value) and not rx(
            "glued-after-close", r"\)\w").search(value):
        return True
    if rx("identifier", r"(?-i:[A-Za-z_][A-Za-z0-9_]*)").fullmatch(value) and ("_" in value or _camel(value)):
        return credential_class(value) is not None or any(w in value.lower() for w in ("pass", "secret", "token",
                                                                                       "key", "pwd", "auth"))
    return False


def _camel(value: str) -> bool:
    return any(a.islower() and b.isupper() for a, b in zip(value, value[1:]))


def _starts_command(text: str, start: int) -> bool:
    """The name is the first word of a command (line start, or after `;`, `&`, `|`, `(`): `NAME=x cmd`."""
    line_start = text.rfind("\n", 0, start) + 1
    before = text[line_start:start].rstrip(" \t")
    return (before == "" or before[-1] in ";&|(`") and text[start : start + 1].isupper()
