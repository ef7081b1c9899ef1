"""Setup's report: one step per line, each with its status from the one vocabulary (`agentmem/status.py`),
written as the word itself in the text and in `setup --json`; and the verdict (confirmed | pending | failed),
which is the whole run's, not a step's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentmem.errors import EXIT_UNEXPECTED, Command
from agentmem.status import WARNING, Status


@dataclass
class Step:
    name: str
    status: Status  # ok | changed | skipped | pending | warning | failed
    detail: str = ""


@dataclass
class SetupReport:
    machine: str
    outcome: str = "failed"  # confirmed | pending | failed
    steps: list[Step] = field(default_factory=list)
    exit_code: int = EXIT_UNEXPECTED  # the exit status of the failure that stopped setup
    store: dict | None = None  # which store was chosen and who can reach it (store_reach)
    helper: list[str] | None = None  # the helper command setup records, which the report's commands name
    team: dict | None = None  # with [team]: the team store's answer (machine/team_access.py), else absent

    def add(self, name: str, status: Status, detail: str = "") -> Step:
        step = Step(name, Status(status), detail)  # a word outside the vocabulary is a mistake: ValueError
        self.steps.append(step)
        return step

    def to_dict(self) -> dict:
        out: dict = {"status": self.outcome, "home": self.machine, "steps": [
            {"name": s.name, "status": s.status.value, "detail": s.detail} for s in self.steps]}
        if self.store is not None:
            out["store"] = self.store
        if self.team is not None:
            out["team"] = self.team
        return out

    def text(self) -> str:
        lines = [f"{s.name}: {s.status.value}" + (f" - {s.detail}" if s.detail else "") for s in self.steps]
        if self.store is not None:
            lines.append(f"Store: {self.store['summary']}")
        rerun = Command("setup", helper=self.helper).line()
        verdict = {
            "confirmed": "Setup verified: the note was saved, read back from the store and found by search.",
            "pending": "Setup incomplete: the verification note is saved on this machine only (upload pending); "
                       f"run `{rerun}` again once the store is reachable.",
            "failed": f"Setup FAILED: see the failed step above; fix its cause, then run `{rerun}` "
                      "(it resumes; nothing is duplicated).",
        }[self.outcome]
        warned = [s.name for s in self.steps if s.status == WARNING]
        if warned:
            verdict += f" Needs attention: {', '.join(warned)} (see above)."
        if self.team is not None and self.team.get("status") != "ok":
            verdict += (" The team step's problem leaves this verdict and the exit status as they are: they are "
                        "your personal setup's.")
        return "\n".join([*lines, verdict])
