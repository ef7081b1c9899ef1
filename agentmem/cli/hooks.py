"""`agentmem hooks install|remove|status|trust`: our entries in the runtimes' hook files.

What a runtime runs when a hook fires (`agentmem hook ...`) is `agentmem.hooks.dispatch`.
"""

from __future__ import annotations

import argparse

from agentmem.cli import common
from agentmem.cli.result import Result
from agentmem.errors import InvalidInput
from agentmem.shell import line as shell_line

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from agentmem.config import Config


def add_hooks(sp: argparse.ArgumentParser) -> None:
    from agentmem.runtimes.registry import NAMES

    sp.add_argument("action", choices=["install", "remove", "status", "trust"],
                    help="trust: ask Codex (its app-server) to trust our hooks, and only ours")
    sp.add_argument("--codex", metavar="PATH", help="the codex executable for `trust` (default: codex on PATH)")
    sp.add_argument("--runtime", choices=NAMES, action="append",
                    help="one of " + ", ".join(NAMES)
                    + " (repeatable; default: the runtimes enabled in config.toml)")
    sp.add_argument("--reflect", action=argparse.BooleanOptionalAction, default=None,
                    help="with install: turn the end-of-session reflection on (or off with --no-reflect): "
                    "once per session the stop hook asks the agent for one more turn to save durable "
                    "decisions and findings; recorded as [hooks] reflect in config.toml "
                    "(Codex CLI, Claude Code, Gemini CLI, GitHub Copilot CLI; not OpenCode)")


def _runtime_names(args: argparse.Namespace, config_data: dict) -> list[str]:
    from agentmem.runtimes.registry import NAMES, enabled_names

    if args.runtime:
        return list(dict.fromkeys(args.runtime))
    return enabled_names(config_data) or list(NAMES)


def run_hooks(args: argparse.Namespace) -> Result:
    from agentmem.errors import EXIT_OK, AgentmemError
    from agentmem.hooks import config_files
    from agentmem.machine import settings
    from agentmem.runtimes.base import hooked
    from agentmem.runtimes.registry import enabled_names, runtime

    machine = common.machine()
    cfg = common.load_config(machine)
    data = cfg.data
    names = _runtime_names(args, data)
    if args.action == "status":
        return _status(names, cfg)
    if args.action == "trust":
        return _trust(args)
    if args.reflect is not None and args.action != "install":
        raise InvalidInput("--reflect and --no-reflect go with install: "
                           f"`{shell_line('hooks', 'install', '--reflect')}`")
    helper = config_files.helper_command(data) if args.action == "install" else None
    changes: list[dict] = []
    lines: list[str] = []
    problems: list[str] = []
    failure = None
    for name in names:  # each runtime's file on its own: one left alone does not stop the others
        rt = runtime(name)
        if not hooked(rt):
            lines.append(f"{name}: runs no hooks of ours, nothing to {args.action}")
            continue
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
    if args.reflect is not None:  # a runtime whose file was left alone shows as "needs hooks" below
        _, committed = settings.record_reflect(machine, args.reflect)
        out["committed"] = bool(out["committed"] or committed)
        out["recorded"] = {**(out["recorded"] or {}), "hooks.reflect": args.reflect}
        lines.append(f"recorded in config.toml: [hooks] reflect = {_toml_value(args.reflect)}")
    if args.action == "install":
        out["reflect"] = _reflection(common.load_config(machine), names)
        lines += _reflect_lines(out["reflect"])
    for name in names if args.action == "install" else []:
        trust = runtime(name).trust
        if trust is not None:
            out[f"{name}_trust"] = trust.hint(None)
            lines.append(trust.hint(None))
    if failure is not None:
        out = {"status": "error", "error": failure.kind, "message": failure.one_line(), **out}
    return Result(out, "\n".join(lines), failure.exit_code if failure is not None else EXIT_OK, problems)


def _reflect_lines(state: dict[str, str]) -> list[str]:
    """One line saying where the end-of-session reflection is on, and why it is not elsewhere."""
    if not any(v in ("on", "needs hooks") for v in state.values()):
        return []
    parts = [f"{name} {value}" for name, value in state.items()]
    return ["end-of-session reflection: " + "; ".join(parts)]


def _toml_value(value: bool | list[str]) -> str:
    import json

    return json.dumps(value)  # true, false or ["codex"]: the same in TOML


def _status(names: list[str], cfg: Config) -> Result:
    from agentmem.errors import AgentmemError
    from agentmem.hooks import config_files
    from agentmem.runtimes.base import hooked
    from agentmem.runtimes.registry import runtime

    data = cfg.data

    try:
        helper = config_files.helper_command(data)
    except AgentmemError:  # no helper recorded yet: still report what is installed
        helper = None
    found = [rt.hooks_status(helper) for rt in map(runtime, names) if hooked(rt)]  # none where it runs none
    reflection = _reflection(cfg, names)
    lines = []
    for s in found:
        state = reflection[s["runtime"]]  # by what is installed: the hook reads [hooks] reflect itself
        s["reflect"] = ("on" if s["installed"] else "needs hooks") if state in ("on", "needs hooks") else state
        state = "installed" if s["installed"] else "not installed"
        if s["installed"] and s["current"] is False:
            state += f" (command differs from this machine's helper: run `{shell_line('hooks', 'install')}`)"
        lines.append(f"{s['runtime']}: {state} in {s['file']}")
        if s.get("note"):
            lines.append(f"  {s['note']}")
        lines.append(f"  end-of-session reflection: {_reflect_state(s)}")
    return Result({"hooks": found}, "\n".join(lines))


def _reflect_state(s: dict) -> str:
    from agentmem.runtimes.registry import reflection_how

    if s["reflect"] == "on":
        return f"on ({reflection_how(s['runtime'])})"
    if s["reflect"] == "needs hooks":
        return f"on in config.toml, but it needs our hooks here: `{shell_line('hooks', 'install')}`"
    if s["reflect"] == "off":
        return f"off (`{shell_line('hooks', 'install', '--reflect')}` turns it on)"
    return s["reflect"]


def _trust(args: argparse.Namespace) -> Result:
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


def _reflection(cfg: Config, names: list[str]) -> dict[str, str]:
    """Where the end-of-session reflection is on, off, waits for hooks, or is not available."""
    from agentmem.machine import settings
    from agentmem.runtimes import registry

    return registry.reflection(names, on=settings.reflect_on(cfg), hooked=settings.hooks_runtimes(cfg, names))
