"""`agentmem doctor`: is this machine's memory working, and what fixes what."""

from __future__ import annotations

from agentmem.cli import common
from agentmem.cli.result import Result
from agentmem.errors import EXIT_ATTENTION, EXIT_OK
from agentmem.status import FAILED, OK, WARNING

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    import argparse

MARKS = {OK: "ok  ", WARNING: "WARN", FAILED: "FAIL"}  # a check's word, the bad ones shouted


def add_doctor(sp: argparse.ArgumentParser) -> None:
    pass  # no options beyond --json


def run_doctor(args: argparse.Namespace) -> Result:
    from agentmem import render
    from agentmem.machine import doctor

    machine = common.machine()
    cfg = common.config()
    from agentmem.setup import wiring

    checks = doctor.run(machine, cfg, timeout=common.timeout(cfg), runtime_checks=wiring.checks(machine, cfg))
    rows = []
    for c in checks:
        data = c.to_json()
        data["command"] = render.command(c.command) if c.command else None
        rows.append(data)
    lines = []
    for check, row in zip(checks, rows, strict=True):
        lines.append(f"{MARKS[check.status]}  {row['name']}: {row['detail']}")
        if check.status != OK and (row["fix"] or row["command"]):
            fix = row["fix"] or ""
            lines.append(f"      fix: {fix}{': ' if fix and row['command'] else ''}{row['command'] or ''}")
    failed = sum(1 for c in checks if c.status == FAILED)
    warned = sum(1 for c in checks if c.status == WARNING)
    lines.append(f"{len(rows)} check(s): {failed} failed, {warned} to look at" if failed or warned
                 else f"{len(rows)} check(s): all ok")
    out = {"status": "broken" if failed else "ok", "checks": rows, "failed": failed, "warned": warned}
    return Result(out, "\n".join(lines), EXIT_ATTENTION if failed else EXIT_OK)

