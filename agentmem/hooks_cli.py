"""The `agentmem hook ...` entry the runtimes call, and `agentmem hooks install|remove|status`.

`hook` is the one command that never fails outward: whatever happens it exits
0 and prints no decision, because in Claude Code a Stop hook's exit status 2
would keep the agent from stopping. Problems go to stderr as one line.
"""

from __future__ import annotations

import sys

from agentmem.errors import InvalidInput

STDIN_LIMIT = 1024 * 1024  # hook input is a few hundred bytes; never read an unbounded stream
# The same names as runtimes.RUNTIME_NAMES, spelled out so a hook skips that import (and dataclasses).
HOOK_RUNTIMES = ("codex", "claude")
USAGE = "usage: agentmem hook reminder|stop --runtime codex|claude [--event start|prompt]"


class HookUsage(Exception):
    def one_line(self) -> str:
        return f"{self.args[0]} ({USAGE})"


def parse_hook_args(argv: list[str]) -> tuple[str, str, str]:
    """(kind, runtime, event) from `reminder|stop --runtime R [--event E]`, parsed by hand:
    argparse costs more than the hook's own work."""
    if not argv or argv[0] not in ("reminder", "stop"):
        raise HookUsage(f"unknown hook {argv[0] if argv else ''!r}")
    opts = {"--runtime": None, "--event": "start"}
    rest = argv[1:]
    while rest:
        key = rest.pop(0)
        if "=" in key:
            key, value = key.split("=", 1)
        elif rest:
            value = rest.pop(0)
        else:
            raise HookUsage(f"{key} needs a value")
        if key not in opts:
            raise HookUsage(f"unknown option {key}")
        opts[key] = value
    if opts["--runtime"] not in HOOK_RUNTIMES:
        raise HookUsage(f"--runtime must be one of {', '.join(HOOK_RUNTIMES)}")
    if opts["--event"] not in ("start", "prompt"):
        raise HookUsage("--event must be start or prompt")
    return argv[0], opts["--runtime"], opts["--event"]


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
        from agentmem import hooks
        from agentmem.home import agentmem_home

        kind, _runtime, event = parse_hook_args(argv)
        home = agentmem_home()
        if kind == "reminder":
            text = hooks.reminder(home, event)
            if text:
                sys.stdout.write(text + "\n")
        else:
            report = hooks.stop(home, hooks.parse_hook_input(_read_stdin()))
            message = report.message()
            if message:
                sys.stderr.write(message + "\n")
        sys.stdout.flush()
    except BaseException as exc:  # noqa: BLE001 - a hook must never stop the agent
        line = exc.one_line() if hasattr(exc, "one_line") else f"{type(exc).__name__}: {exc}"
        try:
            sys.stderr.write(f"agentmem hook failed (ignored, your work is not affected): {line}\n")
        except OSError:
            pass
    return 0  # errors.EXIT_OK, without the import


# --- hooks install / remove / status ------------------------------------------------------------


def configure(sp) -> None:
    """The arguments of `agentmem hooks` (cli.py builds the subparser)."""
    from agentmem.runtimes import RUNTIME_NAMES

    sp.add_argument("action", choices=["install", "remove", "status", "trust"],
                    help="trust: ask Codex (its app-server) to trust our hooks, and only ours")
    sp.add_argument("--codex", metavar="PATH", help="the codex executable for `trust` (default: codex on PATH)")
    sp.add_argument("--runtime", choices=RUNTIME_NAMES, action="append",
                    help="codex or claude (repeatable; default: the runtimes enabled in config.toml)")


def _runtimes(args, config_data: dict) -> list[str]:
    from agentmem.runtimes import RUNTIME_NAMES

    if args.runtime:
        return list(dict.fromkeys(args.runtime))
    names = [n for n in ((config_data.get("runtimes") or {}).get("enabled") or []) if n in RUNTIME_NAMES]
    return names or list(RUNTIME_NAMES)


def cmd_hooks(args) -> tuple[int, dict, str]:
    from agentmem import config, hooks_config
    from agentmem.errors import AgentmemError
    from agentmem.home import agentmem_home

    home = agentmem_home()
    data = config.load(home).data
    names = _runtimes(args, data)
    if args.action == "status":
        try:
            helper = hooks_config.helper_command(data)
        except AgentmemError:  # no helper recorded yet: still report what is installed
            helper = None
        found = [hooks_config.status(n, helper) for n in names]
        lines = []
        for s in found:
            state = "installed" if s["installed"] else "not installed"
            if s["installed"] and s["current"] is False:
                state += " (command differs from this machine's helper: run `agentmem hooks install`)"
            lines.append(f"{s['runtime']}: {state} in {s['file']}")
            if s.get("note"):
                lines.append(f"  {s['note']}")
        return 0, {"hooks": found}, "\n".join(lines)

    if args.action == "trust":
        return _trust(args, names)
    changes = []
    if args.action == "install":
        helper = hooks_config.helper_command(data)
        changes = [hooks_config.install(home, n, helper) for n in names]
    else:
        changes = [hooks_config.remove(home, n) for n in names]
    out = {"action": args.action, "changes": [
        {"runtime": c.runtime, "file": str(c.path), "changed": c.changed, "detail": c.detail} for c in changes
    ]}
    lines = [f"{c.runtime}: {c.detail} ({c.path})" for c in changes]
    if args.action == "install" and "codex" in names:
        out["codex_trust"] = hooks_config.CODEX_TRUST_NOTE
        lines.append(hooks_config.CODEX_TRUST_NOTE)
    return 0, out, "\n".join(lines)


def _trust(args, _names: list[str]) -> tuple[int, dict, str]:
    from agentmem import codex_trust
    from agentmem.runtimes import runtime

    if args.runtime and "codex" not in args.runtime:
        raise InvalidInput("only Codex has a trust step; use --runtime codex")
    hooks_file = runtime("codex").hooks_file
    keys = codex_trust.trust_our_hooks(codex_trust.find_codex(args.codex), hooks_file)
    out = {"runtime": "codex", "file": str(hooks_file), "trusted": keys}
    return 0, out, f"codex: {len(keys)} agentmem hook(s) trusted in {hooks_file}"
