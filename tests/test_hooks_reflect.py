"""The optional end-of-session reflection: the guard (once per session, never on a stop a stop hook
caused, a damaged or unwritable state, two sessions at once) and the stop hook that carries it.

The real CLIs taking the request are in tests/test_e2e_reflect.py (slow).
"""

from __future__ import annotations

import json
import multiprocessing
import os

import pytest

from agentmem.hooks import reflect
from agentmem.runtimes import registry
from agentmem.uploads import pending
from tests.fixtures_core import save_pending


def stop_input(session="s-1", **extra) -> str:
    return json.dumps({"session_id": session, "hook_event_name": "Stop", "stop_hook_active": False} | extra)


def _reflect_on(m):
    text = (m.home / "config.toml").read_text()
    m.write_config(text + "\n[hooks]\nenabled = true\nreflect = true\n")


def _decision(out: str) -> dict | None:
    return json.loads(out) if out.strip() else None


@pytest.fixture
def machine(tmp_path):
    """A machine folder whose config.toml has the reflection on."""
    (tmp_path / "config.toml").write_text("[hooks]\nenabled = true\nreflect = true\n")
    return tmp_path


def test_with_reflect_off_or_config_unreadable_nothing_is_asked_or_recorded(tmp_path):
    assert reflect.decide(tmp_path, {"session_id": "a"}) == (False, "off")  # no config.toml
    for text in ("[hooks]\nenabled = true\n", "[hooks]\nreflect = \"yes\"\n", "[hooks\nreflect = true\n"):
        (tmp_path / "config.toml").write_text(text)
        assert reflect.decide(tmp_path, {"session_id": "a"}) == (False, "off")
    assert not (tmp_path / reflect.STATE_FILE).exists()


def test_the_quick_look_at_config_toml_never_turns_off_a_reflection_the_full_reading_turns_on(tmp_path):
    # The stop hook skips loading the config when no line could say `reflect = true`; every spelling of
    # true TOML allows keeps the full reading, and the two always agree on the answer.
    cases = {
        "[hooks]\nenabled = true\nreflect = true\n": True,
        "[hooks]\nreflect=true\n": True,
        "hooks = { enabled = true, reflect = true }\n": True,
        "hooks.reflect = true\n": True,
        '[hooks]\n"reflect" = true\n': True,
        "[hooks]\nenabled = true\nreflect = false  # true one day\n": False,
        "[hooks]\nenabled = true\nreflect = false\n": False,
        "[hooks]\nenabled = true\n": False,
        "[other]\nreflect = true\n": False,
    }
    for text, on in cases.items():
        (tmp_path / "config.toml").write_text(text)
        assert reflect.enabled(tmp_path) is on, text
        quick = reflect._may_be_on(tmp_path)
        assert quick or not on, text  # never off where the full reading is on
    (tmp_path / "config.toml").write_text("[hooks]\nenabled = true\nreflect = false\n")
    assert reflect._may_be_on(tmp_path) is False  # the plain off line needs no config at all


def test_a_stop_hook_with_reflection_off_loads_no_config(offline_machine):
    import subprocess
    import sys

    from tests.fixtures_core import REPO

    m = offline_machine
    m.write_config((m.home / "config.toml").read_text() + "\n[hooks]\nenabled = true\nreflect = false\n")
    probe = ("import sys, io, contextlib\nfrom agentmem.launch import main\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n    main(sys.argv[1:])\n"
             "print('agentmem.config' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-S", "-c", probe, "hook", "stop", "--runtime", "claude"],
                          input=stop_input("s-new"), capture_output=True, text=True, timeout=60,
                          env=m.env | {"PYTHONPATH": str(REPO)})
    assert proc.stdout.strip().splitlines()[-1] == "False", (proc.stdout, proc.stderr)


def test_a_session_is_asked_once_and_another_session_is_asked_too(machine):
    # INV reflect-once
    assert reflect.decide(machine, {"session_id": "a"}) == (True, "asked")
    assert reflect.decide(machine, {"session_id": "a"}) == (False, "already asked in this session")
    assert reflect.decide(machine, {"sessionId": "b"})[0] is True  # Copilot CLI's own spelling
    state = json.loads((machine / reflect.STATE_FILE).read_text())
    assert set(state["asked"]) == {"a", "b"}


def test_a_stop_caused_by_a_stop_hook_is_never_asked_and_leaves_no_record(machine):
    # INV reflect-once
    for active in ({"stop_hook_active": True}, {"stopHookActive": True}):
        assert reflect.decide(machine, {"session_id": "a", **active}) == (False, "stop_hook_active")
    assert not (machine / reflect.STATE_FILE).exists()
    assert reflect.decide(machine, {"session_id": "a"})[0] is True  # the session's own first stop still is


@pytest.mark.parametrize("hook_input", [{}, {"session_id": ""}, {"session_id": 7}, {"session_id": "x" * 500}])
def test_without_a_usable_session_id_nothing_is_asked(machine, hook_input):
    assert reflect.decide(machine, hook_input) == (False, "no session ID in the hook input")


@pytest.mark.parametrize("damage", [b"{not json", b"[1, 2]", b'{"asked": "all"}', b'{"asked": {"a": "x", "b": true}}',
                                    b"\xff\xfe\x00"])
