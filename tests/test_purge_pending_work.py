"""A purge is finished only when the store no longer holds the note; until then it is pending work that
every retry path finishes or reports: `save --retry` (the command `pending` prints), the Stop hook, the
next purge (of the same note or another), and `doctor`, whose printed command finishes it.

Each purge is interrupted for real: the store folder unmounted (renamed away) for the whole purge, or the
helper killed with SIGKILL right after each of its steps (the record persisted here, the note's bytes
forgotten here, the record put in the store, the note deleted from the store). # INV purged-gone
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from agentmem.note import document, records
from agentmem.replica import cache
from agentmem.search import follow
from tests.fixtures_core import REPO, make_machine, new_folder_store

SECRET = b"kookaburraxyz"

# Runs the real CLI (`purge ID --yes`) in a child that SIGKILLs itself right after the step named in argv[1].
KILLER = r"""
import os, signal, sys
from agentmem.memory import curation
from agentmem.uploads import delivery, pending
from agentmem.store.folder import FolderStore

step, argv = sys.argv[1], sys.argv[2:]

def after(owner, name, when=lambda *a: True):
    real = getattr(owner, name)
    def wrapped(*a, **k):
        out = real(*a, **k)
        if when(*a):
            os.kill(os.getpid(), signal.SIGKILL)
        return out
    setattr(owner, name, wrapped)

if step == "record-persisted":
    after(pending, "persist")
elif step == "bytes-forgotten":  # wherever the purge calls it from
    for owner in (curation, delivery):
        if hasattr(owner, "forget"):
            after(owner, "forget")
elif step == "record-put":
    after(FolderStore, "put", lambda self, path, data: path.endswith(".purge.json"))
elif step == "note-deleted":
    after(FolderStore, "delete")
