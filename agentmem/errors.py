"""Every way an agentmem operation can fail, each with its own exit status, and what to do next.

Library code raises these; each front end renders them (`agentmem/render.py`): the
CLI as one line on stderr and the class's exit status (`cli/main.py`), the MCP server
as a tool error of the same kind (`mcp/server.py`). Messages say what failed and what
to do, and never contain a credential. The table of statuses is docs/cli.md's "Exit
statuses", generated from this module.

What to do next is data, not a command line: a hint is words, or a `NextStep`, words
with the helper `Command`s to run in them, which each front end spells its own way
(the CLI as a quoted shell line naming the absolute helper, the MCP server as its
tool call where it has one). For example::

    raise NotFound(f"no pending note with ID {note_id} on this machine",
                   hint=NextStep("see `{}`", Command("pending")))

One of a command's options is data too (`Option("redact")`: the CLI says `--redact`, the
MCP server names its tool's argument, and leaves out a step its tools do not offer), and
a message may name one: `InvalidInput(NextStep.of(Option("limit"), " must be between 1 and 200"))`.
An error's `next` is its steps as a list; the front ends put them in their JSON and tool
errors (`render.next_data`). A warning is an `AgentmemWarning`: its line, its class, its `next`.

An OS error becomes one of these in one place, `from_os_error`.
"""

from __future__ import annotations

# Exit statuses. Each failure class below carries one; 0 and 10 are outcomes, not failures.
EXIT_OK = 0
EXIT_UNEXPECTED = 1
EXIT_INVALID = 2
EXIT_NOT_CONFIGURED = 3
EXIT_NOT_FOUND = 4
EXIT_NOT_AUTHENTICATED = 5
EXIT_NO_ACCESS = 6
EXIT_OFFLINE = 7
EXIT_CONFLICT = 8
EXIT_PUBLIC_BUCKET = 9
EXIT_PENDING = 10  # the note is safe locally but the shared store has not confirmed it
EXIT_REMOTE_ERROR = 11
EXIT_ATTENTION = 12  # the command ran and found what needs a person (doctor, audit, import: see EXIT_MEANINGS)

# What each status means, for people (docs/cli.md is generated from this).
EXIT_MEANINGS = {
    EXIT_OK: "done (for `save`: confirmed in the shared store)",
    EXIT_UNEXPECTED: "unexpected failure (for `bucket verify`: the note was not read back or found)",
    EXIT_INVALID: "invalid input (bad arguments, a malformed note or config file, a credential in a note)",
    EXIT_NOT_CONFIGURED: "not configured (no store, or the directory maps to no project)",
    EXIT_NOT_FOUND: "not found",
    EXIT_NOT_AUTHENTICATED: "not authenticated (no Hugging Face token, or a rejected one)",
    EXIT_NO_ACCESS: ("no access (read-only token, someone else's bucket, a file of yours made read-only, "
                     "a machine folder this process may not write)"),
    EXIT_OFFLINE: "offline (the store could not be reached in time)",
    EXIT_CONFLICT: "conflict (different bytes at an append-only path; a differing installed skill without `--replace`)",
    EXIT_PUBLIC_BUCKET: "the bucket is public (agentmem refuses it and never changes its visibility)",
    EXIT_PENDING: "saved locally, upload pending",
    EXIT_REMOTE_ERROR: "the store answered with an error (5xx, malformed reply)",
    EXIT_ATTENTION: ("the command ran and found something that needs a person (`doctor`: a check failed; "
                     "`audit`: a note in the store holds a credential; `import`: an item was refused)"),
}


TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Callable

    # A front end's own name for a helper command or option (the MCP server's tool call, its tool's
    # argument), or None: the command line, the flag.
    ToolName = Callable[["Command | Option"], str | None]


