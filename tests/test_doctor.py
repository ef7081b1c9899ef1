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


def _index_check(m, monkeypatch):
    """doctor's index check of project app, in this process, and how many integrity checks it ran."""
    from agentmem import config
    from agentmem.machine import doctor

    monkeypatch.setenv("AGENTMEM_HOME", str(m.home))
    checks: list[str] = []
    real = doctor._read_only

    def counted(path, *asks):
        checks.extend(a for a in asks if a == "PRAGMA quick_check")
        return real(path, *asks)

    monkeypatch.setattr(doctor, "_read_only", counted)
    check = doctor.index_check(str(m.home), config.load(m.home), "app")
    return check, len(checks)


def test_a_rerun_with_nothing_changed_takes_the_last_passed_check_as_it_stands(laptop, monkeypatch):
    laptop.run("save", "--title", "t", "--text", "a finding", cwd=laptop.checkout, check_status=0)
    laptop.run("search", "finding", cwd=laptop.checkout, check_status=0)
    first, ran = _index_check(laptop, monkeypatch)
    assert first.status == "ok" and ran == 1
    again, ran = _index_check(laptop, monkeypatch)
    assert (again.status, again.detail, ran) == ("ok", first.detail, 0)
    laptop.run("save", "--title", "t2", "--text", "a second finding", cwd=laptop.checkout, check_status=0)
    laptop.run("search", "finding", cwd=laptop.checkout, check_status=0)  # indexes it: the index file changed
    changed, ran = _index_check(laptop, monkeypatch)
    assert (changed.status, changed.detail, ran) == ("ok", "2 note(s) indexed", 1)


def test_an_index_damaged_after_a_passed_check_is_found_damaged(laptop, monkeypatch):
    for i in range(40):  # an index of several pages
        laptop.run("save", "--title", f"t{i}", "--text", f"finding number {i} " * 20, cwd=laptop.checkout,
                   check_status=0)
    laptop.run("search", "finding", cwd=laptop.checkout, check_status=0)
    assert _index_check(laptop, monkeypatch)[0].status == "ok"
    (index,) = list(laptop.home.rglob("ranked.sqlite"))
    import sqlite3

    conn = sqlite3.connect(index)
    size, root = conn.execute("PRAGMA page_size").fetchone()[0], conn.execute(
        "SELECT rootpage FROM sqlite_master WHERE name='blocks'").fetchone()[0]
    conn.close()
    with open(index, "r+b") as fh:  # the postings' first page, in place, as a disk or a stray write would
        fh.seek((root - 1) * size)
        fh.write(b"\xff" * 64)  # its page header: the notes' table and the meta still read
    check, ran = _index_check(laptop, monkeypatch)
    assert check.status == "warn" and "malformed" in check.detail and ran == 1, (check.detail, ran)
    status, out, _ = laptop.json("doctor", cwd=laptop.checkout)
    assert _checks(out)["index app"]["status"] == "warn"


def test_a_note_cached_since_the_check_is_counted(laptop, monkeypatch):
    laptop.run("save", "--title", "t", "--text", "a finding", cwd=laptop.checkout, check_status=0)
    laptop.run("search", "finding", cwd=laptop.checkout, check_status=0)
    assert _index_check(laptop, monkeypatch)[0].detail == "1 note(s) indexed"
    (notes,) = [p for p in laptop.home.rglob("notes") if p.parent.name == "app"]
    (note,) = list(notes.iterdir())
    (notes / note.name.replace(note.name[:8], "20200101")).write_bytes(note.read_bytes())  # not indexed yet
    check, ran = _index_check(laptop, monkeypatch)
    assert check.detail == "1 of 2 cached note(s) indexed" and ran == 0
