"""`agentmem hooks install|remove|status|trust`: our entries in the runtimes' hook files.

What a runtime runs when a hook fires (`agentmem hook ...`) is `agentmem.hooks.dispatch`.
"""

from __future__ import annotations

from agentmem.cli import common
from agentmem.cli.result import Result
from agentmem.errors import InvalidInput
from agentmem.shell import line as shell_line


def add_hooks(sp) -> None:
    from agentmem.runtimes.registry import NAMES

    sp.add_argument("action", choices=["install", "remove", "status", "trust"],
                    help="trust: ask Codex (its app-server) to trust our hooks, and only ours")
    sp.add_argument("--codex", metavar="PATH", help="the codex executable for `trust` (default: codex on PATH)")
    sp.add_argument("--runtime", choices=NAMES, action="append",
                    help="one of " + ", ".join(NAMES)
                    + " (repeatable; default: the runtimes enabled in config.toml)")


def _runtime_names(args, config_data: dict) -> list[str]:
    from agentmem.runtimes.registry import NAMES, enabled_names

    if args.runtime:
        return list(dict.fromkeys(args.runtime))
    return enabled_names(config_data) or list(NAMES)


def run_hooks(args) -> Result:
    from agentmem.errors import EXIT_OK, AgentmemError
    from agentmem.hooks import config_files
    from agentmem.machine import settings
    from agentmem.runtimes.registry import enabled_names, runtime

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
        rt = runtime(name)
        try:
            c = rt.install_hooks(machine, helper) if helper is not None else rt.remove_hooks(machine)
        except AgentmemError as exc:
            failure = failure or exc
            path = str(rt.hooks_file)
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
    for name in names if args.action == "install" else []:
        trust = runtime(name).trust
        if trust is not None:
            out[f"{name}_trust"] = trust.hint(None)
            lines.append(trust.hint(None))
    if failure is not None:
        out = {"status": "error", "error": failure.kind, "message": failure.one_line(), **out}
    return Result(out, "\n".join(lines), failure.exit_code if failure is not None else EXIT_OK, problems)


def _toml_value(value) -> str:
    import json

    return json.dumps(value)  # true, false or ["codex"]: the same in TOML


def _status(names: list[str], data: dict) -> Result:
    from agentmem.errors import AgentmemError
    from agentmem.hooks import config_files
    from agentmem.runtimes.registry import runtime

    try:
        helper = config_files.helper_command(data)
    except AgentmemError:  # no helper recorded yet: still report what is installed
        helper = None
    found = [runtime(n).hooks_status(helper) for n in names]
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
    from agentmem.runtimes.registry import every

    with_step = [(rt, trust) for rt in every() if (trust := rt.trust) is not None]
    chosen = [(rt, trust) for rt, trust in with_step if not args.runtime or rt.name in args.runtime]
    if not chosen:
        raise InvalidInput(f"only {' and '.join(trust.who for _, trust in with_step)} has a trust step; "
                           f"use --runtime {with_step[0][0].name}")
    rt, trust = chosen[0]
    keys = trust.grant(args.codex)
    out = {"runtime": rt.name, "file": str(rt.hooks_file), "trusted": keys}
    return Result(out, f"{rt.name}: {len(keys)} agentmem hook(s) trusted in {rt.hooks_file}")
