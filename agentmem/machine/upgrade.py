"""Upgrade this machine folder to a newer template revision: `agentmem upgrade`.

`copier update` alone trips over three things on a real machine: it refuses a folder
with uncommitted edits ("Destination repository is dirty"), `copier` is usually not on
PATH (it ran from a checkout's venv or a throwaway `uvx`), and without `--defaults` it
stops asking questions where there is no terminal. So the upgrade:

1. commits the machine folder's own edits (config.toml, the block, the skill copy: the
   only files git tracks there), with a local identity if git has none (`repo.identity`);
2. runs `copier update --trust --defaults [--vcs-ref REF] [--data K=V ...] FOLDER` with
   the Copier that set the folder up (its interpreter is recorded in
   `.venv/agentmem-install.json`), else `uvx` or `pipx` running the pinned Copier, else
   a `copier` on PATH. Copier merges the new template with the folder's edits and its
   "after" migrations reinstall the helper, rerun setup and commit.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from agentmem.errors import NotConfigured
from agentmem.machine.answers import ANSWERS_FILE

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Sequence

# The Copier release the template is tested with (pyproject.toml pins the same; a test checks).
COPIER_VERSION = "9.19.1"
INSTALL_RECORD = ".venv/agentmem-install.json"


def _recorded(machine: Path) -> dict:
    try:
        data = json.loads((machine / INSTALL_RECORD).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _has_copier(python: str) -> bool:
    probe = subprocess.run([python, "-c", "import copier"], capture_output=True, timeout=60)
    return probe.returncode == 0


def copier_command(machine: Path) -> list[str]:
    """The command that starts Copier here, most faithful first."""
    record = _recorded(machine)
    python = record.get("copier_python")
    if isinstance(python, str) and os.path.isfile(python) and _has_copier(python):
        return [python, "-m", "copier"]
    version = record.get("copier_version") if isinstance(record.get("copier_version"), str) else COPIER_VERSION
    if shutil.which("uvx"):
        return ["uvx", "--from", f"copier=={version}", "copier"]
    if shutil.which("pipx"):
        return ["pipx", "run", "--spec", f"copier=={version}", "copier"]
    if shutil.which("copier"):
        return ["copier"]
    where = f" (the one that set this folder up, {python}, is gone)" if python else ""
    raise NotConfigured(f"no Copier to run the upgrade with{where}",
                        hint=f"install uv, pipx or copier=={version} (pip install copier=={version}), "
                             "then run the upgrade again")


class Plan:
    """What `agentmem upgrade` will do: the copier command (None when already at the target), whether the
    folder's own edits were committed, where it goes and why, and what was repaired first."""

    __slots__ = ("argv", "committed", "current", "target", "why", "repaired")

    def __init__(self, argv: list[str] | None, committed: bool, current: str | None, target: str | None,
                 why: str | None, repaired: str | None):
        self.argv, self.committed, self.current = argv, committed, current
        self.target, self.why, self.repaired = target, why, repaired

    def to_json(self) -> dict:
        return {"from": self.current, "to": self.target, "why": self.why, "repaired": self.repaired,
                "committed_local_edits": self.committed, "command": self.argv}


def prepare(machine: Path, vcs_ref: str | None = None, data: Sequence[str] = ()) -> Plan:
    """Mend a recorded revision that exists nowhere, find where the update goes, commit the folder's own
    edits; the copier command is None when the folder is already at the target and no answer changes."""
    from agentmem.machine import repo, template_source

    if not (machine / ANSWERS_FILE).is_file() or not (machine / ".git").exists():
        raise NotConfigured(f"{machine} was not set up by `copier copy` (no {ANSWERS_FILE} or git repository)",
                            hint="set it up from the template first (bootstrap.md)")
    found = repo.conflicted(machine)
    if found:  # a conflicted earlier upgrade: its way out, not a second update over the markers
        raise repo.conflicts_error(machine, found)
    repaired = template_source.repair(machine)
    src, current = template_source.recorded(machine)
    goal = template_source.target(src, vcs_ref) if src else None
    at = template_source.resolve(src, current) if src and current else None
    message = ("Local edits, committed by agentmem upgrade before copier update" if not repaired
               else "agentmem upgrade: the template revision recorded, mended")
    if goal is not None and at == goal[1] and not data:
        return Plan(None, bool(repaired) and repo.commit(machine, message), current, goal[0], goal[2], repaired)
    argv = [*copier_command(machine), "update", "--trust", "--defaults"]  # before committing: it may stop
    if vcs_ref:
        argv += ["--vcs-ref", vcs_ref]
    argv += [f"--data={item}" for item in data]
    committed = repo.commit(machine, message)
    return Plan([*argv, str(machine)], committed, current, goal[0] if goal else vcs_ref,
                goal[2] if goal else None, repaired)
