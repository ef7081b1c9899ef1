"""The in-process CLI runner (tests/inprocess.py) answers as a child process does, and refuses what it cannot."""

from __future__ import annotations

import re
import sys

import pytest

from tests import fixtures_core
from tests.fixtures_core import make_machine, new_folder_store

# What differs between any two runs: a note's ID, the minute it names, a recalled block's random marker.
VARIES = re.compile(r"\d{8}T\d{9}Z-[0-9a-z]+|\d\d:\d\d(:\d\d(\.\d+)?)?|\b[0-9a-f]{12}\b")
SECRET = "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"[::-1]


def _world(root, child: bool):
    checkout = root / "src" / "app"
    checkout.mkdir(parents=True)
    store = root / "store"
    new_folder_store(store)
    m = make_machine(root, "laptop", store, {checkout: "app"})
    m.child, m.checkout = child, checkout
    return m


def _session(m) -> list:
    """The same command lines on one machine: everyday ones, bad input, a refusal, help, and their statuses."""
    root = str(m.home.parent.parent)
    said = []
    steps = [
        ("--version",), ("where",), ("save", "--title", "first"), ("save", "--title", "second", "--json"),
        ("search", "finding"), ("search", "finding", "--json"), ("pending",), ("save", "--title", "leak"),
        ("nonsense",), ("search", "--limit", "x"), ("map", str(m.checkout / "sub"), "other"), ("where", "--json"),
        ("review", "--json"), ("read", "--help"), ("export", str(m.user_home / "out"), "--json"),
    ]
    for step in steps:
        text = {"first": "a finding worth keeping", "second": "another finding", "leak": SECRET}[step[2]] \
            if step[0] == "save" else None
        status, out, err = m.run(*step, input=text, cwd=m.checkout)
        said.append((step, status, VARIES.sub("*", out.replace(root, "ROOT")), VARIES.sub("*", err.replace(root, "ROOT"))))
    return said


def test_a_session_in_process_says_exactly_what_the_same_session_says_in_child_processes(tmp_path):
    inside = _session(_world(tmp_path / "w", child=False))
    (tmp_path / "w").rename(tmp_path / "in-process")  # the child's world at the same path, so paths agree
    outside = _session(_world(tmp_path / "w", child=True))
    for mine, theirs in zip(inside, outside):
        assert mine == theirs
    assert [s[1] for s in inside] == [0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 0, 0, 0, 0]  # the session did something


def test_a_call_leaves_the_tests_own_agentmem_modules_and_process_state_as_they_were(laptop, monkeypatch):
    import os

    from agentmem import paths

    monkeypatch.setattr(paths, "_launcher", "the test's own")  # what the call's launch.main would overwrite
    before = (sys.modules["agentmem.paths"], dict(os.environ), sys.path[:], os.getcwd())
    status, out, _ = laptop.json("where", cwd=laptop.checkout)
    assert status == 0 and out["project"] == "app"
    assert paths._launcher == "the test's own"
    after = (sys.modules["agentmem.paths"], dict(os.environ), sys.path[:], os.getcwd())
    assert after[0] is before[0] and after[1:] == before[1:]


def test_a_call_reaching_huggingface_hub_in_process_fails_naming_the_child_tier(tmp_path):
    if fixtures_core._ALL_CHILD:
        pytest.skip("AGENTMEM_TEST_CLI=child: no call runs in-process")
    m = make_machine(tmp_path, "laptop")
    m.write_config('[store]\nkind = "bucket"\nlocation = "alice/agent-memory"\n\n[projects]\n'
                   f'"{tmp_path}" = "app"\n')
    with pytest.raises(AssertionError, match=r"imported huggingface_hub.*@pytest.mark.child"):
        m.run("save", "--title", "t", input="a finding", cwd=tmp_path)
    m.child = True
    status, _, err = m.run("save", "--title", "t", input="a finding", cwd=tmp_path)
    assert status == 10 and "Traceback" not in err  # the child answers it: pending, no Hub credentials
