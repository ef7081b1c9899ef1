"""The optional end-of-session reflection: once per session, one more turn to save what lasts.

When `[hooks] reflect` is on in config.toml, our stop hook (`hook stop`), after its
bounded retry of pending notes (hooks/actions.py), asks the runtime to continue
once with `prompt()`: save durable decisions and findings through the helper, and
nothing transient. The runtime's own stop-hook mechanism carries the request: its
module's `REFLECTION` and `continue_shape` (runtimes/<name>.py), set only where a
real run showed it works (tests/test_e2e_reflect.py).

It can never loop:
- never when the runtime says this stop was itself caused by a stop hook
  (`stop_hook_active: true` in the hook input);
- at most once per session ID, recorded in `hook-reflect-state.json` in the machine
  folder before the request is made: read, changed and written atomically under an
  exclusive lock (`hook-reflect-state.lock`), so two sessions stopping at once are
  both recorded; entries older than `KEEP_SECONDS` are dropped;
- not at all when there is no session ID, when the lock is not had within
  `LOCK_WAIT`, or when the record cannot be written: no record, no request.

A damaged state file counts as empty and is replaced by a sound one. Nothing here
raises into the hook: every failure is "do not ask", told as a reason.
"""

from __future__ import annotations

import os
import time

from agentmem.paths import config_path

STATE_FILE = "hook-reflect-state.json"
LOCK_FILE = "hook-reflect-state.lock"
# Seconds a session stays recorded: a resumed session (Claude Code `--resume`, Codex `resume`)
# keeps its ID for as long as its transcript exists, and a month of sessions is a few kB.
KEEP_SECONDS = 30 * 24 * 3600.0
# The most sessions kept, newest first, whatever their age: the file stays small on a busy machine.
MAX_SESSIONS = 2000
# Seconds to wait for another stop hook holding the lock (its work is a read and a write of a
# few kB, milliseconds); past this, this stop does not ask.
LOCK_WAIT = 2.0
SESSION_ID_LIMIT = 200  # characters; IDs the runtimes send are UUIDs (36)


def _may_be_on(machine: str | os.PathLike) -> bool:
    """False when config.toml has no line holding both `reflect` and `true`, which `reflect = true` needs
    in any spelling TOML allows (a key and its value share a line; so do an inline table's); then the
    stop hook, which runs at the end of every agent turn, need not import and load the config at all."""
    try:
        with open(config_path(machine), "rb") as f:
            text = f.read()
    except OSError:
        return True  # let config.load say what is wrong (it is off either way)
    return any(b"reflect" in line and b"true" in line for line in text.splitlines())


def enabled(machine: str | os.PathLike) -> bool:
    """`[hooks] reflect = true` in config.toml (read from its parsed copy); anything unreadable is off."""
    if not _may_be_on(machine):
        return False
    try:
        from agentmem import config

        cfg = config.load(machine)
        cfg.keep_parsed_copy()  # the next stops read its JSON copy, not the TOML (tomllib costs ~10 ms)
        return (cfg.data.get("hooks") or {}).get("reflect") is True
    except Exception:  # noqa: BLE001 - a config problem turns reflection off; the hook still exits 0
        return False


def prompt() -> str:
    """What the agent is asked, naming this machine's helper and a save form every runtime runs
    without a heredoc or pipe (Gemini CLI and Copilot CLI ask about those)."""
    from agentmem.errors import Command

    save = Command("save", "--title", "TITLE", "--text", "TEXT").line()
    return (
        "Before you finish (agentmem, asked once per session): if this session settled a decision or "
        "found something a later session on this project should know, save each as one short note with "
        f"`{save}`. Do not save transient errors, a narrative of what you did, or claims that a tool does "
        "not work. If nothing is worth keeping, reply that nothing needed saving."
    )


def session_of(hook_input: dict) -> str:
    """The session ID in the runtime's hook input (`session_id`; Copilot CLI's own format `sessionId`)."""
    for key in ("session_id", "sessionId"):
        value = hook_input.get(key)
        if isinstance(value, str) and value.strip() and len(value) <= SESSION_ID_LIMIT:
            return value
    return ""


def decide(machine: str | os.PathLike, hook_input: dict, *, now: float | None = None) -> tuple[bool, str]:
    """(ask, why): whether this stop asks for the reflection turn, recording the session if so.

    The cheap refusals come first (a stop a stop hook caused, no session ID, a session already
    asked), so most stops never read config.toml: `enabled` is asked only for a session not yet asked."""
    if hook_input.get("stop_hook_active") or hook_input.get("stopHookActive"):
        return False, "stop_hook_active"
    session = session_of(hook_input)
    if not session:
        return False, "no session ID in the hook input"
    path = os.path.join(machine, STATE_FILE)
    if session in _sessions(_read(path)):
        return False, "already asked in this session"
    if not enabled(machine):
        return False, "off"
    try:
        with _Lock(os.path.join(machine, LOCK_FILE)):
            return _record(path, session, time.time() if now is None else now)
    except OSError as exc:
        return False, f"reflection state not written ({exc.strerror or exc})"


def _read(path: str) -> dict:
    from agentmem.fsutil import read_state

    return read_state(path)


def _record(path: str, session: str, now: float) -> tuple[bool, str]:
    from agentmem.fsutil import write_state

    sessions = _sessions(_read(path))  # again, under the lock: another session may have written since
    if session in sessions:
        return False, "already asked in this session"
    sessions[session] = now
    kept = sorted(((t, s) for s, t in sessions.items() if now - t < KEEP_SECONDS), reverse=True)[:MAX_SESSIONS]
    write_state(path, {"asked": {s: round(t, 3) for t, s in kept}})  # before asking: no record, no request
    return True, "asked"


def _sessions(state: dict) -> dict[str, float]:
    """The recorded sessions; anything malformed is dropped (a damaged file counts as empty)."""
    asked = state.get("asked")
    if not isinstance(asked, dict):
        return {}
    return {s: float(t) for s, t in asked.items()
            if isinstance(s, str) and isinstance(t, int | float) and not isinstance(t, bool)}


class _Lock:
    """An exclusive lock on a small file beside the state, held for one read and write.

    flock (Linux, macOS) or msvcrt's byte lock (Windows), both released when the holder
    dies. Tried without blocking until LOCK_WAIT has passed, then OSError: a stop hook
    never waits long on another."""

    def __init__(self, path: str):
        self.path = path
        self.fd = -1

    def __enter__(self) -> _Lock:
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + LOCK_WAIT
        while True:
            try:
                _try_lock(self.fd)
                return self
            except OSError:  # held by another process (EWOULDBLOCK; Windows: EDEADLK, EACCES)
                if time.monotonic() >= deadline:
                    os.close(self.fd)
                    raise OSError("another stop hook holds the reflection lock") from None
                time.sleep(0.01)

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)  # closing the descriptor releases the lock


def _try_lock(fd: int) -> None:
    import sys

    if sys.platform == "win32":
        import msvcrt

        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    else:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
