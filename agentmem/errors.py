"""Every way an agentmem operation can fail, each with its own exit status.

Library code raises these; the CLI maps them, in one place (`cli/main.py`), to
one line on stderr and the class's exit status. Messages say what failed and
what to do, and never contain a credential. The table of statuses is
docs/cli.md's "Exit statuses", generated from this module.
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
EXIT_CREDENTIALS_FOUND = 12  # an outcome: `audit` found notes in the store that hold credentials

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
    EXIT_CREDENTIALS_FOUND: "`audit` found credentials in notes in the store (each listed, with its next step)",
}


class AgentmemError(Exception):
    """Base class. `kind` is the stable machine-readable name used in --json output."""

    exit_code = EXIT_UNEXPECTED
    kind = "error"

    def __init__(self, message: str, *, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def one_line(self) -> str:
        text = self.message if not self.hint else f"{self.message} ({self.hint})"
        return " ".join(text.split())


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


class Offline(AgentmemError):
    """The store could not be reached within the network deadline."""

    exit_code = EXIT_OFFLINE
    kind = "offline"


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

    def __init__(self, message: str, *, hint: str | None = None, too_large: bool = False):
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
