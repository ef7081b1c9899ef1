"""The `agentmem hook ...` entry the runtimes call when a hook fires.

`hook` is the one command that never fails outward: whatever happens it exits
0, because in Claude Code a Stop hook's exit status 2 would keep the agent from
stopping. Problems go to stderr as one line. The one decision a hook ever prints
is the optional reflection's (hooks/reflect.py): once per session, a stop hook
asks to continue with a prompt, guarded so it cannot loop.

The reminder is printed in the form each runtime adds to the model's context
(checked with the real CLIs, 2026-12-01): plain stdout for Codex, Claude Code
and OpenCode (whose plugin reads it); Gemini CLI only takes
`{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}}`
and Copilot CLI only a top-level `{"additionalContext": ...}`.
"""

from __future__ import annotations

import sys

from agentmem.errors import EXIT_OK, AgentmemError, InvalidInput

STDIN_LIMIT = 1024 * 1024  # hook input is a few hundred bytes; never read an unbounded stream
# The same names as runtimes.RUNTIME_NAMES, spelled out so a hook skips that import (and dataclasses).
HOOK_RUNTIMES = ("codex", "claude", "gemini", "opencode", "copilot")
USAGE = f"usage: agentmem hook reminder|stop --runtime {'|'.join(HOOK_RUNTIMES)} [--event start|prompt]"
GEMINI_EVENTS = {"start": "SessionStart", "prompt": "BeforeAgent"}  # the Gemini events our reminder runs on


def _usage(problem: str) -> InvalidInput:
    return InvalidInput(problem, hint=USAGE)


def parse_hook_args(argv: list[str]) -> tuple[str, str, str]:
    """(kind, runtime, event) from `reminder|stop --runtime R [--event E]`, parsed by hand:
    argparse costs more than the hook's own work."""
    if not argv or argv[0] not in ("reminder", "stop"):
        raise _usage(f"unknown hook {argv[0] if argv else ''!r}")
    opts = {"--runtime": None, "--event": "start"}
    rest = argv[1:]
    while rest:
        key = rest.pop(0)
        if "=" in key:
            key, value = key.split("=", 1)
        elif rest:
            value = rest.pop(0)
        else:
            raise _usage(f"{key} needs a value")
        if key not in opts:
            raise _usage(f"unknown option {key}")
        opts[key] = value
    if opts["--runtime"] not in HOOK_RUNTIMES:
        raise _usage(f"--runtime must be one of {', '.join(HOOK_RUNTIMES)}")
    if opts["--event"] not in ("start", "prompt"):
        raise _usage("--event must be start or prompt")
    return argv[0], opts["--runtime"], opts["--event"]


def _json_string(text: str) -> str:
    """`text` as a JSON string, written by hand: importing json (and the re module it pulls in)
    costs a reminder more than the rest of its work (bench/hook_latency.py, 2026-12-01)."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch < " ":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def reminder_output(runtime: str, event: str, text: str) -> str:
    """What to print so that `runtime` puts `text` into the model's context."""
    if runtime == "gemini":
        return ('{"hookSpecificOutput": {"hookEventName": "' + GEMINI_EVENTS[event]
                + '", "additionalContext": ' + _json_string(text) + "}}\n")
    if runtime == "copilot":
        return '{"additionalContext": ' + _json_string(text) + "}\n"
    return text + "\n"


def reflection_output(machine: str, runtime: str, hook_input: dict) -> str:
    """The stop hook's request for one more turn, when reflection is on, the runtime takes one, and
    the guard allows it (once per session, never on a stop a stop hook caused); else ""."""
    from agentmem.hooks import reflect

    if runtime not in reflect.RUNTIMES:
        return ""
    ask, _ = reflect.decide(machine, hook_input)
    if not ask:
        return ""
    return '{"decision": "block", "reason": ' + _json_string(reflect.prompt()) + "}\n"


def _read_stdin() -> str:
    if sys.stdin is None or sys.stdin.isatty():
        return ""
    try:
        return sys.stdin.read(STDIN_LIMIT)
    except (OSError, ValueError):
        return ""


def run_hook(argv: list[str]) -> int:
    """Run one hook and return 0, always. Reminder text goes to stdout (the runtime adds it to the context)."""
    try:
        from agentmem.hooks import actions
        from agentmem.paths import machine_dir

        kind, runtime, event = parse_hook_args(argv)
        machine = machine_dir()
        if kind == "reminder":
            text = actions.reminder(machine, event)
            if text:
                sys.stdout.write(reminder_output(runtime, event, text))
        else:
            hook_input = actions.parse_hook_input(_read_stdin())
            report = actions.stop(machine, hook_input)
            message = report.message()
            if message:
                sys.stderr.write(message + "\n")
            sys.stdout.write(reflection_output(machine, runtime, hook_input))
        sys.stdout.flush()
    except BaseException as exc:  # noqa: BLE001 - a hook must never stop the agent
        line = exc.one_line() if isinstance(exc, AgentmemError) else f"{type(exc).__name__}: {exc}"
        try:
            sys.stderr.write(f"agentmem hook failed (ignored, your work is not affected): {line}\n")
        except OSError:
            pass
    return EXIT_OK
