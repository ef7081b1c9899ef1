"""The reminder and Stop hooks, run as a runtime runs them: `agentmem hook ...` in a child process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agentmem.hooks import actions
from agentmem.uploads import pending
from tests.fixtures_core import SITE_CLI, save_pending


def stop_input(**extra) -> str:
    return json.dumps({"session_id": "s", "hook_event_name": "Stop", "stop_hook_active": False} | extra)


def test_reminder_prints_guidance_and_the_number_of_pending_uploads(offline_machine):
    m = offline_machine
    status, out, err = m.run("hook", "reminder", "--runtime", "codex")
    assert status == 0 and err == ""
    assert "agent-memory skill" in out and "pending" not in out

    save_pending(m)
    save_pending(m, "another one")
    status, out, _ = m.run("hook", "reminder", "--runtime", "claude")
    assert status == 0
    assert "2 memory notes are saved on this machine but not yet confirmed" in out
    assert "/agentmem pending` lists them, each with the command that retries it" in out  # an absolute command


def test_prompt_reminder_speaks_only_when_uploads_are_pending(offline_machine):
    m = offline_machine
    status, out, _ = m.run("hook", "reminder", "--event", "prompt", "--runtime", "codex")
    assert (status, out) == (0, "")
    save_pending(m)
    status, out, _ = m.run("hook", "reminder", "--event", "prompt", "--runtime", "codex")
    assert status == 0 and out.startswith("1 memory note is saved on this machine")


PROBE = """
import sys
from agentmem.launch import main
status = main(sys.argv[1:])
light = ("huggingface_hub", "hf_xet", "copier", "tomlkit", "tomllib", "jinja2", "yaml", "agentmem.store.folder",
         "agentmem.config", "agentmem.replica.cache", "urllib.request", "http.client", "socket")
print("\\nHEAVY", ",".join(m for m in light if m in sys.modules))
"""


def test_the_prompt_reminder_reads_no_config_and_imports_no_network_or_heavy_module(offline_machine):
    m = offline_machine
    save_pending(m)
    proc = subprocess.run([sys.executable, "-c", PROBE, "hook", "reminder", "--runtime", "codex", "--event", "prompt"],
                          capture_output=True, text=True, env=m.env, cwd=m.checkout)
    assert proc.returncode == 0, proc.stderr
    assert "1 memory note" in proc.stdout
    assert proc.stdout.rstrip().endswith("HEAVY"), proc.stdout


def test_the_session_start_reminder_reads_pins_from_the_cache_without_network_or_heavy_modules(offline_machine):
    # the start reminder reads config (its parsed copy) and the cache for pins; still no network, no TOML parser
    m = offline_machine
    save_pending(m)
    proc = subprocess.run([sys.executable, "-c", PROBE, "hook", "reminder", "--runtime", "codex"],
                          capture_output=True, text=True, env=m.env, cwd=m.checkout)
    assert proc.returncode == 0, proc.stderr
    assert "1 memory note" in proc.stdout
    heavy = set(proc.stdout.rstrip().rpartition("HEAVY")[2].strip().split(",")) - {""}
    assert heavy <= {"agentmem.config", "agentmem.replica.cache"}, heavy


def test_stop_hook_uploads_pending_notes_with_their_original_bytes(offline_machine):
    m = offline_machine
    note_id = save_pending(m)
    entry, data = pending.load(m.home, note_id)
    m.store.mkdir(parents=True)  # the drive is back, with the store's folder on it

    status, out, err = m.run("hook", "stop", "--runtime", "claude", input=stop_input())

    assert (status, out) == (0, "")
    assert "uploaded 1 pending note" in err
    assert (m.store / entry.path).read_bytes() == data  # INV same-bytes-retry
    assert pending.count(m.home) == 0


def test_stop_hook_leaves_notes_pending_and_exits_0_while_the_store_is_unreachable(offline_machine):
    m = offline_machine
    ids = {save_pending(m), save_pending(m, "second")}

    status, out, err = m.run("hook", "stop", "--runtime", "codex", input=stop_input())

    assert (status, out) == (0, "")  # no decision, no block
    assert "2 still pending" in err and "offline" not in out
    assert {e.id for e in pending.list_entries(m.home)} == ids  # INV nothing-lost


def test_stop_hook_does_nothing_when_the_runtime_says_a_stop_hook_is_already_active(offline_machine):
    m = offline_machine
    note_id = save_pending(m)
    m.store.mkdir(parents=True)

    status, out, err = m.run("hook", "stop", "--runtime", "claude", input=stop_input(stop_hook_active=True))

    assert (status, out, err) == (0, "", "")
    assert [e.id for e in pending.list_entries(m.home)] == [note_id]


def test_stop_hook_writes_no_new_memory_and_never_opens_the_transcript(offline_machine, tmp_path):
    m = offline_machine
    save_pending(m)
    m.store.mkdir(parents=True)
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text('{"role": "assistant", "content": "secret plan"}\n')
    os.utime(transcript, ns=(1_000_000_000, 2_000_000_000))  # atime before mtime: any read updates it
    before = transcript.stat().st_atime_ns

    m.run("hook", "stop", "--runtime", "claude", input=stop_input(transcript_path=str(transcript)),
          check_status=0)

    notes = list((m.store / "projects" / "app" / "notes").iterdir())
    assert len(notes) == 1  # only the note that was already pending
    assert transcript.stat().st_atime_ns == before


@pytest.mark.parametrize("argv", [
    ["hook", "stop", "--runtime", "nope"],
    ["hook", "bogus", "--runtime", "codex"],
    ["hook"],
])
def test_a_broken_hook_command_reports_on_stderr_and_still_exits_0(offline_machine, argv):
    status, out, err = offline_machine.run(*argv, input=stop_input())
    assert status == 0 and out == ""
    assert err.startswith("agentmem hook failed (ignored")


def test_a_damaged_machine_folder_does_not_make_a_hook_fail_outward(offline_machine):
    m = offline_machine
    m.home.mkdir(parents=True, exist_ok=True)
    (m.home / "pending").write_text("not a folder")
    for kind in ("reminder", "stop"):
        status, out, err = m.run("hook", kind, "--runtime", "claude", input=stop_input())
        assert status == 0 and out == ""
        assert "agentmem hook failed" in err


HANG_SITE = """
import os, threading
_target, _release = os.environ.get("AGENTMEM_TEST_HANG_LINK"), threading.Event()
_real_link = os.link
def _link(src, dst, *args, **kwargs):
    if os.fspath(dst) == _target:  # a network drive that stops answering, as the kernel call blocks
        _release.wait()
        raise OSError(5, "Input/output error")
    return _real_link(src, dst, *args, **kwargs)
