"""Pending notes whose bookkeeping is damaged or lost a race: the note stays reachable and honest.

A pending folder holds the note's exact bytes (note.md) and its destination (entry.json). A
damaged entry.json must not hide an intact note; a retry that loses a race with another retry
must say the note is saved, not that it does not exist.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys

import pytest

from agentmem.note import document
from agentmem.uploads import pending
from tests import fixtures_core


@pytest.fixture
def machine(offline_machine):
    """A machine whose folder store is on a drive not mounted yet: saves stay pending."""
    return offline_machine


def save_pending(m, text="the build needs ninja") -> str:
    return fixtures_core.save_pending(m, text, title="Build")


DAMAGE = {
    "not json": b"{not json",
    "empty": b"",
    "not an object": b"[1, 2]",
    "no store": b'{"id": "@ID@", "project": "app", "path": "projects/app/notes/@ID@.md"}',
    "bad store": b'{"id": "@ID@", "store": {"kind": "ftp"}, "project": "app", "path": "x"}',
    "another id": b'{"id": "20200101T000000000Z-aaaaaaaa", "store": {"kind": "folder", "location": "/x"}, '
                  b'"project": "app", "path": "projects/app/notes/20200101T000000000Z-aaaaaaaa.md"}',
    "missing": None,
}


def damage(m, note_id: str, how: str) -> None:
    entry = m.home / "pending" / note_id / "entry.json"
    if DAMAGE[how] is None:
        entry.unlink()
    else:
        entry.write_bytes(DAMAGE[how].replace(b"@ID@", note_id.encode()))


@pytest.mark.parametrize("how", list(DAMAGE))
def test_a_damaged_entry_keeps_its_intact_note_listed_searchable_and_readable(machine, how):
    # INV damaged-entry-recoverable, INV nothing-lost: the note's bytes stay reachable whatever happened to entry.json
    m = machine
    note_id = save_pending(m)
    kept = (m.home / "pending" / note_id / "note.md").read_bytes()
    damage(m, note_id, how)

    status, out, err = m.json("pending")
    assert status == 0, err
    [listed] = out["pending"]
    assert listed["id"] == note_id and listed["project"] == "app" and listed["store"] is None
    assert listed["damaged"] and "--repair" in listed["retry"]
    status, found, _ = m.json("search", "ninja", "--offline", cwd=m.checkout)
    assert [r["id"] for r in found["results"]] == [note_id] and found["results"][0]["pending"]
    status, read, err = m.json("read", note_id, cwd=m.checkout)
    assert status == 0 and read["source"] == "pending" and read["body"].strip() == "the build needs ninja", err
    assert (m.home / "pending" / note_id / "note.md").read_bytes() == kept


def test_retrying_a_damaged_entry_names_the_store_it_would_assume_and_sends_nothing(machine):
    # INV damaged-entry-recoverable
    m = machine
    note_id = save_pending(m)
    damage(m, note_id, "not json")
    m.store.mkdir(parents=True)  # the drive is back: a guess would now succeed
    status, out, err = m.run("save", "--retry", note_id)
    assert status == 2 and out == "" and "Traceback" not in err
    assert "entry.json" in err and "destination" in err and str(m.store) in err and "--repair" in err
    assert list(m.store.rglob("*.md")) == []
    assert (m.home / "pending" / note_id / "entry.json").read_bytes() == b"{not json"


def test_the_printed_repair_command_sends_the_same_bytes_to_the_configured_store(machine):
    # INV damaged-entry-recoverable, INV same-bytes-retry for the bytes; the destination is the one the user chose
    m = machine
    note_id = save_pending(m)
    kept = (m.home / "pending" / note_id / "note.md").read_bytes()
    damage(m, note_id, "missing")
    m.store.mkdir(parents=True)
    _, out, _ = m.json("pending")
    command = shlex.split(out["pending"][0]["retry"])
    status, saved, err = m.json(*command[command.index("save"):])  # the helper's own words, after its path
    assert status == 0 and saved["status"] == "saved" and saved["id"] == note_id, err
    assert saved["repaired"]["store"] == {"kind": "folder", "location": str(m.store)}
    assert (m.store / "projects" / "app" / "notes" / f"{note_id}.md").read_bytes() == kept
    assert not (m.home / "pending" / note_id).exists()


def test_repair_on_an_intact_entry_keeps_its_recorded_destination(machine, tmp_path):
    # INV same-bytes-retry: --repair never moves an entry whose destination is known
    m = machine
    note_id = save_pending(m)
    other = tmp_path / "other-store"
    other.mkdir()
    m.write_config((m.home / "config.toml").read_text().replace(str(m.store), str(other)))
    m.store.mkdir(parents=True)
    status, saved, err = m.json("save", "--retry", note_id, "--repair")
    assert status == 0 and "repaired" not in saved, err
    assert (m.store / "projects" / "app" / "notes" / f"{note_id}.md").exists() and not list(other.rglob("*.md"))


def test_the_stop_hook_counts_a_damaged_entry_and_leaves_it_for_an_explicit_choice(machine):
    # INV damaged-entry-recoverable
    m = machine
    note_id = save_pending(m)
    damage(m, note_id, "not json")
    m.store.mkdir(parents=True)
    proc = subprocess.run([sys.executable, "-m", "agentmem", "hook", "stop", "--runtime", "claude"], input="{}",
                          capture_output=True, text=True, env=m.env, cwd=m.checkout, timeout=60)
    assert proc.returncode == 0
    assert "1 still pending" in proc.stderr and "--repair" in proc.stderr
    assert list(m.store.rglob("*.md")) == [] and (m.home / "pending" / note_id / "note.md").exists()


def test_a_pending_folder_without_its_note_is_reported_not_hidden(machine):
    # INV damaged-entry-recoverable
    m = machine
    note_id = save_pending(m)
    (m.home / "pending" / note_id / "note.md").unlink()
    status, out, err = m.json("pending")
    assert status == 0 and out["pending"] == [] and out["unreadable"][0]["id"] == note_id
    assert "note.md" in out["unreadable"][0]["problem"]
    status, text, _ = m.run("pending")
    assert note_id in text and "note.md" in text
    status, _, err = m.run("save", "--retry", note_id)
    assert status == 2 and "note.md" in err and "Traceback" not in err


# -- retries racing each other --------------------------------------------------------------------

def test_a_retry_after_another_retry_saved_the_note_reports_it_saved(machine):
    # INV damaged-entry-recoverable
    # The stop hook, or a second agent, got there first.
    m = machine
    note_id = save_pending(m)
    m.store.mkdir(parents=True)
    assert m.json("save", "--retry", note_id)[0] == 0
    status, out, err = m.json("save", "--retry", note_id)
    assert status == 0 and out["status"] == "saved" and out["already_confirmed"] is True, err
    assert out["path"] == f"projects/app/notes/{note_id}.md" and out["store"]["location"] == str(m.store)
    status, text, _ = m.run("save", "--retry", note_id)
    assert status == 0 and re.search(r"already saved", text)
    assert len(list(m.store.rglob("*.md"))) == 1


def test_concurrent_retries_of_one_note_all_report_it_saved_and_store_it_once(machine):
    # INV same-bytes-retry, INV nothing-lost, INV damaged-entry-recoverable
    m = machine
    note_id = save_pending(m)
    m.store.mkdir(parents=True)
    procs = [subprocess.Popen([sys.executable, "-m", "agentmem", "save", "--retry", note_id, "--json"], env=m.env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(8)]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert json.loads(out)["status"] == "saved"
    [stored] = list(m.store.rglob("*.md"))
    assert document.parse(stored.read_bytes()).meta["id"] == note_id
    assert pending.list_entries(m.home) == []


def test_a_retry_of_an_id_never_pending_here_is_still_not_found(machine):
    status, out, err = machine.json("save", "--retry", "20261130T101502123Z-abcdefgh")
    assert status == 4 and out["error"] == "not-found"
