"""`agentmem hooks install|remove|status|trust`: our entries in the runtimes' hook files.

What a runtime runs when a hook fires (`agentmem hook ...`) is `agentmem.hooks.dispatch`.
"""

from __future__ import annotations

from agentmem.cli import common
from agentmem.cli.result import Result
from agentmem.errors import InvalidInput
from agentmem.shell import line as shell_line


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
    from agentmem.errors import EXIT_OK, AgentmemError
    from agentmem.hooks import config_files, runtime_hooks
    from agentmem.machine import settings
    from agentmem.machine.runtimes import enabled_names

    machine = common.machine()
    data = common.load_config(machine).data
    names = _runtime_names(args, data)
    if args.action == "status":
        return _status(names, data)
    if args.action == "trust":
        return _trust(args)
    helper = config_files.helper_command(data) if args.action == "install" else None
    changes: list[dict] = []
    lines: list[str] = []
    problems: list[str] = []
    failure = None
    for name in names:  # each runtime's file on its own: one left alone does not stop the others
        try:
            c = (runtime_hooks.install(machine, name, helper) if helper is not None
                 else runtime_hooks.remove(machine, name))
        except AgentmemError as exc:
            failure = failure or exc
            path = str(config_files.get_runtime(name).hooks_file)
            changes.append({"runtime": name, "file": path, "changed": False, "detail": exc.one_line(),
                            "error": exc.kind})
            lines.append(f"{name}: not changed - {exc.one_line()}")
            problems.append(exc.one_line())
            continue
        changes.append({"runtime": c.runtime, "file": str(c.path), "changed": c.changed, "detail": c.detail})
        lines.append(f"{c.runtime}: {c.detail} ({c.path})")
    # The choice lasts: setup and `copier update` apply what config.toml says. Only what was done
    # is recorded: a file left alone keeps its runtime's recorded state, and refused input changes nothing.
    done = [str(c["runtime"]) for c in changes if "error" not in c]
    out = {"action": args.action, "changes": changes, "recorded": None, "committed": False}
    if done:
        value, out["committed"] = settings.record_hooks(machine, done, on=args.action == "install",
                                                        enabled_runtimes=enabled_names(data))
        out["recorded"] = {"hooks.enabled": value}
        lines.append(f"recorded in config.toml: [hooks] enabled = {_toml_value(value)}")
    if args.action == "install" and "codex" in names:
        from agentmem.hooks.codex_trust import trust_hint

        out["codex_trust"] = trust_hint()
        lines.append(trust_hint())
    if failure is not None:
        out = {"status": "error", "error": failure.kind, "message": failure.one_line(), **out}
    return Result(out, "\n".join(lines), failure.exit_code if failure is not None else EXIT_OK, problems)


def _toml_value(value) -> str:
    import json

    return json.dumps(value)  # true, false or ["codex"]: the same in TOML


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
            state += f" (command differs from this machine's helper: run `{shell_line('hooks', 'install')}`)"
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
