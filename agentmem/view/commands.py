"""The commands the memory view gives for each note (retract, pin or unpin, purge; retry for a pending
upload: `data.note_states`), each exactly as it runs (INV printed-commands-run).

They are rendered here, by `errors.Command.line` like every command the helper prints (the absolute
helper, each word quoted for a POSIX shell). A project's commands differ only in the note's ID, which
never needs quoting (`ids.ID`: letters, digits, `_`, `-`), so the page carries each command once per
project with `PLACEHOLDER` where the ID goes, and puts the note's ID there; 100k notes do not carry
400k copies of the helper's path.

A command needs its project mapped on this machine (`--project` names a configured project only), so
a project no directory here maps gets no commands, and the page says how to map it.
"""

from __future__ import annotations

from agentmem.errors import Command

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from agentmem.config import Config

PLACEHOLDER = "NOTE-ID"  # a word shell.word leaves bare, as it leaves every note ID
RETRACT_REASON = "no longer true"  # the reason a copied retract records; the owner may edit it before running


def steps(note_id: str, project: str, team: bool = False) -> dict[str, Command]:
    """The commands that act on one note of `project` (the page picks pin or unpin by the note's state);
    `team`: a note of the team's store, each command with `--team`."""
    scope = ("--team",) if team else ()
    return {
        "retract": Command("retract", note_id, "--project", project, *scope, "--reason", RETRACT_REASON),
        "pin": Command("pin", note_id, "--project", project, *scope),
        "unpin": Command("unpin", note_id, "--project", project, *scope),
        "purge": Command("purge", note_id, "--project", project, *scope),
    }


def for_project(cfg: Config, project: str) -> dict:
    """{"lines": {name: command line with PLACEHOLDER for the note's ID}} for a project mapped here (and,
    with a team on this machine, "team": {"lines": ...} for the team's notes), else {"lines": None, "map":
    the command that maps a directory to it (DIRECTORY: the checkout to map)}."""
    if project not in cfg.project_names():
        return {"lines": None, "map": Command("map", "DIRECTORY", project).line()}
    out: dict = {}
    for team in ([False, True] if cfg.team is not None else [False]):
        lines = {name: step.line() for name, step in steps(PLACEHOLDER, project, team).items()}
        for line in lines.values():  # the ID goes in one place: the placeholder is nowhere else in the line
            if line.count(PLACEHOLDER) != 1:
                return {"lines": None, "map": None}
        if team:
            out["team"] = {"lines": lines, "placeholder": PLACEHOLDER}
        else:
            out |= {"lines": lines, "placeholder": PLACEHOLDER}
    return out


def for_note(template: str, note_id: str) -> str:
    """A project's command line for one note: what the page does with the template (tests check it)."""
    return template.replace(PLACEHOLDER, note_id)
