"""The `agentmem hook ...` entry the runtimes call when a hook fires.

`hook` is the one command that never fails outward: whatever happens it exits
0, because in Claude Code a Stop hook's exit status 2 would keep the agent from
stopping. Problems go to stderr as one line. The one decision a hook ever prints
is the optional reflection's (hooks/reflect.py): once per session, a stop hook
asks to continue with a prompt, guarded so it cannot loop.

Everything known about the runtime comes from its module's `SPEC` (runtimes/spec.py), and
each capability is checked there, never the runtime's name.

`hook approve` is a pre-tool-use hook (Copilot CLI's, with `[trust] projects`): the runtime
reads its own hook input (`SPEC.approval.shell_call`), and this prints its approval
(`SPEC.approval.shape`) for a plain helper command in a mapped folder and nothing otherwise
(hooks/approve.py); a runtime with no such hook gets no answer.

The reminder is printed in the form the runtime adds to the model's context:
`SPEC.reminder_shape` gives plain text or a JSON object, written here.

A reminder runs on every prompt, so that path imports as little as it can
(tests/test_imports.py): that one runtime module and runtimes/spec.py (the registry
would import all five), and not agentmem.errors (its classes cost about 0.7 ms; a
failure is rare and imports it then) nor `__future__` (no module on that path uses it).
"""

import sys

STDIN_LIMIT = 1024 * 1024  # hook input is a few hundred bytes; never read an unbounded stream
HOOK_EXIT = 0  # errors.EXIT_OK: a hook exits 0 whatever happened (above)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from agentmem.runtimes.spec import Spec


def _usage(problem: str) -> Exception:
    from agentmem.errors import InvalidInput
    from agentmem.runtimes.registry import NAMES

    return InvalidInput(problem, hint=f"usage: agentmem hook reminder|stop|approve --runtime {'|'.join(NAMES)} "
                                      "[--event start|prompt]")


def runtime_spec(name: str) -> "Spec":
    """The `SPEC` of runtimes/<name>.py, imported alone; a usage error for any name that is not a runtime's."""
    if name.isascii() and name.isidentifier() and not name.startswith("_"):
        module_name = "agentmem.runtimes." + name
        try:
            __import__(module_name)
        except ModuleNotFoundError:
            pass
        else:
            from agentmem.runtimes import spec as contract  # already imported by the runtime module

            spec = getattr(sys.modules[module_name], "SPEC", None)
            if isinstance(spec, contract.Spec) and spec.name == name:
                return spec
    from agentmem.runtimes.registry import NAMES

    raise _usage(f"--runtime must be one of {', '.join(NAMES)}")


def parse_hook_args(argv: list[str]) -> tuple[str, str, str]:
    """(kind, runtime, event) from `reminder|stop --runtime R [--event E]`, parsed by hand:
    argparse costs more than the hook's own work."""
    if not argv or argv[0] not in ("reminder", "stop", "approve"):
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
    runtime = opts["--runtime"] or ""
    runtime_spec(runtime)
    if opts["--event"] not in ("start", "prompt"):
        raise _usage("--event must be start or prompt")
    return argv[0], runtime, str(opts["--event"])


def _json(value: str | dict) -> str:
    """A string or an object of them as JSON, written by hand: importing json (and the re module it
    pulls in) costs a reminder more than the rest of its work (bench/hook_latency.py, 2026-12-01)."""
    if isinstance(value, dict):
        return "{" + ", ".join(_json(k) + ": " + _json(v) for k, v in value.items()) + "}"
    out = []
    for ch in value:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch < " ":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def reminder_output(runtime: str, event: str, text: str) -> str:
    """What to print so that `runtime` puts `text` into the model's context."""
    reminder_shape = runtime_spec(runtime).reminder_shape
    if reminder_shape is None:  # a runtime that runs no hooks of ours: nothing to print
        return ""
    shape = reminder_shape(event, text)
    return (shape if isinstance(shape, str) else _json(shape)) + "\n"


def reflection_output(machine: str, runtime: str, hook_input: dict) -> str:
    """The stop hook's request for one more turn, when reflection is on, the runtime takes one, and
    the guard allows it (once per session, never on a stop a stop hook caused); else ""."""
    reflection = runtime_spec(runtime).reflection
    if reflection is None:
        return ""
    from agentmem.hooks import reflect

    ask, _ = reflect.decide(machine, hook_input)
    shape = reflection.continue_shape(reflect.prompt()) if ask else None
    return _json(shape) + "\n" if shape else ""


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
        elif kind == "approve":  # a pre-tool-use hook: "allow" for a plain helper command, else no answer
            from agentmem.hooks import approve

            approval = runtime_spec(runtime).approval  # a runtime without a pre-tool-use hook: no answer
            if approval is not None and approve.allowed(
                    machine, approval.shell_call(actions.parse_hook_input(_read_stdin()))):
                sys.stdout.write(_json(approval.shape(approve.REASON)) + "\n")
        else:
            hook_input = actions.parse_hook_input(_read_stdin())
            report = actions.stop(machine, hook_input)
            message = report.message()
            if message:
                sys.stderr.write(message + "\n")
            sys.stdout.write(reflection_output(machine, runtime, hook_input))
        sys.stdout.flush()
    except BaseException as exc:  # noqa: BLE001 - a hook must never stop the agent
        errors = sys.modules.get("agentmem.errors")  # loaded whenever an agentmem error was raised
        if errors is not None and isinstance(exc, errors.AgentmemError):
            line = exc.one_line()
        else:
            line = f"{type(exc).__name__}: {exc}"
        try:
            sys.stderr.write(f"agentmem hook failed (ignored, your work is not affected): {line}\n")
        except OSError:
            pass
    return HOOK_EXIT
