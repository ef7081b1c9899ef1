"""A new machine joining a big store catches up over several searches, each keeping what it fetched and
saying how far it got, and `agentmem sync` finishes it (INV change-token, INV read-your-writes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from agentmem import config, errors
from agentmem.memory import cache, recall, sync
from agentmem.render import search_text
from agentmem.store import dirwatch, network
from agentmem.store.folder import FolderStore
from tests.fixtures_core import REPO, new_folder_store
from tests.test_cache import put_notes


def _state(m, cfg) -> dict:
    with open(os.path.join(cache.project_dir(m.home, cfg.store, "app"), "state.json")) as fh:
        return json.load(fh)


def _joined(laptop, store_dir, count: int):
    new_folder_store(store_dir)
    put_notes(FolderStore(store_dir), "app", count)
    return config.load(laptop.home)


def test_each_search_of_a_catch_up_keeps_what_it_fetched_and_says_how_far_it_got(laptop, store_dir, monkeypatch):
    # INV change-token: the token is kept only by the refresh that fetched everything
    cfg = _joined(laptop, store_dir, 300)
    monkeypatch.setattr(sync, "SEARCH_CATCH_UP", 0.0)  # as if each note took the whole budget
    first = recall.search(str(laptop.home), cfg, "app", "note")
    second = recall.search(str(laptop.home), cfg, "app", "note")
    assert first["stale"] and first["stale_error"] == "catching-up"
    assert first["catching_up"] == {"have": 1, "total": 300} and second["catching_up"] == {"have": 2, "total": 300}
    assert "catching up: 2 of 300 notes are here" in second["stale_reason"]
    assert len(cache.cached_ids(laptop.home, cfg.store, "app")) == 2
    assert "token" not in _state(laptop, cfg)
    text = search_text(second)
    assert "catching up: 2 of 300" in text and " sync` fetches the rest now" in text
    done = sync.sync(str(laptop.home), cfg, "app")
    assert done["notes"] == 300 and not done["stale"] and done["added"] == 298
    assert "token" in _state(laptop, cfg)
    after = recall.search(str(laptop.home), cfg, "app", "note", limit=200)
    assert not after["stale"] and "catching_up" not in after


def test_sync_reports_progress_as_a_bar_on_a_terminal_and_nothing_on_a_pipe(laptop, store_dir):
    _joined(laptop, store_dir, 250)  # above PROGRESS_MIN: a sync this long reports its progress
    status, out, err = laptop.json("sync", cwd=laptop.checkout)
    assert status == 0 and out["status"] == "ok" and out["notes"] == 250 and out["added"] == 250, (out, err)
    assert err == ""
    (store_dir / "projects" / "app" / "notes").mkdir(exist_ok=True)
    put_notes(FolderStore(store_dir), "app", 250)
    status, stdout, shown = laptop.run_on_terminal("sync", cwd=laptop.checkout)
    assert status == 0 and "500 note(s) of project app are here (250 downloaded" in stdout
    assert b"[##############################] 500/500" in shown


def test_a_local_disk_that_runs_out_of_time_is_not_called_a_hanging_network_drive(tmp_path, monkeypatch):
    store = new_folder_store(tmp_path / "store")
    put_notes(store, "app", 1)

    def spent(budget, fn, *args):
        raise errors.BudgetSpent()

    for fs, blamed in (("ext4", False), ("nfs4", True)):
        monkeypatch.setattr(dirwatch, "filesystem_type", lambda folder, fs=fs: fs)
        slow = FolderStore(store.root)
        slow.changes("projects/app/notes", None)  # reads the filesystem type
        monkeypatch.setattr(network, "call_within", spent)
        try:
            slow.get("projects/app/notes/x.md")
        except errors.Offline as exc:
            message = exc.one_line()
        monkeypatch.undo()
        assert ("network drive" in message) is blamed, message
        assert blamed or ("local ext4 disk" in message and " sync` fetches a long catch-up" in message)


def test_sync_is_documented_and_shown_in_help():
    done = subprocess.run([sys.executable, "-m", "agentmem", "sync", "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "--project" in done.stdout and "--json" in done.stdout
    assert "agentmem sync" in (REPO / "docs" / "cli.md").read_text()
    assert "agentmem sync" in (REPO / "README.md").read_text()
