"""Who wrote a note: the `author` a save stamps on it (issue X, item 5).

The member's name, not the tool's (`agent` names the agent CLI and machine). In order:
1. `author` in config.toml, when set;
2. on a bucket store, the Hub user name of this machine's token (store/whoami.py): kept in the machine
   folder after the first answer, asked at most once per login and only within what is left of the
   save's own network budget (never more than CHECK_SECONDS of it);
3. else this machine's login name, made to fit the name rule (`config.AGENT_NAME`): on a folder store
   that is the name; on a bucket store it stands in, silently, when the Hub cannot say (offline, no
   login, no answer in time), since a note must never wait for a name. Set `author` to choose one.
"""

from __future__ import annotations

import os

from agentmem import patterns

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from agentmem.config import Config
    from agentmem.store.timeout import Deadline

# Seconds of a save's budget the Hub's user-name check may take: a stalled Hub must leave the upload
# most of its budget (the check is one small request, milliseconds when the Hub answers at all).
CHECK_SECONDS = 2.0
_NOT_NAME = patterns.compile(r"[^A-Za-z0-9._@+-]+")
UNKNOWN = "unknown"


def login_name() -> str:
    """This machine's login name, made to fit the author rule (letters, digits, `._@+-`, 64 at most)."""
    name = _NOT_NAME.sub("-", _login()).lstrip("._@+-")[:64].rstrip("-")
    return name or UNKNOWN


def _login() -> str:
    """What getpass.getuser() answers, in its order (these variables, then the password database), without
    importing getpass, which brings termios with it: 4 M instructions of every save (docs/benchmarks.md)."""
    for variable in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        value = os.environ.get(variable)
        if value:
            return value
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_name
    except (KeyError, OSError, ImportError, AttributeError):  # no such entry; no pwd or getuid (Windows)
        return ""


def author_of(machine: str | os.PathLike, cfg: Config, deadline: Deadline | None = None) -> str:
    """The author a note saved now under `cfg` carries (the rule in this module's docstring)."""
    if cfg.author:
        return cfg.author
    if cfg.store.kind == "bucket":
        from agentmem.store import whoami

        left = CHECK_SECONDS if deadline is None else min(CHECK_SECONDS, deadline.left())
        name = whoami.user_name(machine, left)
        if name:
            fitted = _NOT_NAME.sub("-", name)[:64]
            if fitted and fitted[0].isalnum():
                return fitted
    return login_name()
