"""The CLI run inside the test process, as a child process would run it, without the interpreter's start.

A child costs about 75 ms of start-up on the 2-core box (more when it is busy), and the suite calls the CLI
many thousand times through `Machine.run`. `run(...)` gives the same call the state a fresh child starts
with, then calls `agentmem.launch.main(argv, launcher=...)` as the child's `-c` line does:

- the machine's environment replaces `os.environ` (so commands the CLI starts inherit it, as from a child),
  the working directory is the call's, `sys.argv` is the child's;
- descriptors 0, 1 and 2 are files (stdin holding the input, as a pipe would, at its end after it), and
  `sys.stdin`/`stdout`/`stderr` are new text streams over them, opened as Python opens a child's (encoding,
  errors, buffering: asked once of a real child, `_stdio_settings`). Writes through `print`, `sys.stdout`,
  `sys.stdout.buffer` and by a program the CLI starts (git, pip, copier) all land in the captured output,
  in the order a child's pipe would get them;
- every `agentmem` module is imported afresh for the call and the test's own copies put back after it, so
  no module-level state (caches, the launcher's path, budgets, locks) carries from one call to the next or
  from the test into the call, whoever adds such state later;
- the exit status is `main`'s return value or SystemExit's code, as the child's would be. Any other
  exception is raised into the test with its traceback (a child would print it: no test expects one).

What only a child can show is refused here rather than imitated, with an error naming the fix (mark the
test `@pytest.mark.child`, or `Machine(..., child=True)`): a call that imports huggingface_hub, hf_xet or
the MCP SDK (which keep per-process settings read from the environment at import, and hf_xet a session per
process), and a call that leaves an agentmem thread running (a child's exit would end it). `Machine.run`
sends to a child by itself whatever would start differently there (`use_child`).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

# Imported by the CLI only where a child process gives them settings of their own: never in-process.
CHILD_ONLY_PACKAGES = ("huggingface_hub", "hf_xet", "mcp")
# What shapes an interpreter's start (its imports, its streams' encoding): a machine whose environment
# differs from the test process's in these starts differently, so it runs in a child.
_START_VARIABLES = ("PYTHON", "LC_", "LANG")


class ChildOnly(BaseException):
    """A BaseException, so that no `except Exception` (or a hook's catch-all) in the CLI hides it."""


class _Tripwire:
    """A meta-path finder, first while a call runs: an import of a child-only package stops the call."""

    fired: str | None = None

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.partition(".")[0] in CHILD_ONLY_PACKAGES:
            cls.fired = cls.fired or name
            raise ChildOnly(name)
        return None


# Standard-library modules that read the environment once and keep what they found (webbrowser its browser
# list, from BROWSER and DISPLAY): imported afresh for each call too, like agentmem's own.
FRESH_STDLIB = ("webbrowser",)


def _ours(name: str) -> bool:
    return name == "agentmem" or name.startswith("agentmem.") or name in FRESH_STDLIB


def _child_only(name: str) -> bool:
    return name.partition(".")[0] in CHILD_ONLY_PACKAGES


def start_variables(env) -> dict:
    return {k: v for k, v in env.items() if k.startswith(_START_VARIABLES)}


_settings: dict = {}


def _stdio_settings(env: dict) -> list[tuple[str, str, bool, bool, bool]]:
    """(encoding, errors, line_buffering, write_through, buffered) of a child's stdin, stdout and stderr on
    pipes, in this environment (its locale, PYTHONUNBUFFERED): asked once of a real child per set of start
    variables."""
    key = json.dumps(start_variables(env), sort_keys=True)
    if key not in _settings:
        probe = ("import io, sys, json; print(json.dumps([[s.encoding, s.errors, s.line_buffering, s.write_through, "
                 "not isinstance(s.buffer, io.FileIO)] for s in (sys.stdin, sys.stdout, sys.stderr)]))")
        done = subprocess.run([sys.executable, "-S", "-c", probe], env=env, capture_output=True, check=True,
                              input=b"")
        _settings[key] = [tuple(s) for s in json.loads(done.stdout)]
    return _settings[key]


def _stream(fd: int, mode: str, settings: tuple[str, str, bool, bool, bool]) -> io.TextIOWrapper:
    encoding, errors, line_buffering, write_through, buffered = settings
    raw = io.FileIO(fd, mode, closefd=False)
    binary: io.RawIOBase | io.BufferedIOBase = raw
    if buffered:
        binary = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
    return io.TextIOWrapper(binary, encoding=encoding, errors=errors, newline="\n",  # type: ignore[arg-type]
                            line_buffering=line_buffering, write_through=write_through)


def _agentmem_threads(before: set) -> list[threading.Thread]:
    """Threads started by the call's agentmem code and still running."""
    left = []
    for thread in threading.enumerate():
        if thread in before or not thread.is_alive():
            continue
        target = getattr(thread, "_target", None)
        if thread.name.startswith("agentmem") or _ours(getattr(target, "__module__", "") or ""):
            left.append(thread)
    return left


def run(args: list[str], env: dict, cwd: str | os.PathLike, input: bytes, launcher: str | None) -> tuple[int, bytes, bytes]:
    """One CLI call in this process, as a child `python -S -c "...main(launcher=...)" ARGS` with `env`, `cwd`
    and `input` on stdin would make it; returns (status, stdout bytes, stderr bytes)."""
    settings = _stdio_settings(env)
    for stream in (sys.stdout, sys.stderr):  # the test's own output, before the descriptors are borrowed
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    saved_env, saved_cwd, saved_argv = dict(os.environ), os.getcwd(), sys.argv
    saved_streams, saved_tempdir = (sys.stdin, sys.stdout, sys.stderr), tempfile.tempdir
    saved_path, saved_meta_path = list(sys.path), list(sys.meta_path)
    saved_modules = {k: sys.modules.pop(k) for k in [k for k in sys.modules if _ours(k) or _child_only(k)]}
    threads_before = set(threading.enumerate())
    saved_fds = [os.dup(fd) for fd in (0, 1, 2)]
    files = [tempfile.TemporaryFile() for _ in range(3)]
    files[0].write(input)
    files[0].flush()
    files[0].seek(0)
    status, raised = 0, None
    _Tripwire.fired = None
    try:
        for fd, f in enumerate(files):
            os.dup2(f.fileno(), fd)
        sys.stdin, sys.stdout, sys.stderr = (_stream(0, "r", settings[0]), _stream(1, "w", settings[1]),
                                             _stream(2, "w", settings[2]))
        os.environ.clear()
        os.environ.update(env)
        _environment_read_once(None)
        os.chdir(cwd)
        sys.argv = ["-c", *args]
        sys.meta_path.insert(0, _Tripwire)
        try:
            from agentmem.launch import main

            status = main(list(args), launcher=launcher)
        except SystemExit as exc:
            status = exc.code
        except BaseException as exc:  # noqa: BLE001 - raised into the test below, after the restore
            raised = exc
        if isinstance(status, str) or (status is not None and not isinstance(status, int)):
            sys.stderr.write(f"{status}\n")  # as Python reports SystemExit("message")
            status = 1
        status = (status or 0) & 0xFF
        for stream in (sys.stdout, sys.stderr):  # as a child's exit flushes them
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        left = _agentmem_threads(threads_before)
        for thread in [t for t in left if not t.daemon]:
            thread.join()  # a child's exit waits for these too
        left = [t for t in left if t.daemon and t.is_alive()]
    finally:
        for fd, saved in enumerate(saved_fds):
            os.dup2(saved, fd)
            os.close(saved)
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        sys.argv = saved_argv
        sys.path[:], sys.meta_path[:] = saved_path, saved_meta_path
        for name in [k for k in sys.modules if _ours(k) or _child_only(k)]:
            del sys.modules[name]
        sys.modules.update(saved_modules)
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        _environment_read_once(saved_tempdir)
    out, err = (_read(f) for f in files[1:])
    files[0].close()
    where = f"`agentmem {' '.join(args)}` in-process"
    if _Tripwire.fired is not None:
        raise AssertionError(f"{where} imported {_Tripwire.fired}, which keeps per-process settings: run this "
                             f"test's CLI in a child (@pytest.mark.child or Machine(child=True))")
    if raised is not None:
        raise AssertionError(f"{where} raised (a child would print this traceback):\n{err.decode(errors='replace')}"
                             ) from raised
    if left:
        raise AssertionError(f"{where} left running {[t.name for t in left]}, which a child's exit would end: "
                             f"run this test's CLI in a child (@pytest.mark.child or Machine(child=True))")
    return status, out, err


def _environment_read_once(tempdir: str | None) -> None:
    """What the standard library read from the environment and kept, read again: the time zone (TZ), and the
    temporary folder (TMPDIR; None: found again on first use, as in a child)."""
    time.tzset()
    tempfile.tempdir = tempdir


def _read(f) -> bytes:
    f.seek(0)
    data = f.read()
    f.close()
    return data
