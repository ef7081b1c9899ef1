"""The `agentmem` command: a thin layer over the library.

Each handler (`run_<command>` in the command group's module) calls library
functions and returns a `Result`: exit status, JSON payload, text. Errors from
`agentmem.errors` become one line on stderr (and the error envelope with --json)
and their exit status, here and nowhere else. Only the invoked command's group
module is imported, and heavy modules only inside the handlers that need them.

The process entry is `agentmem.launch.main`, which also dispatches `hook`.
"""

from __future__ import annotations

import json
import os
import sys

from agentmem import errors
from agentmem.cli import quick
from agentmem.errors import EXIT_INVALID, EXIT_OK, EXIT_PENDING, InvalidInput

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from types import ModuleType
    from typing import Any, NoReturn

    from agentmem.cli.result import Result

# name -> (command group module in agentmem.cli, one-line help). The handler is
# `run_<name>` and its argument set-up `add_<name>` (dashes as underscores). Only
# the invoked command's parser is built: building all of them is a measurable
# share of every agent turn (docs/benchmarks.md).
COMMANDS = {
    "save": ("memory", "save a note or checkpoint (Markdown from FILE or stdin)"),
    "pending": ("memory", "list notes saved locally whose upload is not confirmed"),
    "search": ("memory", "search the project's notes (empty query: most recent)"),
    "read": ("memory", "print a note"),
    "sync": ("memory", "download every note of the project that this machine lacks (a new machine's first "
             "catch-up of a big store, which setup also runs) and index them, with progress bars on a terminal; "
             "--embed: then embed every note for hybrid search"),
    "retract": ("hygiene", "retract a note: every machine's search hides it from now on (read still shows it)"),
    "pin": ("hygiene", "pin a note into the project's session-start reminder on every machine"),
    "unpin": ("hygiene", "take a note out of the session-start reminder"),
    "review": ("hygiene", "list what to review: notes past review, near duplicates, repeated corrections, "
               "retractions, notes proposed for the team"),
    "purge": ("hygiene", "delete a note for good, everywhere (a leaked credential, personal data); asks first"),
    "promote": ("hygiene", "copy one of your notes into the team store as a new team note naming you and it (a "
                "curator's decision; yours stays)"),
    "export": ("exchange", "write the notes as plain Markdown files: a folder per project, an index, a manifest"),
    "import": ("exchange", "import memories from an agentmem export or another agent CLI's memory files (dry run "
               "unless --apply)"),
    "doctor": ("doctor", "check this machine's memory: store, pending notes, index, helper and each agent CLI's "
               "wiring, each with its fix"),
    "map": ("machine", "map a directory (and its subdirectories) to a project"),
    "unmap": ("machine", "remove a directory's mapping to a project (its notes stay in the store)"),
    "setup": ("machine", "check and complete this machine's setup, then verify the store"),
    "bucket": ("machine", "connect to, create or verify the Hugging Face bucket (private only)"),
    "view": ("view", "write this machine's memory as one HTML page to search in a browser (no server)"),
    "where": ("machine", "show the project and store for the current directory"),
    "upgrade": ("machine", "commit this machine folder's edits, then copier update it to a newer template"),
    "publish-skill": ("skills", "publish a skill folder as a new immutable revision"),
    "skills": ("skills", "list shared skills and their revisions (QUERY: search names, descriptions)"),
    "read-skill": ("skills", "print a file of a published skill revision (default SKILL.md)"),
    "install-skill": ("skills", "install a shared skill revision for the enabled runtimes"),
    "hooks": ("hooks", "install, remove, trust or show the optional hooks of the enabled agent CLIs"),
    "audit": ("audit", "find credentials in the store's notes (every note, not only the cache); --fix replaces them"),
    "mcp": ("mcp", "serve this machine's memory to an MCP client over stdio (needs the mcp extra)"),
}
DESCRIPTION = "Portable memory and skills for coding agents."


def _group(name: str) -> ModuleType:
    return __import__(f"agentmem.cli.{COMMANDS[name][0]}", fromlist=["_"])


def handler(name: str) -> Callable[[argparse.Namespace], Result]:
    return getattr(_group(name), "run_" + name.replace("-", "_"))


def _formatter(prog: str) -> argparse.HelpFormatter:
    import argparse

    # argparse sizes help with shutil, whose import (bz2, lzma) costs ~3 ms per call; ask the OS directly.
    try:
        width = os.get_terminal_size().columns - 2
    except OSError:
        width = 78
    return argparse.HelpFormatter(prog, width=max(40, width))


