"""The few ways an agentmem operation can fail, each with its own exit status.

Library code raises these; the CLI maps them, in one place, to one line on
stderr and the class's exit status. Messages say what failed and what to do,
and never contain a credential.
"""

from __future__ import annotations

# Exit statuses, documented in the README ("Exit statuses").
EXIT_OK = 0
EXIT_PENDING = 10  # the note is safe locally but the shared store has not confirmed it


class AgentmemError(Exception):
    """Base class. `kind` is the stable machine-readable name used in --json output."""

    exit_code = 1
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

    exit_code = 2
    kind = "invalid-input"


class NotConfigured(AgentmemError):
    """No machine setup, or the current directory maps to no project."""

    exit_code = 3
    kind = "not-configured"


class NotFound(AgentmemError):
    """A note, skill, object or bucket does not exist."""

    exit_code = 4
    kind = "not-found"


class NotAuthenticated(AgentmemError):
    """No Hugging Face credentials, or credentials the Hub rejects."""

    exit_code = 5
    kind = "not-authenticated"


class NoAccess(AgentmemError):
    """Authenticated, but not allowed to do this (read-only token, someone else's bucket)."""

    exit_code = 6
    kind = "no-access"


class Offline(AgentmemError):
    """The store could not be reached within the network deadline."""

    exit_code = 7
    kind = "offline"


class Conflict(AgentmemError):
    """Different bytes already stand at a path that is append-only."""

    exit_code = 8
    kind = "conflict"


class UnsafeBucket(AgentmemError):
    """The bucket is public; agentmem never stores memory in it and never changes its visibility."""

    exit_code = 9
    kind = "bucket-public"


class RemoteError(AgentmemError):
    """The store answered, but with a failure that is none of the above (a 5xx, a malformed reply)."""

    exit_code = 11
    kind = "remote-error"


class SecretFound(InvalidInput):
    """The content carries something that looks like a credential; nothing was written."""

    kind = "secret-found"


# Failures after which an upload's outcome is unknown or may succeed later: the
# note stays pending rather than being reported as an error of the note itself.
TRANSIENT = (Offline, RemoteError)
