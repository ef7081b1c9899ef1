"""`agentmem audit`: find credentials in the notes of the store, and with --fix replace each note by a
redacted copy and purge the original (library: memory/audit.py; the purge: memory/curation.py)."""

from __future__ import annotations

import sys

from agentmem.cli import common
from agentmem.cli.result import Result
from agentmem.errors import EXIT_ATTENTION, EXIT_OK, Command, InvalidInput

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    import argparse

    from agentmem.config import Config
    from agentmem.memory.audit import Finding


def add_audit(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--project", help="a configured project name (default: from the current directory)")
    sp.add_argument("--all", action="store_true", help="every project in the store")
    sp.add_argument("--fix", action="store_true",
                    help="save a redacted copy of each note found (it corrects the original), then purge the "
                    "original from the store and every machine's cache; asks first on a terminal")
    sp.add_argument("--yes", action="store_true", help="with --fix: do not ask (needed without a terminal)")


def run_audit(args: argparse.Namespace) -> Result:
    from agentmem.errors import NextStep
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
        raise InvalidInput("audit --fix replaces each note found by a redacted copy, purging the original for good, "
                           "and asks first; nothing was done",
                           hint=NextStep("without a terminal, run `{}`", Command("audit", *scope, "--fix", "--yes")))
    machine = common.machine()
    found = audit.audit(machine, cfg, project, timeout=common.timeout(cfg))
    out = found.to_json()
    lines = [_summary(out)]
    for f in out["findings"]:
        lines.extend(_finding_lines(f)[:1 if args.fix else None])  # with --fix, what it did follows
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
        if out["findings"] and all(f["status"] == "purged" for f in out["fixed"]):
            out["status"] = "fixed"
    elif out["findings"]:
        lines.append(f"To replace each by a redacted copy and purge it: {Command('audit', *scope, '--fix').line()}")
    return Result(out, "\n".join(lines), EXIT_ATTENTION if out["status"] == "found" else EXIT_OK)


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
        lines.append(f"    next: save a redacted copy and purge the original (audit --fix), or purge it alone: "
                     f"{f['purge']}")
    return lines


def _fix(machine: str, cfg: Config, finding: Finding) -> dict:
    """One finding fixed: its redacted copy (reused if an earlier fix saved it), then, once the store holds
    the copy, the original purged. `status`: purged, copied (the purge did not finish: `next` does it),
    pending (the copy's upload is not confirmed, so the original stays), skipped or failed."""
    from agentmem.errors import AgentmemError
    from agentmem.memory import audit, curation

    if finding.named:
        return {"id": finding.id, "copy": None, "status": "skipped", "message": "its ID holds the credential"}
    copy = finding.copy
    if copy is None:
        try:
            saved = audit.save_copy(machine, cfg, finding, timeout=common.timeout(cfg))
        except AgentmemError as exc:
            return {"id": finding.id, "copy": None, "status": "failed", "error": exc.kind, "message": exc.one_line()}
        copy = saved.outcome.entry.id
        if saved.outcome.status != "saved":  # never purge the original before its copy is in the store
            return {"id": finding.id, "copy": copy, "status": "pending",
                    "message": "the copy's upload is not confirmed, so the original was not purged",
                    "next": saved.outcome.entry.retry_command()}
    try:
        done = curation.purge(machine, cfg, finding.project, finding.id, timeout=common.timeout(cfg),
                              reason=f"it held credentials (agentmem audit); redacted copy {copy}")
    except AgentmemError as exc:
        return {"id": finding.id, "copy": copy, "status": "copied", "error": exc.kind, "message": exc.one_line(),
                "next": finding.purge_step().line()}  # type: ignore[union-attr]  # not named: returned above
    if done.status != "purged":
        return {"id": finding.id, "copy": copy, "status": "copied", "next": Command(*done.next).line(),
                "message": done.problem.one_line() if done.problem else "the purge has not reached the store"}
    return {"id": finding.id, "copy": copy, "status": "purged"}


def _fixed_line(fixed: dict, shown: dict) -> str:
    if fixed["status"] == "failed":
        return f"  {fixed['id']}: no copy saved: {fixed['message']}"
    if fixed["status"] == "skipped":
        return f"  {fixed['id']}: skipped" + (f" ({fixed['message']})" if fixed.get("message") else "")
    if fixed["status"] == "purged":
        return (f"  {fixed['id']}: redacted copy {fixed['copy']} saved; the original is purged from the store and "
                "this machine's cache (every other machine drops it on its next search)")
    return (f"  {fixed['id']}: redacted copy {fixed['copy']} saved"
            f"{'' if fixed['status'] == 'copied' else ' on this machine (upload pending)'}; the original still "
            f"holds the credential in the store ({fixed['message']}): {fixed['next']}")


def _interactive() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


def _confirm(finding: Finding) -> bool:
    """Ask before a fix: which note (its title, redacted as every output shows it), and that its original goes."""
    title = f" \"{finding.title}\"" if finding.title else ""
    sys.stderr.write(f"Replace {finding.project}/{finding.id}{title} by a redacted copy, and DELETE the original "
                     "for good, from the store and every machine's cache (this cannot be undone)? [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    return answer in ("y", "yes")
