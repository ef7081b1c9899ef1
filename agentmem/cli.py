"""The `agentmem` command: a thin layer over the library.

Each handler parses nothing itself, calls library functions, and returns
(exit status, JSON-able result, text). Errors from `agentmem.errors` become one
line on stderr (and a JSON error object with --json) and their exit status.
Heavy modules are imported inside the handlers that need them.
"""

from __future__ import annotations

import json
import os
import sys

from agentmem import errors, quickargs
from agentmem.errors import EXIT_OK, EXIT_PENDING, InvalidInput


def _formatter(prog: str):
    import argparse

    # argparse sizes help with shutil, whose import (bz2, lzma) costs ~3 ms per call; ask the OS directly.
    try:
        width = os.get_terminal_size().columns - 2
    except OSError:
        width = 78
    return argparse.HelpFormatter(prog, width=max(40, width))


def _parser_class():
    """argparse's parser, reporting errors as our one-line InvalidInput (argparse is imported here only)."""
    import argparse

    class Parser(argparse.ArgumentParser):
        def __init__(self, *args, **kwargs):
            kwargs.setdefault("formatter_class", _formatter)
            super().__init__(*args, **kwargs)

        def error(self, message):  # one line, exit 2, like every other invalid input
            where = self.prog.removeprefix("agentmem").strip()
            raise InvalidInput(f"{where}: {message}" if where else message)

    return Parser


def _home() -> str:
    from agentmem.home import agentmem_home

    return agentmem_home()


def _home_path():
    """The machine folder as a pathlib.Path, for commands off the per-turn path (setup, skills, map)."""
    from pathlib import Path

    return Path(_home())


def _config():
    from agentmem import config

    return config.require(_home())