class Command:
    """A helper command to run, as data: the words after the helper, e.g. `Command("save", "--retry", ID)`.

    `helper`: the helper command to name instead of this process's own (setup names the one it
    records). `line()` is the command as a shell runs it.
    """

    __slots__ = ("args", "helper")

    def __init__(self, *args: str, helper: list[str] | None = None):
        self.args = args
        self.helper = helper

    def line(self) -> str:
        """The command line, quoted for a POSIX shell, naming the absolute helper."""
        from agentmem import shell

        return shell.line(*self.args, helper=self.helper)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Command) and (self.args, self.helper) == (other.args, other.helper)

    def __hash__(self) -> int:
        return hash(self.args)

    def __repr__(self) -> str:
        return f"Command{self.args!r}"


class Option:
    """One of a helper command's options, as data: `Option("redact")`, `Option("mode", "ranked")`.

    The CLI spells it as its flag (`line()`: `--mode ranked`); the MCP server as its tool's argument of
    that name, where a tool takes one. `value` is shown as given (a placeholder such as PROJECT, or a value).
    """

    __slots__ = ("name", "value")

    def __init__(self, name: str, value: str | None = None):
        self.name = name
        self.value = value

    def line(self) -> str:
        flag = "-" * 2 + self.name
        return flag if self.value is None else f"{flag} {self.value}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Option) and (self.name, self.value) == (other.name, other.value)

    def __hash__(self) -> int:
        return hash((self.name, self.value))

    def __repr__(self) -> str:
        return f"Option({self.name!r}, {self.value!r})"


class NextStep:
    """What to do next: `words` with `{}` where each of `commands` (Commands or Options) goes, in order.

    `text(tool)` spells each command: as the front end's own name for it when `tool` gives one
    (dropping the backticks the words put around a command line), else as its command line.
    `NextStep.of(*pieces)` builds one from its pieces (words and commands in order), for words that
    hold someone's values, where a `{}` must stay as written.
    """

    __slots__ = ("pieces",)

    def __init__(self, words: str, *commands: Command | Option):
        parts = words.split("{}")
        if len(parts) != len(commands) + 1:
            raise ValueError(f"{words!r} has room for {len(parts) - 1} commands, not {len(commands)}")
        self.pieces: list[str | Command | Option] = [parts[0]]
        for command, after in zip(commands, parts[1:]):
            self.pieces += [command, after]

    @classmethod
    def of(cls, *pieces: str | Command | Option | NextStep) -> NextStep:
        step = cls("")
        for piece in pieces:
            if isinstance(piece, NextStep):  # another step's words, in its place
                step = cls.of(*step.pieces, *piece.pieces)
            elif isinstance(piece, str) and isinstance(step.pieces[-1], str):
                step.pieces[-1] += piece
            else:
                step.pieces += [piece] if isinstance(piece, str) else [piece, ""]
        return step

    @property
    def commands(self) -> list[Command]:
        return [p for p in self.pieces if isinstance(p, Command)]

    @property
    def options(self) -> list[Option]:
        return [p for p in self.pieces if isinstance(p, Option)]

    def text(self, tool: ToolName | None = None) -> str:
        out: list[str] = []
        untick = False  # a tool's name replaced a command in backticks: drop the closing one too
        for piece in self.pieces:
            if isinstance(piece, str):
                out.append(piece[1:] if untick and piece.startswith("`") else piece)
                untick = False
                continue
            named = tool(piece) if tool is not None else None
            if named is None:
                out.append(piece.line())
                continue
            if out[-1].endswith("`"):
                out[-1], untick = out[-1][:-1], True
            out.append(named)
        return "".join(out)

    def then(self, more: str | NextStep | None, sep: str = "; ") -> NextStep:
        """This step followed by `more` (words or another step)."""
        step = NextStep("")
        step.pieces = [*self.pieces]
        if more:
            tail = more.pieces if isinstance(more, NextStep) else [more]
            step.pieces[-1] = f"{step.pieces[-1]}{sep}{tail[0]}"
            step.pieces += tail[1:]
        return step

    def __str__(self) -> str:
        return self.text()


# What to do about an error or a warning: words, a step, or several of them in order.
Hint = str | NextStep | list[str | NextStep] | None


