"""The per-turn commands' arguments, parsed without argparse.

Agents run `search` and `read` on every turn, and importing argparse and
building even one subcommand's parser is a measurable part of a search (gettext
looks up translations for every help string; figures: docs/benchmarks.md,
"Figures behind choices in the code"), so these two commands' plain command
lines are parsed here instead.

Only the plain forms are taken: the command first, `--option VALUE`, flags,
and one unbroken run of positionals that do not start with `-`. Anything else
(help, `--option=VALUE`, abbreviations, `--`, a repeated option, a value argparse
would refuse) returns None, and the CLI hands the line to argparse, which gives
its usual result or message. So on every line this module accepts, it agrees
with argparse (tests/test_quickargs.py compares the two).
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Callable


class Args:
    """What argparse's Namespace would hold for the same command line."""

    command: str
    func: Callable
    version: bool

    def __init__(self, **values: object) -> None:
        self.__dict__.update(values)

    def __repr__(self) -> str:
        return f"Args({self.__dict__!r})"


class Spec:
    """One command's arguments: its positional, flags, and options taking a value."""

    def __init__(self, positional: str, many: bool, flags: tuple, values: dict, defaults: dict):
        self.positional, self.many = positional, many  # many: nargs="*"; else exactly one
        self.flags, self.values, self.defaults = flags, values, defaults


def _limit(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


# Must match cli/memory.py's add_search and add_read (tests/test_quickargs.py checks it).
SPECS = {
    "search": Spec("query", True, ("--json", "--refresh", "--offline", "--include-retracted"),
                   {"--limit": _limit, "--project": str, "--mode": ("literal", "ranked", "hybrid"),
                    "--scope": ("personal", "team", "all")},
                   {"limit": 10, "project": None, "mode": None, "scope": None}),
    "read": Spec("id", False, ("--json", "--fresh"), {"--project": str, "--scope": ("personal", "team", "all")},
                 {"project": None, "scope": None}),
}


def parse(argv: list[str]) -> Args | None:
    """The arguments of a plain `search` or `read` line, or None to leave it to argparse."""
    spec = SPECS.get(argv[0]) if argv else None
    if spec is None:
        return None
    values = dict(spec.defaults)
    values.update({flag[2:].replace("-", "_"): False for flag in spec.flags})
    seen, positionals = set(), []
    run_over = False  # positionals must form one unbroken run
    i = 1
    while i < len(argv):
        arg = argv[i]
        if not arg.startswith("-"):
            if run_over:
                return None
            positionals.append(arg)
            i += 1
            continue
        if positionals:
            run_over = True
        if arg in seen:
            return None
        seen.add(arg)
        if arg in spec.flags:
            values[arg[2:].replace("-", "_")] = True
            i += 1
        elif arg in spec.values and i + 1 < len(argv) and not argv[i + 1].startswith("-"):
            value = _convert(spec.values[arg], argv[i + 1])
            if value is None:
                return None
            values[arg[2:]] = value
            i += 2
        else:
            return None
    if spec.many:
        values[spec.positional] = positionals
    elif len(positionals) == 1:
        values[spec.positional] = positionals[0]
    else:
        return None
    return Args(command=argv[0], **values)


def _convert(kind: tuple[str, ...] | Callable[[str], int | str | None], text: str) -> int | str | None:
    if isinstance(kind, tuple):
        return text if text in kind else None
    return kind(text)
