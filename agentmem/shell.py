"""How a printed helper command is written for a POSIX shell: quoted words, the absolute helper first.

Every `agentmem ...` line the helper prints for a person or an agent runs exactly as
printed (INV printed-commands-run): `agentmem` is not on PATH, so a line names the
helper by its absolute command (`paths.helper_command`) and quotes each word that
needs it. A word in capitals (`PROJECT`) stands for the one thing left to choose, where
agentmem must not guess. Front ends call this through `errors.Command.line`; no `shlex` import, since
the per-turn commands print such lines.
"""

from agentmem.paths import helper_command

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; no __future__ either (the prompt hook)
if TYPE_CHECKING:
    from collections.abc import Iterable


def word(text: str) -> str:
    """`text` quoted for a POSIX shell when it needs it."""
    if text and all((c.isascii() and c.isalnum()) or c in "@%+=:,./-_" for c in text):
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"


def join(words: "Iterable[str]") -> str:
    """The command `words` as one line for a POSIX shell."""
    return " ".join(word(w) for w in words)


def line(*args: str, helper: list[str] | None = None) -> str:
    """A command line running this helper (or `helper`) with `args`, exactly as a shell should be given it."""
    return join([*(helper or helper_command()), *args])
