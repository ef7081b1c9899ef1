"""The commands that keep memory true: retract, purge, pin, unpin, review, promote (library: memory/curation.py,
memory/review.py, memory/promotion.py; either store through memory/team_curation.py). Every command they
print names the helper by its absolute path, quoted."""

from __future__ import annotations

import sys

from agentmem.cli import common
from agentmem.cli.result import Result
from agentmem.errors import EXIT_OK, EXIT_PENDING, Command, InvalidInput, NextStep

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    import argparse

    from agentmem.config import Config
    from agentmem.memory.curation import RecordOutcome

TEAM_HELP = ("act on the note in the team's store ([team] in config.toml); without it, a note only the team's "
             "store holds on this machine is acted on there too")


def _add_team(sp: argparse.ArgumentParser, help: str = TEAM_HELP) -> None:
    sp.add_argument("--team", action="store_true", help=help)


def _scope(args: argparse.Namespace) -> str | None:
    return "team" if args.team else None


def _record_result(outcome: RecordOutcome, cfg: Config, where: Config, done: str) -> Result:
    from agentmem.memory.team_curation import scope_of
    from agentmem.render import record_text

    out = outcome.to_json() | scope_of(cfg, where)
    return Result(out, record_text(out, done), EXIT_PENDING if out["status"] == "pending" else EXIT_OK)


def add_retract(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("id", help="the note to retract")
    sp.add_argument("--reason", required=True, metavar="TEXT", help="why the note is no longer true (one line)")
    sp.add_argument("--project", help="a configured project name (default: from the current directory)")
    _add_team(sp)


def run_retract(args: argparse.Namespace) -> Result:
    from agentmem.memory import team_curation

    cfg = common.config()
    project = common.project(cfg, args, "retract")
    done, where = team_curation.retract(common.machine(), cfg, project, args.id, args.reason, scope=_scope(args),
                                        timeout=common.timeout(cfg))
    return _record_result(done, cfg, where, "retracted")


def add_pin(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("id", help="the note to pin into the session-start reminder")
    sp.add_argument("--project", help="a configured project name (default: from the current directory)")
    _add_team(sp)


def _run_pin(args: argparse.Namespace, unpin: bool) -> Result:
    from agentmem.memory import team_curation

    cfg = common.config()
    project = common.project(cfg, args, "unpin" if unpin else "pin")
    done, where = team_curation.pin(common.machine(), cfg, project, args.id, unpin=unpin, scope=_scope(args),
                                    timeout=common.timeout(cfg))
    return _record_result(done, cfg, where, "unpinned" if unpin else "pinned")


def run_pin(args: argparse.Namespace) -> Result:
    return _run_pin(args, unpin=False)


add_unpin = add_pin


def run_unpin(args: argparse.Namespace) -> Result:
    return _run_pin(args, unpin=True)


def add_purge(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("id", help="the note that must not exist (a leaked credential, personal data)")
    sp.add_argument("--yes", action="store_true", help="do it without asking (required when stdin is not a terminal)")
    sp.add_argument("--reason", metavar="TEXT", help="optional: why, kept in the purge record (never the content)")
    sp.add_argument("--project", help="a configured project name (default: from the current directory)")
    _add_team(sp)


def _confirmed(note_id: str, project: str, title: str | None, team: bool) -> bool:
    """Ask on the terminal, saying what is destroyed; anything but yes keeps the note."""
    from agentmem.safety.framing import clean

    if title is None:
        named = "(no copy of it is left to name: this finishes an earlier purge)"
    else:
        shown = clean(" ".join(title.split()))
        named = f"titled \"{shown[:100]}{'...' if len(shown) > 100 else ''}\""
    which = "the team's shared store (every member loses it)" if team else "the shared store"
    sys.stderr.write(f"Purge {'team ' if team else ''}note {note_id} of project {project}, {named}? The original is "
                     f"deleted from {which} for good, with no copy kept anywhere, and from every machine's cache; "
                     "this cannot be undone. Type 'yes' to purge: ")
    sys.stderr.flush()
    try:
        answer = sys.stdin.readline()
    except (OSError, ValueError):
        return False
    return answer.strip().lower() == "yes"


def run_purge(args: argparse.Namespace) -> Result:
    from agentmem.errors import Command, NextStep
    from agentmem.memory import curation, team_curation
    from agentmem.render import purge_text

    cfg = common.config()
    project = common.project(cfg, args, "purge")
    where = team_curation.target(common.machine(), cfg, project, args.id, scope=_scope(args))
    team = ("--team",) if where.scope == "team" else ()
    if not args.yes:
        interactive = sys.stdin is not None and sys.stdin.isatty()
        if not interactive:
            from agentmem.safety.screening import refuse_argument

            refuse_argument(args.id, "the note ID", "purge")  # the refusal below repeats the ID
            store = "the team's shared store" if team else "the shared store"
            raise InvalidInput(f"purge deletes note {args.id} for good (the original, from {store}, with no "
                               "copy kept) and asks first; nothing was done",
                               hint=NextStep("without a terminal, run `{}`",
                                             curation.purge_command(args.id, project, team=bool(team))))
        title = curation.title_of(common.machine(), where, project, args.id, timeout=common.timeout(cfg))
        if not _confirmed(args.id, project, title, bool(team)):
            raise InvalidInput("purge not confirmed; nothing was done")
    done, where = team_curation.purge(common.machine(), cfg, project, args.id, reason=args.reason,
                                      scope=where.scope, timeout=common.timeout(cfg))
    out = done.to_json() | team_curation.scope_of(cfg, where)
    if done.status == "pending":
        out["next"] = Command(*done.next).line()
    return Result(out, purge_text(out), EXIT_OK if done.status == "purged" else EXIT_PENDING)


def add_review(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--project", help="a configured project name (default: from the current directory)")
    _add_team(sp, "only the team store's queue ([team] in config.toml); without it, both stores' items, each "
              "with its scope")


def run_review(args: argparse.Namespace) -> Result:
    from agentmem.memory import team_curation
    from agentmem.render import review_text, with_command_lines

    cfg = common.config()
    project = common.project(cfg, args, "review")
    out = with_command_lines(team_curation.review(common.machine(), cfg, project, scope=_scope(args),
                                                  timeout=common.timeout(cfg)))
    return Result(out, review_text(out))


def add_promote(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("id", help="the note of yours to copy into the team store")
    sp.add_argument("--project", help="a configured project name (default: from the current directory)")


def run_promote(args: argparse.Namespace) -> Result:
    from agentmem.memory import promotion

    cfg = common.config()
    project = common.project(cfg, args, "promote")
    done = promotion.promote(common.machine(), cfg, project, args.id, timeout=common.timeout(cfg))
    out = done.to_json()
    if done.status == "already-promoted" and done.waiting:
        text = NextStep.of(f"note {done.note} was already promoted as team note {done.team_note}, still pending "
                           "upload (not confirmed in the team store): `", Command("pending"), "`; nothing was "
                           "written").text()
    elif done.status == "already-promoted":
        text = (f"note {done.note} was already promoted: team note {done.team_note} came from it; "
                "nothing was written")
    elif done.status == "promoted":
        text = (f"promoted {done.note} to the team store as team note {done.team_note} "
                f"({out['save']['path']}); your note stays in your own store")
    else:
        why = out["save"].get("reason", {}).get("message", "outcome unknown")
        text = (f"promoted {done.note} as team note {done.team_note} on this machine; NOT confirmed in the team "
                f"store: {why}\nit is pending; retry with: {out['save']['retry']}")
    return Result(out, text, EXIT_PENDING if done.status == "pending" or done.waiting else EXIT_OK)
