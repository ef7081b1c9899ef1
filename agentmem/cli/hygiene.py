"""The commands that keep memory true: retract, purge, pin, unpin, review (library: memory/curation.py,
memory/review.py). Every command they print names the helper by its absolute path, quoted."""

from __future__ import annotations

import sys

from agentmem.cli import common
from agentmem.cli.result import Result
from agentmem.errors import EXIT_OK, EXIT_PENDING, InvalidInput

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    import argparse

    from agentmem.memory.curation import RecordOutcome


def _record_result(outcome: RecordOutcome, done: str) -> Result:
    from agentmem.render import record_text

    out = outcome.to_json()
    return Result(out, record_text(out, done), EXIT_PENDING if out["status"] == "pending" else EXIT_OK)


def add_retract(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("id", help="the note to retract")
    sp.add_argument("--reason", required=True, metavar="TEXT", help="why the note is no longer true (one line)")
    sp.add_argument("--project", help="a configured project name (default: from the current directory)")


def run_retract(args: argparse.Namespace) -> Result:
    from agentmem.memory import curation

    cfg = common.config()
    project = common.project(cfg, args, "retract")
    done = curation.retract(common.machine(), cfg, project, args.id, args.reason, timeout=common.timeout(cfg))
    return _record_result(done, "retracted")


def add_pin(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("id", help="the note to pin into the session-start reminder")
    sp.add_argument("--project", help="a configured project name (default: from the current directory)")


def run_pin(args: argparse.Namespace) -> Result:
    from agentmem.memory import curation

    cfg = common.config()
    project = common.project(cfg, args, "pin")
    done = curation.pin(common.machine(), cfg, project, args.id, timeout=common.timeout(cfg))
    return _record_result(done, "pinned")


add_unpin = add_pin


def run_unpin(args: argparse.Namespace) -> Result:
    from agentmem.memory import curation

    cfg = common.config()
    project = common.project(cfg, args, "unpin")
    done = curation.pin(common.machine(), cfg, project, args.id, unpin=True, timeout=common.timeout(cfg))
    return _record_result(done, "unpinned")


def add_purge(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("id", help="the note that must not exist (a leaked credential, personal data)")
    sp.add_argument("--yes", action="store_true", help="do it without asking (required when stdin is not a terminal)")
    sp.add_argument("--reason", metavar="TEXT", help="optional: why, kept in the purge record (never the content)")
    sp.add_argument("--project", help="a configured project name (default: from the current directory)")


def _confirmed(note_id: str, project: str, title: str | None) -> bool:
    """Ask on the terminal, saying what is destroyed; anything but yes keeps the note."""
    from agentmem.safety.framing import clean

    if title is None:
        named = "(no copy of it is left to name: this finishes an earlier purge)"
    else:
        shown = clean(" ".join(title.split()))
        named = f"titled \"{shown[:100]}{'...' if len(shown) > 100 else ''}\""
    sys.stderr.write(f"Purge note {note_id} of project {project}, {named}? The original is deleted from the shared "
                     "store for good, with no copy kept anywhere, and from every machine's cache; this cannot be "
                     "undone. Type 'yes' to purge: ")
    sys.stderr.flush()
    try:
        answer = sys.stdin.readline()
    except (OSError, ValueError):
        return False
    return answer.strip().lower() == "yes"


def run_purge(args: argparse.Namespace) -> Result:
    from agentmem.errors import Command
    from agentmem.memory import curation
    from agentmem.render import purge_text

    cfg = common.config()
    project = common.project(cfg, args, "purge")
    if not args.yes:
        interactive = sys.stdin is not None and sys.stdin.isatty()
        if not interactive:
            from agentmem.safety.screening import refuse_argument

            refuse_argument(args.id, "the note ID", "purge")  # the refusal below repeats the ID
            line = Command("purge", args.id, "--project", project, "--yes").line()
            raise InvalidInput(f"purge deletes note {args.id} for good (the original, from the shared store, with no "
                               f"copy kept) and asks first; without a terminal, run `{line}`; nothing was done")
        title = curation.title_of(common.machine(), cfg, project, args.id, timeout=common.timeout(cfg))
        if not _confirmed(args.id, project, title):
            raise InvalidInput("purge not confirmed; nothing was done")
    done = curation.purge(common.machine(), cfg, project, args.id, reason=args.reason, timeout=common.timeout(cfg))
    out = done.to_json()
    if done.status == "pending":
        out["next"] = Command(*done.next).line()
    return Result(out, purge_text(out), EXIT_OK if done.status == "purged" else EXIT_PENDING)


def add_review(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--project", help="a configured project name (default: from the current directory)")


def run_review(args: argparse.Namespace) -> Result:
    from agentmem.memory import review
    from agentmem.render import review_text, with_command_lines

    cfg = common.config()
    project = common.project(cfg, args, "review")
    out = with_command_lines(review.queue(common.machine(), cfg, project, timeout=common.timeout(cfg)))
    return Result(out, review_text(out))
