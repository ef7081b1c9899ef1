"""The argparse-free parser of `search` and `read` agrees with argparse on every line it accepts."""

from __future__ import annotations

import pytest

from agentmem import errors
from agentmem.cli import main as cli
from agentmem.cli import quick as quickargs
from tests.proptest import given, settings

TOKENS = ["--json", "--refresh", "--offline", "--fresh", "--limit", "--project", "--mode", "--lim", "--limit=3",
          "-h", "--", "-", "-5", "5", "05", "1_0", "x", "ranked", "literal", "hybrid", "semantic", "", "two words",
          "-a b", "app", "20251130T101010000Z-abcdef12"]


def _argparse(argv):
    try:
        return vars(cli.build_parser(argv[0]).parse_args(argv))
    except (errors.InvalidInput, SystemExit):
        return None


@settings(max_examples=400, deadline=None)
@given(command=lambda st: st.sampled_from(["search", "read"]), rest=lambda st: st.lists(st.sampled_from(TOKENS), max_size=6))
def test_every_line_the_quick_parser_takes_parses_the_same_with_argparse(command, rest):
    argv = [command, *rest]
    quick = quickargs.parse(argv)
    if quick is None:
        return  # left to argparse
    full = _argparse(argv)
    assert full is not None, argv
    for key in ("func", "version"):
        full.pop(key, None)
    assert vars(quick) == full, argv


@pytest.mark.parametrize("argv", [
    ["search", "how", "do", "we", "deploy", "--limit", "5", "--json"],
    ["search", "--mode", "literal", "--project", "app", "exact phrase"],
    ["search"],
    ["read", "20251130T101010000Z-abcdef12", "--fresh"],
])
def test_the_lines_agents_send_take_the_quick_path(argv):
    quick = quickargs.parse(argv)
    assert quick is not None
    full = _argparse(argv)
    full.pop("func"), full.pop("version")
    assert vars(quick) == full


@pytest.mark.parametrize("argv", [
    ["search", "--help"], ["search", "a", "--limit", "2", "b"], ["search", "--limit=2", "a"],
    ["search", "--lim", "2"], ["search", "--mode", "fuzzy", "a"], ["search", "--limit", "two"],
    ["search", "--json", "--json"], ["read"], ["read", "a", "b"], ["search", "--", "-x"], ["save", "x"],
])
def test_anything_unusual_is_left_to_argparse(argv):
    assert quickargs.parse(argv) is None


def test_the_quick_specs_name_the_same_options_as_the_argparse_set_up():
    for name, spec in quickargs.SPECS.items():
        parser = cli.build_parser(name)
        sub = next(a for a in parser._actions if a.dest == "command").choices[name]
        options = {o for a in sub._actions for o in a.option_strings} - {"-h", "--help"}
        assert options == set(spec.flags) | set(spec.values), name
