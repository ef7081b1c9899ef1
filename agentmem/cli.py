"""The `agentmem` command: a thin layer over the library.

Each handler parses nothing itself, calls library functions, and returns
(exit status, JSON-able result, text). Errors from `agentmem.errors` become one
line on stderr (and a JSON error object with --json) and their exit status.
Heavy modules are imported inside the handlers that need them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from agentmem import errors
from agentmem.errors import EXIT_OK, EXIT_PENDING, InvalidInput


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, like every other invalid input
        raise InvalidInput(f"{self.prog}: {message}")


def _home() -> Path:
    from agentmem.home import agentmem_home

    return agentmem_home()


def _config():
    from agentmem import config

    return config.require(_home())


def _read_body(source: str | None) -> bytes:
    if source in (None, "-"):
        if sys.stdin is None or sys.stdin.isatty():
            raise InvalidInput("no note body: pass a file, or pipe the Markdown on stdin")
        return sys.stdin.buffer.read(1024 * 1024 + 1)
    path = Path(source)
    try:
        with open(path, "rb") as fh:
            return fh.read(1024 * 1024 + 1)
    except FileNotFoundError:
        raise InvalidInput(f"note file {source} does not exist")
    except IsADirectoryError:
        raise InvalidInput(f"note file {source} is a directory")
    except OSError as exc:
        raise InvalidInput(f"cannot read note file {source}: {exc.strerror}")


# --- save / pending -------------------------------------------------------


def _save_text(out: dict) -> str:
    if out["status"] == "saved":
        return f"saved {out['id']} to shared memory ({out['path']})"
    reason = out.get("reason", {}).get("message", "outcome unknown")
    return (
        f"saved locally, NOT confirmed in the shared store: {reason}\n"
        f"note {out['id']} is pending; retry with: {out['retry']}"
    )


def cmd_save(args) -> tuple[int, dict, str]:
    from agentmem import notes, pending

    home = _home()
    if args.retry:
        if args.file or args.title or args.tag or args.source or args.corrects or args.kind != "note":
            raise InvalidInput("--retry takes only a note ID: the pending note is resent exactly as saved")
        from agentmem import config

        cfg = config.load(home)
        outcome = pending.retry(home, args.retry, timeout=_timeout(cfg))
        out = outcome.to_json()
        return (EXIT_OK if outcome.status == "saved" else EXIT_PENDING), out, _save_text(out)

    cfg = _config()
    project = cfg.resolve_project(explicit=args.project)
    body = notes.decode_body(_read_body(args.file))
    note = notes.build(
        body=body,
        title=args.title,
        kind=args.kind,
        project=project,
        agent=cfg.agent,
        sources=args.source,
        tags=args.tag,
        session=args.session,
        corrects=args.corrects,
    )
    data = note.render()
    entry = pending.Entry(
        id=note.id,
        store=cfg.store,
        project=project,
        path=notes.note_path(project, note.id),
        created=note.created,
    )
    pending.persist(home, entry, data)  # INV nothing-lost: safe on disk before any upload
    outcome = pending.deliver(home, entry, data, timeout=_timeout(cfg))
    out = outcome.to_json()
    return (EXIT_OK if outcome.status == "saved" else EXIT_PENDING), out, _save_text(out)


def _timeout(cfg) -> float:
    try:
        return cfg.network_timeout
    except errors.AgentmemError:
        from agentmem.config import DEFAULT_NETWORK_TIMEOUT

        return DEFAULT_NETWORK_TIMEOUT


def cmd_pending(args) -> tuple[int, dict, str]:
    from agentmem import pending

    entries = pending.list_entries(_home())
    out = {"pending": [e.to_json() | {"retry": e.retry_command()} for e in entries]}
    if not entries:
        return EXIT_OK, out, "no pending uploads"
    lines = [f"{len(entries)} pending upload(s):"]
    for e in entries:
        why = f" - last error: {e.last_error['message']}" if e.last_error else ""
        lines.append(f"  {e.id}  {e.project}  -> {e.store.label()}{why}")
        lines.append(f"    retry: {e.retry_command()}")
    return EXIT_OK, out, "\n".join(lines)


# --- search / read --------------------------------------------------------


def cmd_search(args) -> tuple[int, dict, str]:
    from agentmem import cache, pending, search

    home = _home()
    cfg = _config()
    project = cfg.resolve_project(explicit=args.project)
    if args.limit < 1 or args.limit > 200:
        raise InvalidInput("--limit must be between 1 and 200")
    status = cache.ensure_fresh(
        home, cfg.store, project, max_age=cfg.cache_max_age, timeout=_timeout(cfg),
        force=args.refresh, offline=args.offline,
    )
    query = " ".join(args.query or [])
    results = search.literal(search.candidates(home, cfg.store, project), query, args.limit)
    waiting = pending.count(home)
    out = {
        "project": project,
        "query": query,
        "mode": "literal",
        "results": [r.to_json() for r in results],
        "pending_uploads": waiting,
    } | status.to_json()
    return EXIT_OK, out, _search_text(out)


def _search_text(out: dict) -> str:
    lines = []
    if out["stale"]:
        lines.append(f"warning: results may be stale - {out['stale_reason']}")
    what = f"matching {out['query']!r}" if out["query"] else "most recent"
    lines.append(f"{len(out['results'])} note(s) {what} in project {out['project']}:")
    for r in out["results"]:
        flag = " [pending upload]" if r["pending"] else ""
        corr = f" (corrects {r['corrects']})" if r.get("corrects") else ""
        lines.append(f"- {r['id']}  {r['created'][:16].replace('T', ' ')}  {r['kind']}: {r['title']}{flag}{corr}")
        for m in r["matches"]:
            lines.append(f"    {m['line']}: {m['text']}")
    if out["pending_uploads"]:
        lines.append(f"{out['pending_uploads']} note(s) wait for upload: see `agentmem pending`")
    lines.append("Read one with: agentmem read ID")
    return "\n".join(lines)


def cmd_read(args) -> tuple[int, dict, str]:
    from agentmem import cache, notes, pending
    from agentmem.store import open_store

    home = _home()
    cfg = _config()
    project = cfg.resolve_project(explicit=args.project)
    note_id = notes.check_id(args.id)
    data, source = None, None
    if not args.fresh:
        try:
            entry, pdata = pending.load(home, note_id)
            if entry.project == project:
                data, source = pdata, "pending"
        except errors.NotFound:
            pass
        if data is None:
            data = cache.read_cached(home, cfg.store, project, note_id)
            source = "cache" if data is not None else None
    if data is None:
        store = open_store(cfg.store, timeout=_timeout(cfg))
        data = store.get(notes.note_path(project, note_id))
        source = "store"
        if not args.fresh:
            cache.add_confirmed(home, cfg.store, project, note_id, data)
    parsed = notes.parse(data)
    out = {"id": note_id, "project": project, "source": source, "meta": parsed.meta, "body": parsed.body}
    text = data.decode("utf-8", errors="replace").rstrip("\n")
    if source == "pending":
        text += f"\n\n(note {note_id} is pending upload on this machine)"
    return EXIT_OK, out, text


# --- configuration --------------------------------------------------------


def cmd_map(args) -> tuple[int, dict, str]:
    from agentmem import config

    root = config.add_mapping(_home(), args.directory, args.project)
    out = {"directory": str(root), "project": args.project}
    return EXIT_OK, out, f"mapped {root} -> project {args.project}"


def cmd_where(args) -> tuple[int, dict, str]:
    cfg = _config()
    project = cfg.resolve_project(explicit=args.project)
    out = {"home": str(_home()), "project": project, "store": cfg.store.to_dict(), "agent": cfg.agent}
    return EXIT_OK, out, f"project {project} in {cfg.store.label()} (machine folder {_home()}, agent {cfg.agent})"


# --- wiring ---------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="agentmem", description="Portable memory and skills for coding agents.")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    def command(name, func, help_text):
        sp = sub.add_parser(name, help=help_text, description=help_text)
        sp.add_argument("--json", action="store_true", help="machine-readable output")
        sp.set_defaults(func=func)
        return sp

    sp = command("save", cmd_save, "save a note or checkpoint (Markdown from FILE or stdin)")
    sp.add_argument("file", nargs="?", help="Markdown file with the note body; '-' or omitted: stdin")
    sp.add_argument("--title")
    sp.add_argument("--kind", default="note", help="note (default) or checkpoint")
    sp.add_argument("--tag", action="append", default=[])
    sp.add_argument("--source", action="append", default=[], help="a source reference (file, URL, commit)")
    sp.add_argument("--session", help="optional session or task reference")
    sp.add_argument("--corrects", metavar="ID", help="the ID of an earlier note this one corrects")
    sp.add_argument("--project", help="a configured project name (default: from the current directory)")
    sp.add_argument("--retry", metavar="ID", help="resend a pending note exactly as it was saved")

    command("pending", cmd_pending, "list notes saved locally whose upload is not confirmed")

    sp = command("search", cmd_search, "search the project's notes (empty query: most recent)")
    sp.add_argument("query", nargs="*")
    sp.add_argument("--limit", type=int, default=10)
    sp.add_argument("--project")
    sp.add_argument("--refresh", action="store_true", help="refresh the cache even if it is recent")
    sp.add_argument("--offline", action="store_true", help="use the cache only")

    sp = command("read", cmd_read, "print a note")
    sp.add_argument("id")
    sp.add_argument("--project")
    sp.add_argument("--fresh", action="store_true", help="read from the store, bypassing the cache")

    sp = command("map", cmd_map, "map a directory (and its subdirectories) to a project")
    sp.add_argument("directory")
    sp.add_argument("project")

    sp = command("where", cmd_where, "show the project and store for the current directory")
    sp.add_argument("--project")

    from agentmem import hooks_cli

    hooks_cli.register(command)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["hook"]:  # called by a runtime: always exits 0 (see hooks_cli)
        from agentmem.hooks_cli import run_hook

        return run_hook(argv[1:])
    want_json = "--json" in argv
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.version:
            from agentmem import __version__

            print(f"agentmem {__version__}")
            return EXIT_OK
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        status, out, text = args.func(args)
    except errors.AgentmemError as exc:
        return _fail(exc, want_json)
    except KeyboardInterrupt:
        return _fail(errors.AgentmemError("interrupted"), want_json)
    except OSError as exc:
        return _fail(errors.AgentmemError(f"{exc.strerror or exc}: {exc.filename or ''}".strip(": ")), want_json)
    _emit(out if want_json else text, want_json)
    return status


def _emit(payload, as_json: bool) -> None:
    try:
        if as_json:
            sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
        elif payload:
            sys.stdout.write(payload + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _fail(exc: errors.AgentmemError, as_json: bool) -> int:
    line = exc.one_line()
    if as_json:
        _emit({"status": "error", "error": exc.kind, "message": line}, True)
    sys.stderr.write(f"agentmem: {line}\n")
    return exc.exit_code