from agentmem.launch import main
raise SystemExit(main(argv))
"""

INTERRUPTIONS = ["store-away", "record-persisted", "bytes-forgotten", "record-put", "note-deleted"]
RETRY_PATHS = ["save --retry", "stop hook", "purge again", "another purge", "doctor"]


class World:
    """Machine A (its own home) and a folder store holding two notes A has cached and indexed: `leak`,
    to purge, and `other`, a second note a later purge can name."""

    def __init__(self, tmp_path):
        self.root = tmp_path / "store"
        self.store = new_folder_store(self.root)
        self.checkout = tmp_path / "app"
        self.checkout.mkdir()
        self.a = make_machine(tmp_path, "a", self.root, {self.checkout: "app"}, agent="codex@a")
        self.leak = self._put("The deploy key is kookaburraxyz (pasted by mistake).", "deploy key")
        self.other = self._put("The staging password is lyrebirdxyz.", "staging password")
        cache.refresh(self.a.home, self.store.description, "app", index=follow.update)
        assert self.holding(SECRET)  # cached here, and indexed at the first search
        assert self.run("search", "kookaburraxyz")[0] == 0

    def _put(self, body: str, title: str) -> str:
        note = document.build(body=body, title=title, kind="note", project="app", agent="codex@b")
        self.store.put(document.note_path("app", note.id), note.render())
        return note.id

    def run(self, *args: str, stdin: str = "") -> tuple[int, str, str]:
        return self.a.run(*args, input=stdin, cwd=self.checkout)

    def json(self, *args: str) -> tuple[int, dict]:
        status, out, err = self.a.json(*args, cwd=self.checkout)
        return status, out

    def in_store(self, note_id: str) -> bool:
        return (self.root / "projects" / "app" / "notes" / f"{note_id}.md").exists()

    def holding(self, word: bytes) -> list[str]:
        return sorted(str(p.relative_to(self.a.home)) for p in self.a.home.rglob("*")
                      if p.is_file() and word in p.read_bytes())

    def pending(self) -> list[dict]:
        status, out = self.json("pending")
        assert status == 0, out
        return out["pending"]

    def interrupt(self, how: str) -> None:
        """Purge `leak`, interrupted as `how` says; the store is there again afterwards."""
        if how == "store-away":
            away = self.root.parent / "unmounted"
            self.root.rename(away)
            try:
                status, out = self.json("purge", self.leak, "--yes")
            finally:
                away.rename(self.root)
            assert status == 10 and out["status"] == "pending", out
            return
        argv = ["purge", self.leak, "--yes", "--project", "app"]
        proc = subprocess.run([sys.executable, "-c", KILLER, how, *argv], cwd=self.checkout,
                              env=dict(self.a.env, PYTHONPATH=str(REPO)), capture_output=True, timeout=120)
        assert proc.returncode == -signal.SIGKILL, (how, proc.returncode, proc.stderr.decode())

    def retry(self, path: str) -> None:
        """Take one retry path, exactly as a person or the runtime would."""
        if path == "save --retry":
            for entry in self.pending():  # the command `pending` prints, as printed
                done = subprocess.run(["bash", "-c", entry["retry"]], cwd=self.checkout, env=self.a.env,
                                      capture_output=True, text=True, timeout=120)
                assert done.returncode == 0, done.stdout + done.stderr
        elif path == "stop hook":
            hook_input = json.dumps({"session_id": "s", "hook_event_name": "Stop", "stop_hook_active": False})
            assert self.run("hook", "stop", "--runtime", "claude", stdin=hook_input)[0] == 0
        elif path == "purge again":
            status, out = self.json("purge", self.leak, "--yes")
            assert status == 0 and out["status"] == "purged", out
        elif path == "another purge":
            status, out = self.json("purge", self.other, "--yes")
            assert status == 0 and out["status"] == "purged", out
            assert not self.in_store(self.other)
        elif path == "doctor":
            unfinished = self.in_store(self.leak) or bool(self.pending())
            status, out = self.json("doctor")
            named = [c for c in out["checks"] if c["name"].startswith("purge") and self.leak in c["detail"]]
            assert bool(named) == unfinished, out["checks"]  # reported exactly while it is unfinished
            for check in named:
                assert check["status"] == "fail" and status != 0
                done = subprocess.run(["bash", "-c", check["command"]], cwd=self.checkout, env=self.a.env,
                                      capture_output=True, text=True, timeout=120)  # INV printed-commands-run
                assert done.returncode == 0, done.stdout + done.stderr
            status, out = self.json("doctor")
            assert not [c for c in out["checks"] if c["name"].startswith("purge")], out["checks"]


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
@pytest.mark.parametrize("path", RETRY_PATHS)
@pytest.mark.parametrize("how", INTERRUPTIONS)
def test_an_interrupted_purge_is_finished_by_every_retry_path_only_once_the_store_no_longer_holds_the_note(
        tmp_path, how, path):
    # INV purged-gone, INV nothing-lost
    w = World(tmp_path)
    w.interrupt(how)
    if w.in_store(w.leak):  # not finished: it is pending work, listed as the purge it is
        [waiting] = w.pending()
        assert waiting["purges"] == w.leak
        assert f"the purge of note {w.leak}" in w.run("pending")[1]
    w.retry(path)
    assert not w.in_store(w.leak), f"{how} then {path}: the store still holds the purged note"
    assert w.pending() == []
    assert w.holding(SECRET) == []  # cache, index, pending: nothing of it on this machine
    purge_records = [p for p in (w.root / "projects" / "app" / "notes").iterdir()
                     if p.name.endswith(".purge.json") and records.parse(p.read_bytes()).note == w.leak]
    assert len(purge_records) == 1  # one record, however many retries
    status, out = w.json("read", w.leak)
    assert out["error"] == "not-found" and "purged" in out["message"]


def test_doctor_reports_a_purge_record_whose_note_the_store_still_holds_and_its_command_finishes_it(tmp_path):
    # INV purged-gone: a purge another tool, or an older helper killed before its delete, left half done
    w = World(tmp_path)
    record = records.build("purge", w.leak, "app", "codex@b")
    w.store.put(record.path(), record.render())
    assert w.json("search", "staging")[0] == 0  # the record arrives: the note leaves this machine
    assert w.holding(SECRET) == [] and w.in_store(w.leak)
    status, out, _ = w.a.run("doctor", cwd=w.checkout)
    assert status != 0 and f"the purge of note {w.leak}" in out and "the store still holds the note" in out
    line = next(x for x in out.splitlines() if "fix:" in x and f"purge {w.leak}" in x)
    command = line.split(": ", 2)[-1]
    done = subprocess.run(["bash", "-c", command], cwd=w.checkout, env=w.a.env, capture_output=True, text=True,
                          timeout=120)  # INV printed-commands-run
    assert done.returncode == 0 and done.stdout.startswith(f"purged {w.leak}: deleted from the store"), done.stderr
    assert not w.in_store(w.leak)
    assert "purge app" not in w.a.run("doctor", cwd=w.checkout)[1]


def test_a_retried_purge_record_says_the_purge_is_finished(tmp_path):
    w = World(tmp_path)
    w.interrupt("store-away")
    [waiting] = w.pending()
    status, text, _ = w.run("save", "--retry", waiting["id"])
    assert status == 0 and f"the purge of note {w.leak} is finished: deleted from the store" in text
    assert not os.path.exists(w.root / "projects" / "app" / "notes" / f"{w.leak}.md")


def test_the_stop_hook_reports_a_finished_purge_as_a_purge_not_an_uploaded_note(tmp_path):
    w = World(tmp_path)
    w.interrupt("store-away")
    hook_input = json.dumps({"session_id": "s", "hook_event_name": "Stop", "stop_hook_active": False})
    status, _, err = w.run("hook", "stop", "--runtime", "claude", stdin=hook_input)
    assert status == 0 and "finished 1 purge(s): the store no longer holds the note" in err, err
    assert "uploaded" not in err and not w.in_store(w.leak)


def test_a_note_too_large_to_read_is_purged_all_the_same(tmp_path):
    # INV purged-gone: the purge reads the note for its record's digest, and a note no read takes still goes
    w = World(tmp_path)
    big = "20261130T000000001Z-bignote1"
    path = w.root / "projects" / "app" / "notes" / f"{big}.md"
    path.write_bytes(b"---\ntitle: big\n---\n" + b"x" * (2 * 1024 * 1024))
    status, out = w.json("purge", big, "--yes")
    assert status == 0 and out["status"] == "purged" and not path.exists(), out
