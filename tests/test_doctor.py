"""doctor: one line per check with its fix; a non-zero exit when something is broken."""

from __future__ import annotations

import json
import os
import time

from agentmem.errors import EXIT_ATTENTION
from tests.fixtures_core import laptop, machines, offline_machine, save_pending, store_dir  # noqa: F401


def _checks(out):
    return {c["name"]: c for c in out["checks"]}


def test_a_working_machine_passes_every_check_and_exits_zero(laptop):
    laptop.run("save", "--title", "t", "--text", "a finding", cwd=laptop.checkout, check_status=0)
    laptop.run("search", "finding", cwd=laptop.checkout, check_status=0)
    status, out, err = laptop.json("doctor", cwd=laptop.checkout)
    assert status == 0 and out["status"] == "ok" and out["failed"] == 0, out
    checks = _checks(out)
    assert checks["store app"]["status"] == "ok" and checks["pending"]["status"] == "ok"
    assert checks["index app"]["status"] == "ok" and "1 note(s) indexed" in checks["index app"]["detail"]


def test_an_unreachable_store_fails_with_what_failed_and_the_fix(offline_machine):
    status, out, err = offline_machine.json("doctor", cwd=offline_machine.checkout)
    assert status == EXIT_ATTENTION and out["status"] == "broken"
    store = _checks(out)["store app"]
    assert store["status"] == "fail" and "not there" in store["detail"] and store["fix"]
    status, text, _ = offline_machine.run("doctor", cwd=offline_machine.checkout)
    assert status == EXIT_ATTENTION and "FAIL  store app:" in text and "      fix: " in text


def test_a_note_pending_for_over_an_hour_fails_and_names_its_retry(offline_machine):
    note_id = save_pending(offline_machine)
    status, out, _ = offline_machine.json("doctor", cwd=offline_machine.checkout)
    fresh = _checks(out)["pending"]
    assert fresh["status"] == "warn" and note_id in fresh["detail"] and note_id in fresh["command"]
    entry = offline_machine.home / "pending" / note_id / "entry.json"
    data = json.loads(entry.read_text())
    data["created"] = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() - 7200))
    entry.write_text(json.dumps(data))
    status, out, _ = offline_machine.json("doctor", cwd=offline_machine.checkout)
    old = _checks(out)["pending"]
    assert old["status"] == "fail" and "2.0 h" in old["detail"] and status == EXIT_ATTENTION


def test_a_damaged_index_is_reported_and_left_for_the_next_search_to_rebuild(laptop):
    laptop.run("save", "--title", "t", "--text", "a finding", cwd=laptop.checkout, check_status=0)
    laptop.run("search", "finding", cwd=laptop.checkout, check_status=0)
    (index,) = list(laptop.home.rglob("ranked.sqlite"))
    index.write_bytes(b"not a database at all" * 100)
    status, out, _ = laptop.json("doctor", cwd=laptop.checkout)
    check = _checks(out)["index app"]
    assert check["status"] == "warn" and "rebuilds" in check["fix"] and status == 0
    laptop.run("search", "finding", cwd=laptop.checkout, check_status=0)
    assert _checks(laptop.json("doctor", cwd=laptop.checkout)[1])["index app"]["status"] == "ok"


def test_the_fix_command_runs_exactly_as_printed(offline_machine):
    save_pending(offline_machine)
    status, out, _ = offline_machine.json("doctor", cwd=offline_machine.checkout)
    command = _checks(out)["pending"]["command"]
    os.makedirs(offline_machine.store)  # the drive is back
    from agentmem.store.folder import create_store

    os.rmdir(offline_machine.store)
    create_store(str(offline_machine.store))
    import shlex
    import subprocess

    argv = shlex.split(command)
    assert argv[-3:-1] == ["save", "--retry"]
    done = subprocess.run(argv, env=offline_machine.env, capture_output=True, cwd=offline_machine.checkout)
    assert done.returncode == 0, done.stderr


def _age_pending(m, note_id, hours):
    entry = m.home / "pending" / note_id / "entry.json"
    data = json.loads(entry.read_text())
    data["created"] = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() - hours * 3600))
    entry.write_text(json.dumps(data))


def test_the_session_start_reminder_adds_a_line_only_when_a_note_waited_over_an_hour(offline_machine):
    note_id = save_pending(offline_machine)
    _, fresh, _ = offline_machine.run("hook", "reminder", "--runtime", "codex")
    assert "over an hour" not in fresh
    _age_pending(offline_machine, note_id, 2)
    status, out, _ = offline_machine.run("hook", "reminder", "--runtime", "codex")
    assert status == 0 and "1 memory note(s) have waited over an hour" in out and " doctor`" in out
    _, prompt, _ = offline_machine.run("hook", "reminder", "--event", "prompt", "--runtime", "codex")
    assert "over an hour" not in prompt  # once a session, not every prompt


def test_the_session_start_reminder_says_when_the_store_has_not_answered_for_a_day(laptop):
    laptop.run("search", "x", cwd=laptop.checkout, check_status=0)
    (state,) = list(laptop.home.rglob("state.json"))
    data = json.loads(state.read_text())
    data["refreshed_at"] = time.time() - 2 * 86400
    state.write_text(json.dumps(data))
    status, out, _ = laptop.run("hook", "reminder", "--runtime", "claude")
    assert status == 0 and "has not answered for 2 days" in out