def steps(hint: Hint) -> list[NextStep]:
    """A hint as its list of steps (words alone become a step without commands)."""
    items = hint if isinstance(hint, list) else [hint]
    return [h if isinstance(h, NextStep) else NextStep.of(h) for h in items if h]


def steps_line(next_steps: list[NextStep], tool: ToolName | None = None,
               offered: Callable[[NextStep], bool] | None = None) -> str:
    """Steps as words in one line: `; ` between them, `, ` before an alternative (a step starting "or ").
    `offered`: whether the front end offers a step (the MCP server leaves out a flag its tools lack)."""
    out = ""
    for step in next_steps:
        if offered is not None and not offered(step):
            continue
        said = step.text(tool)
        out += (", " if said.startswith("or ") else "; ") + said if out else said
    return out


class AgentmemError(Exception):
    """Base class. `kind` is the stable machine-readable name used in --json output.

    `message`: what failed, as words or a `NextStep` (a message that names an option, `Option`).
    `hint`: what to do about it, as words, a `NextStep` (commands as data) or a list of them: `next`.
    """

    exit_code = EXIT_UNEXPECTED
    kind = "error"

    def __init__(self, message: str | NextStep, *, hint: Hint = None):
        self.words = message if isinstance(message, NextStep) else None
        super().__init__(str(message))
        self.message = str(message)
        self.hint = hint

    @property
    def next(self) -> list[NextStep]:
        """What to do next, as steps in order (empty: nothing to suggest)."""
        return steps(self.hint)

    def one_line(self, tool: ToolName | None = None, offered: Callable[[NextStep], bool] | None = None) -> str:
        """Message and hint as one line; `tool`: the front end's names for commands (see NextStep.text),
        `offered`: which steps it offers (see `steps_line`)."""
        message = self.words.text(tool) if self.words is not None else self.message
        hint = steps_line(self.next, tool, offered)
        text = message if not hint else f"{message} ({hint})"
        return " ".join(text.split())


class AgentmemWarning(str):
    """A warning: its line (a `str`, as `warnings` in every JSON has always held), its class (`kind`, stable,
    for a caller to match) and what to do (`hint`, as an error's; `next`: its steps). Subclasses name each
    kind of warning; the front ends render them (cli/main.py, mcp/tools.py)."""

    kind = "warning"
    hint: Hint

    def __new__(cls, message: str, *, hint: Hint = None) -> AgentmemWarning:
        self = super().__new__(cls, message)
        self.hint = hint
        return self

    @property
    def next(self) -> list[NextStep]:
        return steps(self.hint)


class StaleConfig(AgentmemWarning):
    """config.toml cannot be read as it stands (conflict markers): the last working copy is in use."""

    kind = "stale-config"


class BadSetting(AgentmemWarning):
    """A setting in config.toml is malformed: its default is in use."""

    kind = "bad-setting"


class PublicStore(AgentmemWarning):
    """The store became public: its notes can be read by anyone."""

    kind = "public-store"


class InvalidInput(AgentmemError):
    """Bad arguments, a malformed note, an unreadable config file."""

    exit_code = EXIT_INVALID
    kind = "invalid-input"


class NotConfigured(AgentmemError):
    """No machine setup, or the current directory maps to no project."""

    exit_code = EXIT_NOT_CONFIGURED
    kind = "not-configured"


class NotFound(AgentmemError):
    """A note, skill, object or bucket does not exist."""

    exit_code = EXIT_NOT_FOUND
    kind = "not-found"
    located: str | None = None  # a note found in another project than the one asked for (memory/locate.py)


class NotAuthenticated(AgentmemError):
    """No Hugging Face credentials, or credentials the Hub rejects."""

    exit_code = EXIT_NOT_AUTHENTICATED
    kind = "not-authenticated"


class NoAccess(AgentmemError):
    """Authenticated, but not allowed to do this (read-only token, someone else's bucket)."""

    exit_code = EXIT_NO_ACCESS
    kind = "no-access"


