"""The commands that keep memory true: retract, purge, pin, unpin, review (library: memory/hygiene.py,
memory/review.py). Every command they print names the helper by its absolute path, quoted."""

from __future__ import annotations

import sys

from agentmem.cli import common
from agentmem.cli.result import Result
from agentmem.errors import EXIT_OK, EXIT_PENDING, InvalidInput


def _record_text(out: dict, done: str) -> str:
    note = out["note"]
    if out["status"] == "unchanged":
        return f"note {note} was already {done}; nothing was written"
    if out["status"] == "saved":
        return f"{done} {note}: record {out['record']['record']} saved to shared memory ({out['path']})"
    reason = out.get("reason", {}).get("message", "outcome unknown")
    return (f"{done} {note} on this machine; the record is NOT confirmed in the shared store: {reason}\n"
            f"it is pending; retry with: {out['retry']}")


def _record_result(outcome, done: str) -> Result:
    out = outcome.to_json()
    return Result(out, _record_text(out, done), EXIT_PENDING if out["status"] == "pending" else EXIT_OK)


def add_retract(sp) -> None:
    sp.add_argument("id", help="the note to retract")
    sp.add_argument("--reason", required=True, metavar="TEXT", help="why the note is no longer true (one line)")
    sp.add_argument("--project", help="a configured project name (default: from the current directory)")


def run_retract(args) -> Result:
    from agentmem.memory import hygiene

    cfg = common.config()
    project = common.project(cfg, args, "retract")
    done = hygiene.retract(common.machine(), cfg, project, args.id, args.reason, timeout=common.timeout(cfg))
    return _record_result(done, "retracted")


def add_pin(sp) -> None:
    sp.add_argument("id", help="the note to pin into the session-start reminder")
    sp.add_argument("--project", help="a configured project name (default: from the current directory)")


def run_pin(args) -> Result:
    from agentmem.memory import hygiene

    cfg = common.config()
    project = common.project(cfg, args, "pin")
    done = hygiene.pin(common.machine(), cfg, project, args.id, timeout=common.timeout(cfg))
    return _record_result(done, "pinned")


add_unpin = add_pin


def run_unpin(args) -> Result:
    from agentmem.memory import hygiene

    cfg = common.config()
    project = common.project(cfg, args, "unpin")
    done = hygiene.pin(common.machine(), cfg, project, args.id, unpin=True, timeout=common.timeout(cfg))
    return _record_result(done, "unpinned")


def add_purge(sp) -> None:
    sp.add_argument("id", help="the note that must not exist (a leaked credential, personal data)")
    sp.add_argument("--yes", action="store_true", help="do it without asking (required when stdin is not a terminal)")
    sp.add_argument("--reason", metavar="TEXT", help="optional: why, kept in the purge record (never the content)")
    sp.add_argument("--project", help="a configured project name (default: from the current directory)")


def _confirmed(note_id: str, project: str) -> bool:
    """Ask on the terminal; anything but yes keeps the note."""
    sys.stderr.write(f"Purge note {note_id} of project {project}? It is deleted from the store and from every "
                     "machine's cache, for good. Type 'yes' to purge: ")
    sys.stderr.flush()
    try:
        answer = sys.stdin.readline()
    except (OSError, ValueError):
        return False
    return answer.strip().lower() == "yes"


def run_purge(args) -> Result:
    from agentmem.launch import shell_line
    from agentmem.memory import hygiene

    cfg = common.config()
    project = common.project(cfg, args, "purge")
    if not args.yes:
        interactive = sys.stdin is not None and sys.stdin.isatty()
        if not interactive:
            raise InvalidInput(f"purge deletes note {args.id} for good and asks first; without a terminal, run "
                               f"`{shell_line('purge', args.id, '--project', project, '--yes')}`; nothing was done")
        if not _confirmed(args.id, project):
            raise InvalidInput("purge not confirmed; nothing was done")
    done = hygiene.purge(common.machine(), cfg, project, args.id, reason=args.reason, timeout=common.timeout(cfg))
    out = done.to_json()
    if done.status == "purged":
        where = "deleted from the store" if done.deleted else "not in the store (already gone)"
        text = (f"purged {done.note}: {where}; purge record {done.record['record']} tells every other machine to "
                "drop it at its next search")
        return Result(out, text)
    out["next"] = shell_line(*done.next)
    why = out.get("reason", {}).get("message", "outcome unknown")
    text = (f"purged {done.note} from this machine, but the store is not done yet: {why}\n"
            f"finish it with: {out['next']}")
    return Result(out, text, EXIT_PENDING)


def add_review(sp) -> None:
    sp.add_argument("--project", help="a configured project name (default: from the current directory)")


def run_review(args) -> Result:
    from agentmem.memory import review

    cfg = common.config()
    project = common.project(cfg, args, "review")
    out = with_command_lines(review.queue(common.machine(), cfg, project, timeout=common.timeout(cfg)))
    return Result(out, review_text(out))


def with_command_lines(out: dict) -> dict:
    """Each item's commands also as the line to run (the absolute helper, shell-quoted)."""
    from agentmem.launch import shell_line

    for item in out["items"]:
        for command in item["commands"]:
            command["command"] = shell_line(*command["argv"])
    return out


def review_text(out: dict) -> str:
    """The queue for a person or an agent: our words and IDs; the notes' titles framed as data."""
    from agentmem.safety.framing import frame_lines

    lines = []
    if out.get("stale"):
        lines.append(f"warning: the queue may be stale - {out['stale_reason']}")
    items = out["items"]
    lines.append(f"{len(items)} item(s) to review in project {out['project']}" + (":" if items else ""))
    titles: dict[str, str] = {}
    for item in items:
        lines.append(f"- {item['kind']}: {item['summary']}")
        for command in item["commands"]:
            lines.append(f"    {command['command']}" + (f"  # {command['note']}" if command.get("note") else ""))
        titles.update(item.get("titles", {}))
    if titles:  # titles are note content: quoted data, not instructions (INV framed-recall)
        lines.extend(frame_lines([f"{k}: {v}" for k, v in sorted(titles.items())], label="note titles"))
    return "\n".join(lines)
