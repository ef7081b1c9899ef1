"""The session-start reminder's "wrong for too long" line, read without json, re or datetime (uploads/overdue.py).

Its fast reading of entry.json and state.json must agree with the exact one (json, datetime) on every file
agentmem writes, and fall back to it on anything else.
"""

from __future__ import annotations

import ast
import json
import random
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta

from agentmem.uploads import overdue
from tests.fixtures_core import REPO, offline_machine, save_pending  # noqa: F401 - fixture

PROBE = (
    "import sys, io, contextlib\n"
    "from agentmem.launch import main\n"
    "buf = io.StringIO()\n"
    "with contextlib.redirect_stdout(buf):\n"
    "    main(sys.argv[1:])\n"
    "print(repr(buf.getvalue()))\n"
    "print(sorted(m for m in sys.modules if m.startswith('agentmem')))\n"
    "print(sorted(m for m in ('typing', 'pathlib', 'json', 're', 'glob', 'datetime') if m in sys.modules))\n"
)


def _start_reminder(m):
    proc = subprocess.run([sys.executable, "-S", "-c", PROBE, "hook", "reminder", "--runtime", "claude"],
                          capture_output=True, text=True, timeout=60, env=m.env | {"PYTHONPATH": str(REPO)},
                          cwd=m.checkout)
    out, ours, unwanted = (ast.literal_eval(line) for line in proc.stdout.splitlines()[-3:])
    return out, ours, unwanted


def _state(m, refreshed_at: float, extra: str = "") -> None:
    pdir = m.home / "cache" / "folder-x" / "projects" / "app"
    pdir.mkdir(parents=True, exist_ok=True)
    (pdir / "state.json").write_text(json.dumps({"how": "listing", "refreshed_at": refreshed_at, "token": {"v": 1}},
                                                sort_keys=True) + extra + "\n")


def test_the_start_reminder_with_a_note_pending_reads_its_entry_without_json_re_or_the_pending_module(
        offline_machine):
    save_pending(offline_machine)
    _state(offline_machine, time.time())
    out, ours, unwanted = _start_reminder(offline_machine)
    assert "1 memory note is saved on this machine" in out and "over an hour" not in out
    assert unwanted == [], unwanted
    assert not {"agentmem.config", "agentmem.uploads.pending", "agentmem.replica.cache"} & set(ours), ours


def test_a_damaged_entry_is_read_the_exact_way_and_an_old_one_is_still_told(offline_machine):
    note_id = save_pending(offline_machine)
    entry = offline_machine.home / "pending" / note_id / "entry.json"
    data = json.loads(entry.read_text())
    data["created"] = (datetime.now(UTC) - timedelta(hours=3)).isoformat()  # +00:00, not agentmem's own form
    entry.write_text(json.dumps(data))
    out, ours, _ = _start_reminder(offline_machine)
    assert "1 memory note(s) have waited over an hour" in out
    assert "agentmem.uploads.pending" in ours  # the exact reading


def test_a_store_silent_for_two_days_is_told_whatever_the_state_file_looks_like(offline_machine):
    _state(offline_machine, time.time() - 2 * 86400)
    out, _, unwanted = _start_reminder(offline_machine)
    assert "has not answered for 2 days" in out and unwanted == []
    # refreshed_at twice (never written so, but possible by hand): the exact reading, which takes the last
    pdir = offline_machine.home / "cache" / "folder-x" / "projects" / "app"
    now, old = time.time(), time.time() - 3 * 86400
    (pdir / "state.json").write_text(f'{{"refreshed_at": {now}, "refreshed_at": {old}}}\n')
    out, _, unwanted = _start_reminder(offline_machine)
    assert "has not answered for 3 days" in out and "json" in unwanted


def test_utc_seconds_agrees_with_datetime_on_every_stamp_agentmem_writes():
    from agentmem.note.document import utc_timestamp

    rng = random.Random(20261203)
    start = datetime(1970, 1, 1, tzinfo=UTC)
    for _ in range(5000):
        when = start + timedelta(milliseconds=rng.randrange(0, 200 * 365 * 86400 * 1000))
        stamp = utc_timestamp(when)
        assert overdue._utc_seconds(stamp) == datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp(), stamp
    for bad in ("2026-12-03T07:42:53Z", "2026-13-03T07:42:53.524Z", "2026-12-03 07:42:53.524Z", "２026-12-03T07:42:53.524Z",
                "2026-12-03T07:42:53.524+00:00", ""):
        assert overdue._utc_seconds(bad) is None, bad


def test_scalar_takes_only_a_value_plainly_there():
    assert overdue._scalar('{"created": "2026-12-03T07:42:53.524Z", "id": "x"}', "created") == "2026-12-03T07:42:53.524Z"
    assert overdue._scalar('{\n  "refreshed_at": 1764747773.25,\n  "z": 1}', "refreshed_at") == "1764747773.25"
    assert overdue._scalar('{"refreshed_at": 17}', "refreshed_at") == "17"
    assert overdue._scalar('{"how": "said \\"refreshed_at\\": 5", "x": 1}', "refreshed_at") is None  # text, not a key
    assert overdue._scalar('{"created": "a\\"b"}', "created") is None  # an escape: read it exactly
    assert overdue._scalar('{"created": 1, "created": 2}', "created") is None