def _read_body(source: str | None) -> bytes:
    if source in (None, "-"):
        if sys.stdin is None or sys.stdin.isatty():
            raise InvalidInput("no note body: pass a file, or pipe the Markdown on stdin")
        return sys.stdin.buffer.read(1024 * 1024 + 1)
    from agentmem.fsutil import read_bytes

    try:
        return read_bytes(source, 1024 * 1024 + 1)
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
    if args.retry is not None:
        if args.file or args.title or args.tag or args.source or args.corrects or args.kind != "note" or args.redact:
            raise InvalidInput("--retry takes only a note ID: the pending note is resent exactly as saved")
        from agentmem import config

        cfg = config.load(home)
        outcome = pending.retry(home, args.retry, timeout=_timeout(cfg))
        out = outcome.to_json()
        return (EXIT_OK if outcome.status == "saved" else EXIT_PENDING), out, _save_text(out)

    from agentmem import secrets_scan

    cfg = _config()
    project = cfg.resolve_project(explicit=args.project)
    body = notes.decode_body(_read_body(args.file))
    # INV no-credentials: a note carrying a credential is refused before anything is written.
    fields, redacted = secrets_scan.screen(
        {"body": body, "title": args.title, "tag": args.tag, "source": args.source, "session": args.session},
        redact_found=args.redact,
        known=secrets_scan.env_secrets(),
    )
    note = notes.build(
        body=fields["body"],
        title=fields["title"],
        kind=args.kind,
        project=project,
        agent=cfg.agent,
        sources=fields["source"],
        tags=fields["tag"],
        session=fields["session"],
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
    text = _save_text(out)
    if args.redact:
        out["redacted"] = redacted
        if redacted:
            text += "\nredacted " + ", ".join(f"{r['kind']} ({r['where']})" for r in redacted)
    return (EXIT_OK if outcome.status == "saved" else EXIT_PENDING), out, text


def _timeout(cfg) -> float:
    """The network deadline. A malformed setting falls back to the default with a warning, so a
    typo in config.toml never stops a note from being saved (it stays pending if the store fails)."""
    try:
        return cfg.network_timeout
    except errors.AgentmemError as exc:
        from agentmem.config import DEFAULT_NETWORK_TIMEOUT

        sys.stderr.write(f"agentmem: warning: {exc.one_line()}; using {DEFAULT_NETWORK_TIMEOUT:g} s\n")
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
    mode = args.mode or cfg.search_mode
    if mode == "literal":
        results = search.literal(search.candidates(home, cfg.store, project), query, args.limit)
    else:
        results = search.ranked(home, cfg.store, project, query, args.limit, mode)
    waiting = pending.count(home)
    out = {
        "project": project,
        "query": query,
        "mode": mode,
        "results": [r.to_json() for r in results],
        "pending_uploads": waiting,
    } | status.to_json()
    return EXIT_OK, out, _search_text(out)


def _search_text(out: dict) -> str:
    from agentmem.framing import frame_lines

    lines = []
    if out["stale"]:
        lines.append(f"warning: results may be stale - {out['stale_reason']}")
    what = f"matching {out['query']!r}" if out["query"] else "most recent"
    lines.append(f"{len(out['results'])} note(s) {what} in project {out['project']}:")
    found = []
    for r in out["results"]:
        flag = " [pending upload]" if r["pending"] else ""
        corr = f" (corrects {r['corrects']})" if r.get("corrects") else ""
        found.append(f"- {r['id']}  {r['created'][:16].replace('T', ' ')}  {r['kind']}: {r['title']}{flag}{corr}")
        for m in r["matches"]:
            found.append(f"    {m['line']}: {m['text']}")
    if found:  # titles and lines are note content: quoted data, not instructions (INV framed-recall)
        lines.extend(frame_lines(found, label="search results"))
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
        if len(data) > cache.MAX_CACHED_OBJECT:  # not a note agentmem wrote (notes are <= 64 KiB)
            raise InvalidInput(f"{notes.note_path(project, note_id)} is {len(data)} bytes, too large for a note "
                               "(over 1 MiB); not shown")
        if not args.fresh:
            cache.add_confirmed(home, cfg.store, project, note_id, data)
    from agentmem.framing import frame_note

    parsed = notes.parse(data)
    out = {"id": note_id, "project": project, "source": source, "meta": parsed.meta, "body": parsed.body}
    text = frame_note(data.decode("utf-8", errors="replace").rstrip("\n"), note_id=note_id).rstrip("\n")
    if source == "pending":
        text += f"\n\n(note {note_id} is pending upload on this machine)"
    return EXIT_OK, out, text


# --- skills ---------------------------------------------------------------


def _skill_store(cfg):
    from agentmem.store import open_store

    return open_store(cfg.store, timeout=_timeout(cfg))


def _runtimes(cfg) -> list:
    from agentmem.runtimes import configured_runtimes

    return configured_runtimes(cfg.data)


def cmd_publish_skill(args) -> tuple[int, dict, str]:
    from agentmem import skills

    home = _home_path()
    if args.resume:
        if args.directory:
            raise InvalidInput("--resume takes NAME REVISION only: the frozen files are sent as they were")
        from agentmem import config

        out = skills.resume(home, *args.resume, timeout=_timeout(config.load(home)))
    else:
        if not args.directory:
            raise InvalidInput("publish-skill needs the skill's folder (or --resume NAME REVISION)")
        cfg = _config()
        from pathlib import Path

        out = skills.publish(Path(args.directory), home, _skill_store(cfg))
    text = out["message"] + (f"\nfrozen copy kept in {out['pending']}" if out["pending"] else "")
    return (EXIT_OK if out["status"] == "published" else EXIT_PENDING), out, text


def cmd_skills(args) -> tuple[int, dict, str]:
    from agentmem import skills

    home = _home_path()
    cfg = _config()
    query = " ".join(args.query or []) or None
    found = skills.discover(_skill_store(cfg), query, home=home, runtimes=_runtimes(cfg))
    waiting = skills.pending_publications(home)
    out = {"status": "ok", "store": cfg.store.label(), "query": query, "skills": found, "pending": waiting}
    what = f" matching {query!r}" if query else ""
    lines = [f"{len(found)} skill(s){what} in {cfg.store.label()}:"]
    for skill in found:
        have = ", ".join(f"{i['runtime']} {i['revision'] or '(not from the store)'}" for i in skill["installed"])
        lines.append(f"{skill['name']}" + (f"  [installed: {have}]" if have else ""))
        for rev in skill["revisions"]:
            about = rev["description"] if rev["problem"] is None else f"(unusable: {rev['problem']})"
            lines.append(f"  {rev['revision']}  {about}")
    for p in waiting:
        lines.append(f"pending publication {p['name']} {p['revision']} -> {p['store']}; "
                     f"finish with: agentmem publish-skill --resume {p['name']} {p['revision']}")
    if found:
        lines.append("Read one with: agentmem read-skill NAME REVISION [PATH]; "
                     "install with: agentmem install-skill NAME REVISION")
    return EXIT_OK, out, "\n".join(lines)


def cmd_read_skill(args) -> tuple[int, dict, str]:
    from agentmem import skills

    out = skills.read_file(_skill_store(_config()), args.name, args.revision, args.path)
    return EXIT_OK, out, out["content"].rstrip("\n")


def cmd_install_skill(args) -> tuple[int, dict, str]:
    from agentmem import skill_install

    cfg = _config()
    out = skill_install.install(_skill_store(cfg), args.name, args.revision, _runtimes(cfg), home=_home_path(),
                                replace=args.replace, diff=args.diff, dry_run=args.diff and not args.replace)
    lines = []
    for item in out["runtimes"]:
        if item["diff"]:
            lines.append(item["diff"].rstrip("\n"))
        if out["dry_run"]:
            state = {"absent": "not installed", "same": "identical", "different": "differs (shown above)"}
            lines.append(f"{item['runtime']}: {item['target']} {state[item['state']]}")
        else:
            backup = f" (previous copy kept in {item['backup']})" if item["backup"] else ""
            lines.append(f"{item['runtime']}: {item['action']} {item['target']}{backup}")
    if out["dry_run"] and any(i["state"] == "different" for i in out["runtimes"]):
        lines.append(f"nothing changed; replace with: agentmem install-skill {args.name} {args.revision} --replace")
    return EXIT_OK, out, "\n".join(lines)


# --- configuration --------------------------------------------------------


def cmd_map(args) -> tuple[int, dict, str]:
    from agentmem import config

    home = _home_path()
    root = config.add_mapping(home, args.directory, args.project)
    import subprocess

    from agentmem import machine_repo

    try:
        machine_repo.commit_config(home, f"Map {root} to project {args.project}")
    except (OSError, subprocess.CalledProcessError):
        pass  # the mapping is saved; only the convenience commit failed
    out = {"directory": str(root), "project": args.project}
    return EXIT_OK, out, f"mapped {root} -> project {args.project}"


def cmd_where(args) -> tuple[int, dict, str]:
    cfg = _config()
    project = cfg.resolve_project(explicit=args.project)
    home = _home()
    out = {"home": home, "project": project, "store": cfg.store.to_dict(), "agent": cfg.agent}
    return EXIT_OK, out, f"project {project} in {cfg.store.label()} (machine folder {home}, agent {cfg.agent})"


def cmd_setup(args) -> tuple[int, dict, str]:
    from agentmem import setup

    report = setup.run_setup(_home_path(), replace_core_skill=args.replace_core_skill)
    status = {"confirmed": EXIT_OK, "pending": EXIT_PENDING}.get(report.outcome, report.exit_code)
    return (EXIT_OK if args.exit_zero else status), report.to_dict(), report.text()

# --- bucket provisioning --------------------------------------------------


def cmd_bucket(args) -> tuple[int, dict, str]:
    from agentmem import config, provision

    home = _home_path()
    if args.action == "verify":
        from agentmem import verification

        cfg = _config()
        project = cfg.resolve_project(explicit=args.project)
        result = verification.verify(home, cfg.store, project, cfg.agent, timeout=_timeout(cfg))
        out = result.to_json()
        text = f"setup verification note {result.id}: upload {result.upload}, read back {result.read_back}, " \
            f"found by search {result.found_by_search}" + (f" ({result.problem})" if result.problem else "")
        if result.ok:
            return EXIT_OK, out, text
        return (EXIT_PENDING if result.upload == "pending" else 1), out, text
    timeout = _timeout(config.load(home))
    if args.action == "connect":
        configured = None if args.bucket else config.require(home).store
        if configured is not None and configured.kind != "bucket":
            raise InvalidInput("no bucket to connect to: pass --bucket NAMESPACE/NAME (this machine uses a folder store)")
        bucket_id, _ = provision.resolve_bucket_id(args.bucket, configured, None)
        result = provision.connect(bucket_id, timeout=timeout)
    elif args.action == "create":
        result = provision.create(args.bucket, timeout=timeout)
    else:
        result = provision.ensure(home, args.bucket, timeout=timeout)
    if args.save:
        provision.save_to_config(home, result.bucket_id)
    out = result.to_json() | {"saved_to_config": bool(args.save)}
    return EXIT_OK, out, result.text() + ("; saved to config.toml" if args.save else "")


# --- wiring ---------------------------------------------------------------


def _args_save(sp) -> None:
    sp.add_argument("file", nargs="?", help="Markdown file with the note body; '-' or omitted: stdin")
    sp.add_argument("--title")
    sp.add_argument("--kind", default="note", help="note (default) or checkpoint")
    sp.add_argument("--tag", action="append", default=[])
    sp.add_argument("--source", action="append", default=[], help="a source reference (file, URL, commit)")
    sp.add_argument("--session", help="optional session or task reference")
    sp.add_argument("--corrects", metavar="ID", help="the ID of an earlier note this one corrects")
    sp.add_argument("--project", help="a configured project name (default: from the current directory)")
    sp.add_argument("--retry", metavar="ID", help="resend a pending note exactly as it was saved")
    sp.add_argument("--redact", action="store_true",
                    help="replace credentials found in the note with [REDACTED:<kind>] instead of refusing it")


def _args_pending(sp) -> None:
    pass  # no options beyond --json


def _args_search(sp) -> None:
    sp.add_argument("query", nargs="*")
    sp.add_argument("--limit", type=int, default=10)
    sp.add_argument("--project")
    sp.add_argument("--refresh", action="store_true", help="refresh the cache even if it is recent")
    sp.add_argument("--offline", action="store_true", help="use the cache only")
    sp.add_argument(
        "--mode", choices=("literal", "ranked", "hybrid"), default=None,
        help="ranked (default, or [search] mode in config.toml): best match first, by words and their "
        "stems; literal: exact substring, newest first; hybrid: ranked plus sentence similarity "
        "(needs agentmem[semantic])",
    )


def _args_read(sp) -> None:
    sp.add_argument("id")
    sp.add_argument("--project")
    sp.add_argument("--fresh", action="store_true", help="read from the store, bypassing the cache")


def _args_map(sp) -> None:
    sp.add_argument("directory")
    sp.add_argument("project")


def _args_setup(sp) -> None:
    sp.add_argument("--replace-core-skill", action="store_true",
                    help="replace a locally edited agent-memory skill (a backup is kept)")
    sp.add_argument("--exit-zero", action="store_true",
                    help="exit 0 even when verification fails (Copier's task uses it to keep the folder)")


def _args_bucket(sp) -> None:
    sp.add_argument("action", choices=["connect", "create", "ensure", "verify"],
                    help="connect: verify an existing bucket; create: make a private one (or verify and reuse); "
                    "ensure: connect to a supplied/configured bucket, else create <you>/agent-memory; "
                    "verify: save, read back and search the setup verification note")
    sp.add_argument("--bucket", metavar="NAMESPACE/NAME", help="the bucket ID (default: configured, else <you>/agent-memory)")
    sp.add_argument("--save", action="store_true", help="record the verified bucket as this machine's store")
    sp.add_argument("--project", help="verify: a configured project name (default: from the current directory)")


def _args_where(sp) -> None:
    sp.add_argument("--project")


def _args_publish_skill(sp) -> None:
    sp.add_argument("directory", nargs="?", help="the skill's folder (holding SKILL.md)")
    sp.add_argument("--resume", nargs=2, metavar=("NAME", "REVISION"),
                    help="finish an interrupted publication with its frozen files and revision")


def _args_skills(sp) -> None:
    sp.add_argument("query", nargs="*")


def _args_read_skill(sp) -> None:
    sp.add_argument("name")
    sp.add_argument("revision")
    sp.add_argument("path", nargs="?", default="SKILL.md")


def _args_install_skill(sp) -> None:
    sp.add_argument("name")
    sp.add_argument("revision")
    sp.add_argument("--replace", action="store_true", help="replace a differing installation (a backup is kept)")
    sp.add_argument("--diff", action="store_true", help="show the difference; without --replace, change nothing")


def cmd_hooks(args) -> tuple[int, dict, str]:
    from agentmem import hooks_cli

    return hooks_cli.cmd_hooks(args)


def _args_hooks(sp) -> None:
    from agentmem import hooks_cli

    hooks_cli.configure(sp)


# name -> (handler, help, argument setup). Only the invoked command's parser is built:
# building all of them costs ~6 ms on every agent turn (measured 2026-11-30).
COMMANDS = {
    "save": (cmd_save, "save a note or checkpoint (Markdown from FILE or stdin)", _args_save),
    "pending": (cmd_pending, "list notes saved locally whose upload is not confirmed", _args_pending),
    "search": (cmd_search, "search the project's notes (empty query: most recent)", _args_search),
    "read": (cmd_read, "print a note", _args_read),
    "map": (cmd_map, "map a directory (and its subdirectories) to a project", _args_map),
    "setup": (cmd_setup, "check and complete this machine's setup, then verify the store", _args_setup),
    "bucket": (cmd_bucket, "connect to, create or verify the Hugging Face bucket (private only)", _args_bucket),
    "where": (cmd_where, "show the project and store for the current directory", _args_where),
    "publish-skill": (cmd_publish_skill, "publish a skill folder as a new immutable revision", _args_publish_skill),
    "skills": (cmd_skills, "list shared skills and their revisions (QUERY: search names, descriptions)", _args_skills),
    "read-skill": (cmd_read_skill, "print a file of a published skill revision (default SKILL.md)", _args_read_skill),
    "install-skill": (cmd_install_skill, "install a shared skill revision for the enabled runtimes", _args_install_skill),
    "hooks": (cmd_hooks, "install, remove, trust or show the optional Codex / Claude Code hooks", _args_hooks),
}


def build_parser(only: str | None = None):
    """The argument parser; with `only`, just that command's subparser is built."""
    parser_class = _parser_class()
    p = parser_class(prog="agentmem", description="Portable memory and skills for coding agents.")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    sub = p.add_subparsers(dest="command", parser_class=parser_class)
    for name, (func, help_text, configure) in COMMANDS.items():
        if only is not None and name != only:
            continue
        sp = sub.add_parser(name, help=help_text, description=help_text)
        sp.add_argument("--json", action="store_true", help="machine-readable output")
        sp.set_defaults(func=func)
        configure(sp)
    return p


def _command_name(argv: list[str]) -> str | None:
    first = next((a for a in argv if not a.startswith("-")), None)
    return first if first in COMMANDS else None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    want_json = "--json" in argv
    try:
        args = quickargs.parse(argv)  # search and read, the per-turn commands, skip argparse
        if args is not None:
            args.func, args.version = COMMANDS[args.command][0], False
        else:
            parser = build_parser(_command_name(argv))
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
    if status in (EXIT_OK, EXIT_PENDING):
        from agentmem.config import keep_parsed_copies

        keep_parsed_copies()
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
