"""Upgrade this machine folder to a newer template revision: `agentmem upgrade`.

`copier update` alone trips over three things on a real machine: it refuses a folder
with uncommitted edits ("Destination repository is dirty"), `copier` is usually not on
PATH (it ran from a checkout's venv or a throwaway `uvx`), and without `--defaults` it
stops asking questions where there is no terminal. So the upgrade:

0. checks first, committing nothing when either fails: that the template has the revision asked for
   (else it names the release tags it has), and that each `--data` answer names a question of that
   revision's copier.yml and fits its type (Copier would ignore an unknown name and take any word
   for yes);
1. commits the machine folder's own edits (config.toml, the block, the skill copy: the
   only files git tracks there), with a local identity if git has none (`repo.identity`);
2. runs `copier update --trust --defaults [--vcs-ref REF] [--data K=V ...] FOLDER` with
   the Copier that set the folder up (its interpreter is recorded in
   `.venv/agentmem-install.json`), else `uvx` or `pipx` running the pinned Copier, else
   a `copier` on PATH. Copier merges the new template with the folder's edits and its
   "after" migrations reinstall the helper, rerun setup and commit. A Python traceback Copier prints
   is kept back and only its message said, in one line; when Copier fails having changed nothing,
   the commit of step 1 is taken back, so the folder's edits are uncommitted again, as they were.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from agentmem.errors import Command, InvalidInput, NextStep, NotConfigured, NotFound, Option
from agentmem.machine.answers import ANSWERS_FILE

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

# The Copier release the template is tested with (pyproject.toml pins the same; a test checks).
COPIER_VERSION = "9.19.1"
INSTALL_RECORD = ".venv/agentmem-install.json"
MAX_TAGS_SHOWN = 10  # the newest release tags a "no such revision" names
BOOLEAN_WORDS = {"true", "false", "yes", "no", "on", "off", "y", "n", "1", "0"}


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
    """Check the revision asked for and the answers given, mend a recorded revision that exists nowhere, find
    where the update goes, commit the folder's own edits; the copier command is None when the folder is
    already at the target and no answer changes. A revision the template lacks, or an answer no question
    takes, stops it before anything is written or committed."""
    from agentmem import repo
    from agentmem.machine import template_source

    if not (machine / ANSWERS_FILE).is_file() or not (machine / ".git").exists():
        raise NotConfigured(f"{machine} was not set up by `copier copy` (no {ANSWERS_FILE} or git repository)",
                            hint="set it up from the template first (bootstrap.md)")
    found = repo.conflicted(machine)
    if found:  # a conflicted earlier upgrade: its way out, not a second update over the markers
        raise repo.conflicts_error(machine, found)
    src, current = template_source.recorded(machine)
    if src and vcs_ref and vcs_ref != CURRENT:
        _check_revision(src, vcs_ref)
    goal = template_source.target(src, current if vcs_ref == CURRENT else vcs_ref) if src else None
    if src and data:
        _check_answers(src, goal[1] if goal else None, data)
    repaired = template_source.repair(machine)
    if repaired:
        current = template_source.recorded(machine)[1]
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


# Copier's name for the revision the folder was rendered from (an answer changed, the template kept).
CURRENT = ":current:"


def _check_revision(src: str, ref: str) -> None:
    """NotFound, naming the release tags there are, when the template has no revision `ref`."""
    from agentmem.machine import template_source

    if template_source.has_revision(src, ref) is not False:
        return
    tags = template_source.release_tags(src)
    shown = ", ".join(tags[-MAX_TAGS_SHOWN:]) + (f" and {len(tags) - MAX_TAGS_SHOWN} older" if
                                                 len(tags) > MAX_TAGS_SHOWN else "")
    raise NotFound(f"the template {src} has no revision {ref!r}; nothing was changed or committed",
                   hint=NextStep.of(f"its release tags: {shown}; name one with ", Option("vcs-ref"), ", or run `",
                                    Command("upgrade"), "` for the newest") if tags
                   else NextStep("it has no release tags; name a branch or commit of it with {}, or run "
                                 "`{}` for its HEAD", Option("vcs-ref"), Command("upgrade")))


def _check_answers(src: str, commit: str | None, data: Sequence[str]) -> None:
    """InvalidInput for an answer the target revision's copier.yml asks no question for, or one its question's
    type cannot take (Copier would take `hybrid=maybe` for yes, and ignore an unknown name)."""
    from agentmem.machine import template_source

    text = template_source.file_at(src, commit, "copier.yml") if commit else None
    if text is None:
        return
    import yaml

    try:
        spec = yaml.safe_load(text)
    except yaml.YAMLError:
        return
    if not isinstance(spec, dict):
        return
    questions = {k: (v if isinstance(v, dict) else {}) for k, v in spec.items()
                 if isinstance(k, str) and not k.startswith("_")}
    for item in data:
        key, _, value = item.partition("=")
        key = key.strip()
        if key not in questions:
            raise InvalidInput(NextStep.of(Option("data", f"{key}=..."), f": the template asks no question {key!r} "
                                           f"(its questions: {', '.join(questions)}); nothing was changed or "
                                           "committed"))
        kind = questions[key].get("type", "yaml")
        problem = None
        if kind == "bool" and value.strip().lower() not in BOOLEAN_WORDS:
            problem = f"{key} is yes or no (true or false)"
        elif kind in ("yaml", "json"):
            try:
                yaml.safe_load(value)
            except yaml.YAMLError as exc:
                problem = f"it is not {kind.upper()} ({_yaml_problem(exc)})"
        elif kind in ("int", "float"):  # Copier's int and float casts
            try:
                (int if kind == "int" else float)(value)
            except ValueError:
                problem = f"it is a number ({kind})"
        if problem:
            raise InvalidInput(NextStep.of(Option("data", f"{key}={value}"), f": {problem}; nothing was changed or "
                                           "committed"))


def _yaml_problem(exc: Exception) -> str:
    """A YAML error in a few words: what was wrong, and at which column of the answer."""
    problem = getattr(exc, "problem", None) or " ".join(str(exc).split())
    mark = getattr(exc, "problem_mark", None)
    return f"{problem}, at column {mark.column + 1}" if mark is not None else problem


class Ran:
    """How `copier update` ended: its exit status, the message of the exception it died of (its
    traceback kept back), and whether the local edits were uncommitted again (it changed nothing)."""

    __slots__ = ("code", "error", "undone")

    def __init__(self, code: int, error: str | None, undone: bool):
        self.code, self.error, self.undone = code, error, undone


def run(machine: Path, plan: Plan, echo: Callable[[str], object], *, stdout: Any = None) -> Ran:
    """Run the plan's copier command: its output goes on as it comes (stdout to `stdout`, default this
    process's; each stderr line to `echo`), except a Python traceback, of which only the exception's
    message is kept (`Ran.error`). When it fails having changed nothing, the commit `prepare` made of the
    folder's own edits is taken back, so they are uncommitted again, as they were."""
    from agentmem import repo

    assert plan.argv is not None
    head = repo.head(machine)
    proc = subprocess.Popen(plan.argv, stdout=stdout, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                            errors="replace", bufsize=1)
    kept = _Tracebacks(echo)
    assert proc.stderr is not None
    for line in proc.stderr:
        kept.feed(line)
    code = proc.wait()
    # repo.uncommit takes it back only while HEAD is still that commit and the files are as it left them
    undone = bool(code and plan.committed and head is not None and repo.uncommit(machine, head))
    return Ran(code, kept.error(), undone)


class _Tracebacks:
    """Lines passed on, except from a `Traceback (most recent call last):` line on: kept back."""

    def __init__(self, echo: Callable[[str], object]):
        self.echo = echo
        self.held: list[str] = []

    def feed(self, line: str) -> None:
        if self.held or line.startswith("Traceback (most recent call last):"):
            self.held.append(line.rstrip("\n"))
        else:
            self.echo(line)

    def error(self) -> str | None:
        """The last exception's message (`ValueError: ...` less its class), with the unindented lines that
        continue it (a YAML error's second half); None when no traceback came."""
        import re

        named = [i for i, line in enumerate(self.held) if re.match(r"[A-Za-z_][\w.]*(: |$)", line)]
        if not named:
            return None
        first = self.held[named[-1]]
        more = [line.strip() for line in self.held[named[-1] + 1:] if line.strip() and not line[0].isspace()]
        text = re.sub(r"^[A-Za-z_][\w.]*(: |$)", "", first, count=1) or first
        return "; ".join(part.rstrip(".") for part in [text, *more])