class NotWritable(NoAccess):
    """This process may not write the machine folder (an agent's sandbox, a read-only disk, permissions)."""

    kind = "not-writable"


UNWRITABLE_HINT = ("the agent's sandbox or the folder's permissions forbid it: in Codex run with "
                   "--sandbox workspace-write (agentmem setup lists the folder in "
                   "sandbox_workspace_write.writable_roots) or ask the user to approve running this command "
                   "outside the sandbox; elsewhere make the folder writable")


def cannot_write(exc: OSError) -> bool:
    """Whether `exc` is a write refused (read-only file system, permissions), not a broken disk."""
    import errno

    return exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM)


def from_os_error(exc: OSError, machine: str, *, nothing_saved: bool = False) -> AgentmemError:
    """An OS error that escaped a command, as the error it is: the one mapping every front end uses.

    A write refused inside the machine folder `machine` is `NotWritable` (exit 6) naming its cause
    and the fix (an agent's sandbox, most often); `nothing_saved`: say that no note was saved. Any
    other is one line naming the error and the file.
    """
    import os

    where = f"{exc.strerror or exc}: {exc.filename or ''}".strip(": ")
    if not cannot_write(exc) or not exc.filename:
        return AgentmemError(where)
    machine = os.path.realpath(machine)
    target = os.path.realpath(os.fsdecode(exc.filename))
    if os.path.commonpath([machine, target]) != machine:
        return AgentmemError(where)
    lost = " - nothing was saved" if nothing_saved else ""
    return NotWritable(f"cannot write the agentmem machine folder {machine} ({exc.strerror}){lost}",
                       hint=UNWRITABLE_HINT)


class Offline(AgentmemError):
    """The store could not be reached within the network deadline."""

    exit_code = EXIT_OFFLINE
    kind = "offline"


class NoAnswer(Offline):
    """The store was reached but did not answer in the time the caller waits (a Hub that hangs)."""


class Conflict(AgentmemError):
    """Different bytes already stand at a path that is append-only."""

    exit_code = EXIT_CONFLICT
    kind = "conflict"


class UnsafeBucket(AgentmemError):
    """The bucket is public; agentmem never stores memory in it and never changes its visibility."""

    exit_code = EXIT_PUBLIC_BUCKET
    kind = "bucket-public"


class RemoteError(AgentmemError):
    """The store answered, but with a failure that is none of the above (a 5xx, a malformed reply)."""

    exit_code = EXIT_REMOTE_ERROR
    kind = "remote-error"


class Unreadable(RemoteError):
    """One object in the store cannot be read as a note (not a regular file, too large, permission denied).

    The rest of the store is fine: a refresh skips and reports the object, and the other notes arrive.
    """

    kind = "unreadable-object"

    def __init__(self, message: str, *, hint: str | NextStep | None = None, too_large: bool = False):
        super().__init__(message, hint=hint)
        self.too_large = too_large  # larger than a note may be (the rest: not a regular file, no permission)


class SecretFound(InvalidInput):
    """The content carries something that looks like a credential; nothing was written."""

    kind = "secret-found"


class CodexTrustError(AgentmemError):
    """Codex's app-server did not do what was asked (`agentmem hooks trust`)."""


# Failures after which an upload's outcome is unknown or may succeed later: the
# note stays pending rather than being reported as an error of the note itself.
TRANSIENT = (Offline, RemoteError)


# --- signals inside the bucket store's network layer (store/network.py) --------------------------
# Raised and caught within one call there, and turned into one of the classes above by
# `network.classify`; they never reach a caller of the store.


class BudgetSpent(Exception):
    """The invocation's network budget is used up."""


class Unreachable(Exception):
    """The Hub could not be reached at all (no retry is attempted)."""


class GaveUp(Exception):
    """A retryable failure with too little budget left to retry."""

    def __init__(self, detail: str, status: int | None = None):
        super().__init__(detail)
        self.status = status
