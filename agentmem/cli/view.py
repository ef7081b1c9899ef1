"""The `view` command: write the memory view (one HTML file, its note files beside it) and print its path."""

from __future__ import annotations

import os

from agentmem.cli import common
from agentmem.cli.result import Result
from agentmem.errors import Command, InvalidInput, NextStep

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    import argparse


def add_view(sp: argparse.ArgumentParser) -> None:
    which = sp.add_mutually_exclusive_group()
    which.add_argument("--project", help="only this configured project (default: every project this machine knows)")
    which.add_argument("--all", action="store_true",
                       help="also every project the store holds that no directory on this machine maps")
    sp.add_argument("--output", metavar="PATH", help="the HTML file to write (default: view/index.html in the "
                    "machine folder)")
    sp.add_argument("--open", action="store_true", help="open the page in the system's browser afterwards")
    sp.add_argument("--offline", action="store_true", help="use the cache only: do not ask the store")


def _output(machine: str, given: str | None) -> str:
    from agentmem.view import page

    if given is None:
        return page.default_path(machine)
    path = os.path.abspath(os.path.expanduser(given))
    if os.path.isdir(path):
        raise InvalidInput(f"--output {given} is a folder", hint=NextStep.of(
            "name the HTML file to write, as in ", Command("view", "--output", os.path.join(path, "memory.html"))))
    return path


def run_view(args: argparse.Namespace) -> Result:
    from agentmem.view import data, page

    machine, cfg = common.machine(), common.config()
    project = None
    if args.project is not None:
        from agentmem.safety.screening import refuse_argument

        refuse_argument(args.project, "--project", "view")
        project = cfg.resolve_project(explicit=args.project)
    path = _output(machine, args.output)
    from agentmem.cli.memory import _Progress

    progress = _Progress.for_terminal(args.json)  # a long first sync counts on stderr, as search's does
    try:
        shown = data.gather(machine, cfg, project=project, whole_store=args.all, offline=args.offline,
                            timeout=common.timeout(cfg), runtimes=common.runtimes(cfg),
                            progress=(lambda _name, done, total: progress(done, total)) if progress else None)
    finally:
        if progress is not None:
            progress.finish()
    try:
        made = page.write(path, shown)
    finally:
        shown.close()
    from agentmem.view import written

    written.remember(machine, path)  # a purge deletes every page holding the note, and its note files (INV purged-gone)
    meta = shown.meta
    out: dict = {"path": path, "notes": len(shown.notes), "projects": [p["name"] for p in meta["projects"]],
                 "bytes": made["bytes"], "files": made["files"], "files_bytes": made["files_bytes"],
                 "stale": meta["stale"], "stale_reasons": meta["stale_reasons"]}
    lines = [f"wrote the memory view of {out['notes']} note(s) in {len(out['projects'])} project(s) to {path}"]
    lines += [f"warning: the view may be stale - {reason}" for reason in meta["stale_reasons"]]
    problems = []
    if args.open:
        out["opened"], problem = _open(path)
        if problem:
            problems.append(problem)
    else:
        lines.append(f"open it in a browser: {_uri(path)}")
    return Result(out, "\n".join(lines), problems=problems)


def _uri(path: str) -> str:
    from pathlib import Path

    return Path(path).as_uri()


def _open(path: str) -> tuple[bool, str | None]:
    """Open the page with Python's webbrowser; never required: a failure is one line, the page stays."""
    import webbrowser

    try:
        opened = webbrowser.open(_uri(path))
    except (webbrowser.Error, OSError) as exc:
        opened, why = False, str(exc) or type(exc).__name__
    else:
        why = "no browser was found"
    if opened:
        return True, None
    return False, f"could not open a browser ({why}); open {_uri(path)} yourself"