def test_a_damaged_state_file_counts_as_empty_and_is_replaced_by_a_sound_one(machine, damage):
    (machine / reflect.STATE_FILE).write_bytes(damage)
    assert reflect.decide(machine, {"session_id": "a"})[0] is True
    assert json.loads((machine / reflect.STATE_FILE).read_text())["asked"].keys() == {"a"}
    assert reflect.decide(machine, {"session_id": "a"})[0] is False


def test_a_state_that_cannot_be_written_asks_nothing(machine):
    # INV reflect-once: no record, no request, so an unwritable folder cannot make every stop ask
    (machine / reflect.STATE_FILE).mkdir()
    for _ in range(2):
        ask, why = reflect.decide(machine, {"session_id": "a"})
        assert not ask and why.startswith("reflection state not written")


def test_old_sessions_are_pruned_and_the_record_stays_bounded(machine, monkeypatch):
    now = 1_800_000_000.0
    reflect.decide(machine, {"session_id": "old"}, now=now - reflect.KEEP_SECONDS - 1)
    monkeypatch.setattr(reflect, "MAX_SESSIONS", 3)
    for i in range(5):
        reflect.decide(machine, {"session_id": f"s{i}"}, now=now + i)
    asked = json.loads((machine / reflect.STATE_FILE).read_text())["asked"]
    assert set(asked) == {"s2", "s3", "s4"}  # the month-old one went first, then the oldest beyond the cap


def _decide_in_child(args):
    machine, session, go = args
    go.wait()
    return session, reflect.decide(machine, {"session_id": session})[0]


def test_two_sessions_stopping_at_once_are_each_asked_once_and_both_recorded(machine):
    # INV reflect-once: read, change and write happen under one lock, so no record is lost
    sessions = ["a", "b"] * 6  # each session's stop hook fired six times at once, in twelve processes
    ctx = multiprocessing.get_context("spawn")
    with ctx.Manager() as manager:
        go = manager.Event()
        with ctx.Pool(len(sessions)) as pool:
            pending_results = pool.map_async(_decide_in_child, [(str(machine), s, go) for s in sessions])
            go.set()
            results = pending_results.get(timeout=120)
    asked = [s for s, ask in results if ask]
    assert sorted(asked) == ["a", "b"]
    assert json.loads((machine / reflect.STATE_FILE).read_text())["asked"].keys() == {"a", "b"}


def test_a_lock_held_past_its_wait_asks_nothing_rather_than_waiting(machine, monkeypatch):
    import fcntl

    monkeypatch.setattr(reflect, "LOCK_WAIT", 0.2)
    fd = os.open(machine / reflect.LOCK_FILE, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        ask, why = reflect.decide(machine, {"session_id": "a"})
    finally:
        os.close(fd)
    assert not ask and "another stop hook holds" in why


def test_the_prompt_names_the_absolute_helpers_save_form_without_a_heredoc():
    text = reflect.prompt()
    save = text.split("`")[1]
    assert os.path.isabs(save.split()[0]) and save.split()[1:] == ["save", "--title", "TITLE", "--text", "TEXT"]
    for words in ("decision", "transient errors", "narrative", "claims that a tool does not work"):
        assert words in text


# -- the stop hook, run as a runtime runs it -------------------------------------------------------

@pytest.mark.parametrize("runtime", [n for n in registry.NAMES if registry.spec(n).reflection is not None])
def test_with_reflection_on_the_first_stop_asks_once_and_the_stop_it_caused_does_not(offline_machine, runtime):
    # INV reflect-once
    m = offline_machine
    _reflect_on(m)
    status, out, err = m.run("hook", "stop", "--runtime", runtime, input=stop_input())
    assert status == 0 and err == ""
    assert _decision(out) == {"decision": "block", "reason": reflect.prompt()}
    again = m.run("hook", "stop", "--runtime", runtime, input=stop_input(stop_hook_active=True))
    later = m.run("hook", "stop", "--runtime", runtime, input=stop_input())
    assert again == (0, "", "") and later == (0, "", "")


def test_reflection_off_or_a_runtime_without_the_mechanism_prints_no_decision(offline_machine):
    m = offline_machine
    assert m.run("hook", "stop", "--runtime", "claude", input=stop_input()) == (0, "", "")  # off by default
    _reflect_on(m)
    for name in registry.NAMES:
        if registry.spec(name).reflection is None:  # OpenCode
            assert m.run("hook", "stop", "--runtime", name, input=stop_input()) == (0, "", "")
    assert not (m.home / reflect.STATE_FILE).exists()


def test_with_reflection_on_the_stop_hook_still_uploads_pending_notes_first(offline_machine):
    m = offline_machine
    _reflect_on(m)
    note_id = save_pending(m)
    entry, data = pending.load(m.home, note_id)
    m.store.mkdir(parents=True)  # the drive is back

    status, out, err = m.run("hook", "stop", "--runtime", "claude", input=stop_input())

    assert status == 0 and "uploaded 1 pending note" in err
    assert (m.store / entry.path).read_bytes() == data  # INV same-bytes-retry
    assert _decision(out)["decision"] == "block"


def test_a_damaged_state_or_config_never_makes_the_stop_hook_fail_outward(offline_machine):
    m = offline_machine
    _reflect_on(m)
    (m.home / reflect.STATE_FILE).mkdir(parents=True)  # cannot be written
    assert m.run("hook", "stop", "--runtime", "claude", input=stop_input()) == (0, "", "")
    m.write_config("this is [not toml\n")
    status, out, err = m.run("hook", "stop", "--runtime", "claude", input=stop_input("s-2"))
    assert (status, out) == (0, "") and "Traceback" not in err
