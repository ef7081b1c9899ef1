"""agentmem/patterns.py: a module's pattern is compiled when first used and then answers as `re`'s does."""

import re

from agentmem import patterns


def test_a_deferred_pattern_compiles_only_when_used_and_then_answers_as_the_compiled_one():
    source = r"^([A-Za-z0-9][A-Za-z0-9_-]{0,127})\.md$"
    deferred = patterns.compile(source)
    assert "_compiled" not in vars(deferred)
    compiled = re.compile(source)
    for name in ("a.md", "20261205T013000014Z-qoxwxmwf.md", "-a.md", "a.json", "a.md\n"):
        assert bool(deferred.match(name)) == bool(compiled.match(name))
    assert "_compiled" in vars(deferred) and vars(deferred)["match"] == compiled.match
    assert deferred.match("x.md").group(1) == "x"
    assert deferred.sub("?", "a.md") == "?" and deferred.pattern == source


def test_flags_are_kept_and_private_names_are_not_looked_up_in_the_pattern():
    deferred = patterns.compile(r"begin\W+end", re.IGNORECASE)
    assert deferred.findall("BEGIN -- End, begin end") == ["BEGIN -- End", "begin end"]
    assert deferred.flags & re.IGNORECASE
    try:
        deferred._missing  # noqa: B018
    except AttributeError:
        pass
    else:
        raise AssertionError("a private name was looked up in the compiled pattern")
