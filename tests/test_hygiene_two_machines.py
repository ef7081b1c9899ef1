"""Retractions, pins and purges made on one machine take effect in another machine's very next search,
on both stores (a folder, and a bucket on the loopback Hub through the real clients), without --refresh.
Nothing but a purge changes the store's note objects."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from agentmem.note import document
from tests.fixtures_core import make_machine, new_folder_store
from tests.fixtures_hub import BucketMachine

BUCKET = "alice/agent-memory"


class Pair:
    """Two machines sharing one store, each run through the real CLI in its project directory."""

    def __init__(self, kind: str, tmp_path: Path, hub=None, token=None):
        self.kind, self.hub = kind, hub
        if kind == "folder":
            self.store = tmp_path / "shared-store"
            new_folder_store(self.store)
            checkout = tmp_path / "app"
            checkout.mkdir()
            self.machines = [make_machine(tmp_path, n, self.store, {checkout: "app"}, agent=f"codex@{n}")
                             for n in ("a", "b")]
            self.cwd = checkout
        else:
            hub.add_bucket(BUCKET, private=True)
            self.machines = [BucketMachine(tmp_path / n, hub, token) for n in ("a", "b")]

    def homes(self) -> list[Path]:
        return [m.home for m in self.machines]

    def run(self, which: int, *args: str, stdin: str = "") -> tuple[int, str, str]:
        m = self.machines[which]
        if self.kind == "folder":
            return m.run(*args, input=stdin, cwd=self.cwd)
        done = m.run(*args, stdin=stdin)
        return done.returncode, done.stdout, done.stderr

    def json(self, which: int, *args: str, stdin: str = "") -> tuple[int, dict]:
        status, out, err = self.run(which, *args, "--json", stdin=stdin)
        try:
            return status, json.loads(out)
        except ValueError:
            raise AssertionError(f"not JSON (status {status}): {out!r} {err!r}") from None

    def stored(self, path: str) -> bytes | None:
        """The object's bytes in the store, None when it is not there."""
        if self.kind == "folder":
            target = self.store / path
            return target.read_bytes() if target.exists() else None
        if path not in self.hub.buckets[BUCKET].files:
            return None
        return self.hub.read_file_bytes(BUCKET, path)

    def settle(self) -> None:
        """Nothing: the point is that B's very next search sees what A did (no waiting, no --refresh)."""


@pytest.fixture(params=["folder", "bucket"])
def pair(request, tmp_path):
    if request.param == "folder":
        return Pair("folder", tmp_path)
    hub = request.getfixturevalue("hub")
    token = request.getfixturevalue("alice")
    return Pair("bucket", tmp_path, hub, token)


def _save(pair: Pair, text: str, title: str) -> str:
    status, out = pair.json(0, "save", "--title", title, "--text", text)
    assert status == 0, out
    return out["id"]


def _ids(out: dict) -> list[str]:
    return [r["id"] for r in out["results"]]


def _holding(home: Path, word: bytes) -> list[str]:
    """Every file under a machine folder whose bytes hold `word` (the cache, the index file, pending)."""
    return sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file() and word in p.read_bytes())


def test_a_retraction_made_on_a_hides_the_note_from_bs_very_next_search_and_bs_read_shows_it_first(pair):
    # INV append-only: the retraction is a new object; the note's bytes never change
    note_id = _save(pair, "The zebra service listens on port 8080.", "zebra port")
    path = document.note_path("app", note_id)
    before = pair.stored(path)
    assert _ids(pair.json(1, "search", "zebra")[1]) == [note_id]
    status, done = pair.json(0, "retract", note_id, "--reason", "it moved to port 9090")
    assert status == 0 and done["status"] == "saved" and done["record"]["reason"] == "it moved to port 9090"
    status, out = pair.json(1, "search", "zebra")
    assert status == 0 and _ids(out) == [] and out["stale"] is False
    status, out = pair.json(1, "search", "zebra", "--include-retracted")
    [shown] = out["results"]
    assert shown["id"] == note_id and shown["retracted"]["reason"] == "it moved to port 9090"
    assert shown["retracted"]["agent"].startswith("codex@")
    status, text, _ = pair.run(1, "read", note_id)
    assert status == 0 and text.startswith("RETRACTED on ") and "\n│ it moved to port 9090\n" in text  # framed
    assert text.index("RETRACTED") < text.index("retraction reason") < text.index("port 9090") < text.index("port 8080")
    status, read = pair.json(1, "read", note_id)
    assert read["retracted"]["record"] == done["record"]["record"] and read["body"].startswith("The zebra")
    assert pair.stored(path) == before  # never rewritten
    assert pair.stored(f"projects/app/notes/{done['record']['record']}.retract.json") is not None


