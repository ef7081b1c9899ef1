"""Files whose format makes a line a secret, known by their shape wherever they are pasted.

- `.netrc`: `machine HOST login USER password SECRET`, on one line or spread over several (curl, git, pip
  and Go read it), so `password` after a `machine` entry holds a password with no `=` or `:` before it.
- `.pgpass`: `host:port:database:user:password`, one line per server (PostgreSQL's clients read it): five
  colon-separated fields ending a line, whose first is a host name (letters or dots, or `*`) and second a
  port (or `*`), end in a password. `/etc/passwd` lines, times, IPv6 addresses and `host:port/path` do not have
  this shape.

Other formats are covered by the credential names they use (`assignments.py`): INI `password =` and
`pass =` lines, kubeconfig's `client-key-data`, a service account's `private_key` (a key block:
`keyblocks.py`), Docker's config.json (`contexts.py`). Each finding is the value only.
"""

from __future__ import annotations

import re

from agentmem.safety.placeholders import names_no_password

KIND_NAMES = {
    "netrc-password": "a password in a .netrc entry",
    "pgpass-password": "a password in a .pgpass line",
}
VALUE_ONLY = frozenset(KIND_NAMES)


def _password(value: str) -> bool:
    return len(value) >= 4 and not names_no_password(value) and not value.startswith(("$", "<", "{", "%"))


def _netrc(m: re.Match) -> bool:
    start = m.start()
    return (not start or not m.string[start - 1].isalnum()) and _password(m.group("value"))


def _pgpass(m: re.Match) -> bool:
    text = m.string
    line_start = text.rfind("\n", 0, m.start()) + 1
    # The host is the last word before the port: the line may begin with other words (`pasted: db:5432:...`).
    host = re.split(r"[\s`'\"(>]", text[line_start : m.start()])[-1]
    if not host or len(host) > 253 or not re.fullmatch(r"[A-Za-z0-9.*_\[\]-]+", host):
        return False
    if host != "*" and not any(c.isalpha() or c == "." for c in host):
        return False  # `10:15:...` is a time, `2001:db8:...` an address
    return _password(m.group("value").replace("\\:", ":"))


# (kind, anchors, regex, check), as credentials._DETECTORS.
DETECTORS = [
    ("netrc-password", ("machine",),
     r"machine[ \t]+\S+(?:\s+(?:login|account|port)[ \t]+\S+)*?\s+password[ \t]+(?P<value>[^\s`'\",;)]+)", _netrc),
    # Starts at the colon before the port, which the regex engine jumps to; the check reads the host before it.
    ("pgpass-password", (":",),
     r":(?:[0-9]{1,5}|\*):[^:\s]+:[^:\s]+:(?P<value>(?:[^:\s\\]|\\.)+)[ \t]*$", _pgpass),
]
NEEDS = {"netrc-password": ("password",)}
