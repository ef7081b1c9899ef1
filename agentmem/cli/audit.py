"""`agentmem audit`: find credentials in the notes of the store, and with --fix replace each note by a
redacted copy (library: memory/audit.py)."""

from __future__ import annotations

import sys

from agentmem.cli import common
from agentmem.cli.result import Result
from agentmem.errors import EXIT_ATTENTION, EXIT_OK, InvalidInput


def add_audit(sp) -> None:
    sp.add_argument("--project", help="a configured project name (default: from the current directory)")
    sp.add_argument("--all", action="store_true", help="every project in the store")
    sp.add_argument("--fix", action="store_true",
                    help="save a redacted copy of each note found (it corrects the original), then say how to "
                    "purge the original; asks first on a terminal")
    sp.add_argument("--yes", action="store_true", help="with --fix: do not ask (needed without a terminal)")


def run_audit(args) -> Result:
    from agentmem.errors import Command, NextStep
    from agentmem.memory import audit

    if args.all and args.project:
        raise InvalidInput("give --project P or --all, not both")
    if args.yes and not args.fix:
        raise InvalidInput("--yes goes with --fix")
    cfg = common.config()
    project = None
    if not args.all:
        from agentmem.safety.screening import refuse_argument

        refuse_argument(args.project, "--project", "audit")
        project = cfg.resolve_project(explicit=args.project)
    scope = ["--all"] if args.all else ["--project", project]
    if args.fix and not args.yes and not _interactive():
        raise InvalidInput("audit --fix saves a copy of each note found and asks first; nothing was done",
                           hint=NextStep("without a terminal, run `{}`", Command("audit", *scope, "--fix", "--yes")))
    machine = common.machine()
    found = audit.audit(machine, cfg, project, timeout=common.timeout(cfg))
    out = found.to_json()
    lines = [_summary(out)]
    for f in out["findings"]:
        lines.extend(_finding_lines(f))
    if out["unreadable"]:
        lines.append(f"{len(out['unreadable'])} note(s) could not be read and were not scanned:")
        lines.extend(f"  {u['project']}/{u['id']}: {u['message']}" for u in out["unreadable"])
    if args.fix:
        out["fixed"] = []
        for finding, shown in zip(found.findings, out["findings"], strict=True):
            if not args.yes and not _confirm(finding):
                out["fixed"].append({"id": finding.id, "copy": None, "status": "skipped"})
                continue
            fixed = _fix(machine, cfg, finding)
            out["fixed"].append(fixed)
            shown["redacted_copy"] = fixed["copy"]
            lines.append(_fixed_line(fixed, shown))
    elif out["findings"]:
        lines.append(f"To save a redacted copy of each: {Command('audit', *scope, '--fix').line()}")
    return Result(out, "\n".join(lines), EXIT_ATTENTION if out["findings"] else EXIT_OK)


def _summary(out: dict) -> str:
    where = ", ".join(out["projects"]) or "no project"
    if not out["findings"]:
        return f"no credentials in the {out['scanned']} note(s) of {where} in the store"
    return (f"{len(out['findings'])} of the {out['scanned']} note(s) of {where} in the store hold credentials "
            "(shown as [REDACTED:<kind>] by every command; the store's copy still holds them):")


def _finding_lines(f: dict) -> list[str]:
    places = ", ".join(w["where"] + (f" line {w['line']}" if w.get("line") else "") + f" ({w['kind']})"
                       for w in f["withheld"])
    lines = [f"- {f['project']}/{f['id']}: {places}"]
    if f["purge"] is None:
        lines.append(f"    next: its name holds the credential, so agentmem never names it: delete {f['path']} "
                     "(the real name in place of the [REDACTED:...] part) from the store yourself")
    elif f["redacted_copy"]:
        lines.append(f"    redacted copy saved already: {f['redacted_copy']}; then purge the original: {f['purge']}")
    else:
        lines.append(f"    next: save a redacted copy (audit --fix), then purge the original: {f['purge']}")
    return lines


def _fix(machine: str, cfg, finding) -> dict:
    """The redacted copy of one finding (reused if an earlier fix saved it), and the purge left to run."""
    from agentmem.errors import AgentmemError
    from agentmem.memory import audit

    if finding.copy:
        return {"id": finding.id, "copy": finding.copy, "status": "copied"}
    if finding.named:
        return {"id": finding.id, "copy": None, "status": "skipped", "message": "its ID holds the credential"}
    try:
        saved = audit.save_copy(machine, cfg, finding, timeout=common.timeout(cfg))
    except AgentmemError as exc:
        return {"id": finding.id, "copy": None, "status": "failed", "error": exc.kind, "message": exc.one_line()}
    outcome = saved.outcome
    status = "copied" if outcome.status == "saved" else "pending"
    return {"id": finding.id, "copy": outcome.entry.id, "status": status}


def _fixed_line(fixed: dict, shown: dict) -> str:
    if fixed["status"] == "failed":
        return f"  {fixed['id']}: no copy saved: {fixed['message']}"
    if fixed["status"] == "skipped":
        return f"  {fixed['id']}: skipped"
    state = "saved" if fixed["status"] == "copied" else "saved on this machine, upload pending"
    return (f"  {fixed['id']}: redacted copy {fixed['copy']} {state}; the original still holds the credential "
            f"in the store: purge it with {shown['purge']}")


def _interactive() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


def _confirm(finding) -> bool:
    sys.stderr.write(f"Save a redacted copy of {finding.project}/{finding.id} (it corrects the original)? [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    return answer in ("y", "yes")