def test_a_pin_made_on_a_reaches_bs_session_start_reminder_after_its_next_search_and_an_unpin_takes_it_out(pair):
    note_id = _save(pair, "Run the tests with the project's own venv, never the system Python.", "test runner")
    before = pair.stored(document.note_path("app", note_id))
    assert pair.json(0, "pin", note_id)[1]["status"] == "saved"
    status, out = pair.json(1, "search", "venv")
    assert out["results"][0]["pinned"] is True
    status, reminder, _ = pair.run(1, "hook", "reminder", "--runtime", "claude")
    assert status == 0 and "Pinned memory of project app (1 note(s)" in reminder
    assert f"│ [{note_id}] test runner\n│ Run the tests with the project's own venv" in reminder
    assert "<<<BEGIN RECALLED MEMORY" in reminder  # framed as recalled data, like search results
    assert pair.json(0, "unpin", note_id)[1]["status"] == "saved"
    pair.json(1, "search")
    status, reminder, _ = pair.run(1, "hook", "reminder", "--runtime", "claude")
    assert "Pinned memory" not in reminder
    assert pair.stored(document.note_path("app", note_id)) == before


def test_a_purge_on_a_removes_the_note_from_the_store_and_both_machines_with_bs_very_next_search(pair):
    # INV purged-gone
    unique = b"quokkasecret"
    note_id = _save(pair, "The staging password is quokkasecret (pasted by mistake).", "staging access")
    keep_id = _save(pair, "Staging runs on the small cluster.", "staging cluster")
    for which in (0, 1):
        assert note_id in _ids(pair.json(which, "search", "quokkasecret")[1])  # cached and indexed on both
    assert all(_holding(home, unique) for home in pair.homes())
    status, done = pair.json(0, "purge", note_id, "--yes", "--reason", "a password")
    assert status == 0 and done["status"] == "purged" and done["deleted_from_store"] is True
    assert done["removed_here"] == ["cache", "index"]
    assert pair.stored(document.note_path("app", note_id)) is None
    record = pair.stored(f"projects/app/notes/{done['record']['record']}.purge.json")
    assert record is not None and unique not in record and b"staging" not in record  # no content
    assert _holding(pair.homes()[0], unique) == []  # A: cache, index file, pending: gone at once
    status, out = pair.json(1, "search", "quokkasecret")
    assert status == 0 and out["results"] == [] and out["stale"] is False
    assert _holding(pair.homes()[1], unique) == []  # B: gone with its very next search
    assert _ids(pair.json(1, "search", "staging")[1]) == [keep_id]
    status, out = pair.json(1, "read", note_id)
    assert status != 0 and out["error"] == "not-found" and "was purged on" in out["message"]


def test_a_search_with_nothing_new_costs_the_same_one_request_after_records_arrived(hub, alice, tmp_path):
    # INV read-your-writes at per-turn cost: records ride the notes' change signal, no second prefix
    pair = Pair("bucket", tmp_path, hub, alice)
    note_id = _save(pair, "A finding to pin.", "pinned finding")
    pair.json(0, "pin", note_id)
    pair.json(0, "retract", _save(pair, "An old finding.", "old"), "--reason", "wrong")
    pair.json(1, "search", "finding")
    hub.buckets[BUCKET].updated_ms -= 60_000  # the last change long ago: updatedAt is settled
    pair.json(1, "search", "finding")
    hub.clear_log()
    status, out = pair.json(1, "search", "finding")
    assert status == 0 and _ids(out) == [note_id]
    assert [f"{r.method} {r.route}" for r in hub.requests() if r.route != "agent-harnesses"] == ["GET info"]


def test_a_purge_a_machine_could_not_finish_is_finished_by_running_it_again(tmp_path):
    # INV nothing-lost: the purge record is on disk before the store is asked; the note's bytes leave at once
    pair = Pair("folder", tmp_path)
    note_id = _save(pair, "The token is wombatsecret.", "leak")
    pair.json(1, "search", "wombatsecret")
    hidden = tmp_path / "unmounted"
    pair.store.rename(hidden)
    status, done = pair.json(0, "purge", note_id, "--yes")
    assert status == 10 and done["status"] == "pending" and done["reason"]["error"] == "offline"
    assert done["next"].endswith(f"purge {note_id} --project app --yes")
    assert _holding(pair.homes()[0], b"wombatsecret") == []
    hidden.rename(pair.store)
    again = subprocess.run(["bash", "-c", done["next"]], cwd=pair.cwd, env=pair.machines[0].env,  # INV printed-commands-run
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and again.stdout.startswith(f"purged {note_id}"), again.stderr
    assert pair.stored(document.note_path("app", note_id)) is None
    assert pair.json(1, "search", "wombatsecret")[1]["results"] == []
    assert _holding(pair.homes()[1], b"wombatsecret") == []