def _parser_class() -> type[argparse.ArgumentParser]:
    """argparse's parser, reporting errors as our one-line InvalidInput (argparse is imported here only)."""
    import argparse

    class Parser(argparse.ArgumentParser):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("formatter_class", _formatter)
            super().__init__(*args, **kwargs)

        def error(self, message: str) -> NoReturn:  # one line, exit 2, like every other invalid input
            where = self.prog.removeprefix("agentmem").strip()
            raise InvalidInput(f"{where}: {message}" if where else message)

    return Parser


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; with `only`, just that command's subparser is built."""
    parser_class = _parser_class()
    p = parser_class(prog="agentmem", description=DESCRIPTION)
    p.add_argument("--version", action="store_true", help="print the version and exit")
    sub = p.add_subparsers(dest="command", parser_class=parser_class)
    for name, (_, help_text) in COMMANDS.items():
        if only is not None and name != only:
            continue
        sp = sub.add_parser(name, help=help_text, description=help_text)
        if name != "mcp":  # the server speaks JSON-RPC on stdout; it has no JSON result of its own
            sp.add_argument("--json", action="store_true", help="machine-readable output")
        sp.set_defaults(func=handler(name))
        getattr(_group(name), "add_" + name.replace("-", "_"))(sp)
    return p


def _command_name(argv: list[str]) -> str | None:
    first = next((a for a in argv if not a.startswith("-")), None)
    return first if first in COMMANDS else None


def run(argv: list[str]) -> int:
    """Run one command line (without the `hook` entry, which `agentmem.launch.main` handles)."""
    want_json = "--json" in argv
    if argv == ["--version"]:  # without building every command's parser (and importing its module)
        from agentmem.version import __version__

        print(f"agentmem {__version__}")
        return EXIT_OK
    try:
        # search and read, the per-turn commands, skip argparse
        args: quick.Args | argparse.Namespace | None = quick.parse(argv)
        if args is not None:
            args.func, args.version = handler(args.command), False
        else:
            parser = build_parser(_command_name(argv))
            args = parser.parse_args(argv)
        if args.version:
            from agentmem.version import __version__

            print(f"agentmem {__version__}")
            return EXIT_OK
        if not getattr(args, "func", None):
            parser.print_help()
            return EXIT_INVALID
        result = args.func(args)
    except errors.AgentmemError as exc:
        return _fail(exc, want_json)
    except KeyboardInterrupt:
        return _fail(errors.AgentmemError("interrupted"), want_json)
    except OSError as exc:
        return _fail(_os_error(exc, argv), want_json)
    warnings = _warnings()
    payload = result.envelope() if want_json else result.text
    if warnings and want_json:
        payload = payload | {"warnings": payload.get("warnings", []) + warnings}
    if want_json and payload.get("warnings"):
        from agentmem.cli.result import with_warning_details

        payload = with_warning_details(payload)
    _emit(payload, want_json)
    for line in result.problems:
        sys.stderr.write(f"agentmem: {line}\n")
    if result.exit_code in (EXIT_OK, EXIT_PENDING):
        common = sys.modules.get("agentmem.cli.common")  # never imported just to ask
        if common is not None:
            common.finish()
    return result.exit_code


def _os_error(exc: OSError, argv: list[str]) -> errors.AgentmemError:
    """An OS error as the error it is (errors.from_os_error: a write the sandbox refused is `not-writable`)."""
    from agentmem.paths import machine_dir

    return errors.from_os_error(exc, machine_dir(), nothing_saved=_command_name(argv) == "save")


def _emit(payload: Any, as_json: bool) -> None:  # a JSON object with as_json, else text
    try:
        if as_json:
            sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
        elif payload:
            sys.stdout.write(payload + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _warnings() -> list[str]:
    """What reading the config found for the user (a stale config in use), printed once on stderr."""
    common = sys.modules.get("agentmem.cli.common")  # never imported just to ask
    found = common.warnings() if common is not None else []
    for line in found:
        sys.stderr.write(f"agentmem: warning: {line}\n")
    return found


def _fail(exc: errors.AgentmemError, as_json: bool) -> int:
    from agentmem.cli.result import error_envelope
    from agentmem.render import error_line, next_data

    _warnings()
    line = error_line(exc)
    if as_json:
        _emit(error_envelope(exc.kind, line, next_data(exc.next)), True)
    sys.stderr.write(f"agentmem: {line}\n")
    return exc.exit_code