os.link = _link
"""


def _hang_store_at(m, note_id, monkeypatch):
    """Make the link that places `note_id` in the store block like a call into a hung drive.

    No real filesystem hangs on demand here (no FUSE, no NFS), so the one kernel call is
    held: in this process by patching os.link for that path, in a child process through
    a sitecustomize that does the same. Returns the function that releases it.
    """
    import threading

    entry, _ = pending.load(m.home, note_id)
    target = str(m.store / entry.path)
    release = threading.Event()
    real_link = os.link

    def link(src, dst, *args, **kwargs):
        if os.fspath(dst) == target:
            release.wait()
            raise OSError(5, "Input/output error")
        return real_link(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "link", link)
    site = m.home.parent / "hang-site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(HANG_SITE)
    m.env["PYTHONPATH"] = os.pathsep.join([str(site), m.env["PYTHONPATH"]])
    m.env["AGENTMEM_TEST_HANG_LINK"] = target
    m.cli = SITE_CLI  # a sitecustomize needs `site`
    return release.set


def _release(release):
    release()


def test_stop_retry_ends_within_its_budget_when_the_store_hangs(offline_machine, monkeypatch):
    m = offline_machine
    first = save_pending(m)
    save_pending(m, "second")
    m.store.mkdir(parents=True)
    fifo = _hang_store_at(m, first, monkeypatch)
    try:
        start = time.monotonic()
        report = actions.stop(m.home, {}, budget=0.5, grace=0.5)
        elapsed = time.monotonic() - start
    finally:
        _release(fifo)
    assert elapsed < 3.0  # budget + grace is 1.0 s
    assert report.timed_out and len(report.pending) == 2
    assert "stopped after" in report.message()
    assert pending.count(m.home) == 2  # INV nothing-lost


def test_after_a_round_that_hung_the_next_stops_pause_then_retry(offline_machine, monkeypatch):
    m = offline_machine
    first = save_pending(m)
    m.store.mkdir(parents=True)
    fifo = _hang_store_at(m, first, monkeypatch)
    try:
        hung = actions.stop(m.home, {}, budget=0.5, grace=0.5)
    finally:
        _release(fifo)
    # the folder store's own budget ends the attempt (INV bounded-network), or the round's does
    assert not hung.saved and (hung.timed_out or "did not answer" in " ".join(hung.errors))
    start = time.monotonic()
    report = actions.stop(m.home, {}, budget=0.5, grace=0.5)
    assert time.monotonic() - start < 0.5 and report.paused  # no second wait on a hung store
    assert "save --retry" in report.message() and pending.count(m.home) == 1  # INV nothing-lost
    monkeypatch.undo()  # the drive answers again
    state = m.home / actions.STOP_STATE
    state.write_text(json.dumps({"hung_at": time.time() - actions.STOP_PAUSE - 1}))  # the pause has passed
    report = actions.stop(m.home, {}, budget=5, grace=1)
    assert report.saved == [first] and not state.exists()


@pytest.mark.slow
def test_stop_hook_command_with_a_hung_store_exits_within_its_default_budget(offline_machine, monkeypatch):
    m = offline_machine
    first = save_pending(m)
    m.store.mkdir(parents=True)
    fifo = _hang_store_at(m, first, monkeypatch)
    timer = threading.Timer(60, _release, [fifo])  # never leave a blocked child behind
    timer.start()
    try:
        start = time.monotonic()
        status, out, err = m.run("hook", "stop", "--runtime", "codex", input=stop_input())
        elapsed = time.monotonic() - start
    finally:
        timer.cancel()
        _release(fifo)
    print(f"stop hook with a hung store: {elapsed:.1f} s (budget {actions.STOP_BUDGET} + grace {actions.STOP_GRACE})")
    assert status == 0 and out == ""
    assert actions.STOP_BUDGET <= elapsed < actions.STOP_BUDGET + actions.STOP_GRACE + 8  # loose: a loaded CI machine starts Python slowly
    assert "1 still pending" in err and "did not answer" in err
    assert [e.id for e in pending.list_entries(m.home)] == [first]  # INV nothing-lost


def test_the_reminders_quick_count_agrees_with_the_pending_module(offline_machine):
    m = offline_machine
    save_pending(m)
    save_pending(m, "two")
    (m.home / "pending" / ".tmp-half-written").mkdir()
    assert actions.pending_count(m.home) == pending.count(m.home) == len(pending.list_entries(m.home)) == 2


def _bucket_machine(tmp_path, hub, token):
    home, src = tmp_path / "agentmem-home", tmp_path / "src" / "app"
    src.mkdir(parents=True)
    home.mkdir()
    (home / "config.toml").write_text(
        'agent = "codex@laptop"\n\n[network]\ntimeout = 3\n\n[store]\nkind = "bucket"\n'
        f'location = "alice/agent-memory"\n\n[projects]\n"{src}" = "app"\n'
    )
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "AGENTMEM_HOME": str(home),
           "HF_HOME": str(tmp_path / "hf"), "HF_ENDPOINT": hub.url, "HF_TOKEN": token,
           "HF_HUB_DISABLE_PROGRESS_BARS": "1", "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}

    def run(*args, input=None):
        start = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "agentmem", *args], cwd=src, env=env, input=input,
                              capture_output=True, text=True, timeout=120)
        assert token not in done.stdout + done.stderr  # INV no-credentials
        return done, time.monotonic() - start

    return home, run


@pytest.mark.slow
def test_stop_hook_against_an_unresponsive_bucket_ends_within_its_budget_then_uploads_later(
    hub, alice, alice_bucket, tmp_path
):
    home, run = _bucket_machine(tmp_path, hub, alice)
    hub.inject("*", "drop")
    done, _ = run("save", "--title", "t", "-", input="bucket finding\n")
    assert done.returncode == 10, done.stderr
    [entry] = pending.list_entries(home)
    _, data = pending.load(home, entry.id)
    hub.clear_faults()
    # Slower than the whole budget: every request hangs past it.
    hub.inject("*", "slow", delay=actions.STOP_BUDGET + actions.STOP_GRACE + 2)

    done, elapsed = run("hook", "stop", "--runtime", "claude", input=stop_input())

    print(f"stop hook against an unresponsive bucket: {elapsed:.1f} s")
    assert done.returncode == 0 and done.stdout == ""
    assert elapsed < actions.STOP_BUDGET + actions.STOP_GRACE + 8  # loose: a loaded CI machine starts Python slowly
    assert "1 still pending" in done.stderr
    assert [e.id for e in pending.list_entries(home)] == [entry.id]  # INV nothing-lost

    hub.clear_faults()
    done, elapsed = run("hook", "stop", "--runtime", "claude", input=stop_input())
    assert done.returncode == 0 and "no retry for" in done.stderr and elapsed < 5  # paused, not another 10 s
    (home / actions.STOP_STATE).unlink()  # the pause has passed
    done, _ = run("hook", "stop", "--runtime", "claude", input=stop_input())
    assert done.returncode == 0 and "uploaded 1 pending note" in done.stderr
    assert pending.count(home) == 0
    assert hub.read_file_bytes("alice/agent-memory", entry.path) == data  # INV same-bytes-retry
