"""`agentmem hooks install|remove|status|trust`: our entries in the runtimes' hook files.

What a runtime runs when a hook fires (`agentmem hook ...`) is `agentmem.hooks.dispatch`.
"""

from __future__ import annotations

from agentmem.cli import common
from agentmem.cli.result import Result
from agentmem.errors import InvalidInput


def add_hooks(sp) -> None:
    from agentmem.machine.runtimes import RUNTIME_NAMES

    sp.add_argument("action", choices=["install", "remove", "status", "trust"],
                    help="trust: ask Codex (its app-server) to trust our hooks, and only ours")
    sp.add_argument("--codex", metavar="PATH", help="the codex executable for `trust` (default: codex on PATH)")
    sp.add_argument("--runtime", choices=RUNTIME_NAMES, action="append",
                    help="one of " + ", ".join(RUNTIME_NAMES)
                    + " (repeatable; default: the runtimes enabled in config.toml)")


def _runtime_names(args, config_data: dict) -> list[str]:
    from agentmem.machine.runtimes import RUNTIME_NAMES, enabled_names

    if args.runtime:
        return list(dict.fromkeys(args.runtime))
    return enabled_names(config_data) or list(RUNTIME_NAMES)


def run_hooks(args) -> Result:
    from agentmem import config
    from agentmem.hooks import config_files, runtime_hooks

    machine = common.machine()
    data = config.load(machine).data
    names = _runtime_names(args, data)
    if args.action == "status":
        return _status(names, data)
    if args.action == "trust":
        return _trust(args)
    if args.action == "install":
        helper = config_files.helper_command(data)
        changes = [runtime_hooks.install(machine, n, helper) for n in names]
    else:
        changes = [runtime_hooks.remove(machine, n) for n in names]
    out = {"action": args.action, "changes": [
        {"runtime": c.runtime, "file": str(c.path), "changed": c.changed, "detail": c.detail} for c in changes
    ]}
    lines = [f"{c.runtime}: {c.detail} ({c.path})" for c in changes]
    if args.action == "install" and "codex" in names:
        out["codex_trust"] = config_files.CODEX_TRUST_NOTE
        lines.append(config_files.CODEX_TRUST_NOTE)
    return Result(out, "\n".join(lines))


def _status(names: list[str], data: dict) -> Result:
    from agentmem.errors import AgentmemError
    from agentmem.hooks import config_files, runtime_hooks

    try:
        helper = config_files.helper_command(data)
    except AgentmemError:  # no helper recorded yet: still report what is installed
        helper = None
    found = [runtime_hooks.status(n, helper) for n in names]
    lines = []
    for s in found:
        state = "installed" if s["installed"] else "not installed"
        if s["installed"] and s["current"] is False:
            state += " (command differs from this machine's helper: run `agentmem hooks install`)"
        lines.append(f"{s['runtime']}: {state} in {s['file']}")
        if s.get("note"):
            lines.append(f"  {s['note']}")
    return Result({"hooks": found}, "\n".join(lines))


def _trust(args) -> Result:
    from agentmem.hooks import codex_trust
    from agentmem.machine.runtimes import runtime

    if args.runtime and "codex" not in args.runtime:
        raise InvalidInput("only Codex has a trust step; use --runtime codex")
    hooks_file = runtime("codex").hooks_file
    keys = codex_trust.trust_our_hooks(codex_trust.find_codex(args.codex), hooks_file)
    out = {"runtime": "codex", "file": str(hooks_file), "trusted": keys}
    return Result(out, f"codex: {len(keys)} agentmem hook(s) trusted in {hooks_file}")
