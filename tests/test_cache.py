"""The project cache: complete listings, atomic downloads, and a cache kept through failures."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from agentmem.memory import cache, notes
from agentmem.store.folder import FolderStore
from tests.fixtures_core import REPO


def put_notes(store: FolderStore, project: str, count: int, size: int = 40) -> list[str]:
    ids = []
    for i in range(count):
        note = notes.build(body=f"note {i} " + "x" * size, title=f"n{i}", kind="note", project=project, agent="t")
        store.put(notes.note_path(project, note.id), note.render())
        ids.append(note.id)
    return ids


def test_refresh_downloads_only_missing_notes_and_prunes_only_after_a_complete_listing(tmp_path):
    store = FolderStore(tmp_path / "store")
    home = tmp_path / "home"
    ids = put_notes(store, "app", 3)
    put_notes(store, "other", 2)  # another project's history is never downloaded
    first = cache.refresh(home, store.description, "app")
    assert not first.stale and sorted(first.added) == sorted(ids)
    assert sorted(cache.cached_ids(home, store.description, "app")) == sorted(ids)
    assert not os.path.exists(cache.project_dir(home, store.description, "other"))
    second = cache.refresh(home, store.description, "app")
    assert second.added == [] and second.removed == []
    # the owner deletes a note in the store: a complete listing prunes it
    os.unlink(os.path.join(store.root, notes.note_path("app", ids[0])))
    third = cache.refresh(home, store.description, "app")
    assert third.removed == [ids[0]]


def test_failed_listing_keeps_the_previous_cache_and_says_why(tmp_path):
    # INV cache-kept-on-failure
    drive = tmp_path / "drive"
    drive.mkdir()
    store = FolderStore(drive / "store")
    home = tmp_path / "home"
    ids = put_notes(store, "app", 4)
    cache.refresh(home, store.description, "app")
    before = {i: cache.read_cached(home, store.description, "app", i) for i in ids}
    drive.rename(tmp_path / "unplugged")  # the store vanishes
    status = cache.refresh(home, store.description, "app")
    assert status.stale and status.error == "offline" and "could not list" in status.reason
    assert {i: cache.read_cached(home, store.description, "app", i) for i in ids} == before


def test_offline_mode_uses_the_cache_and_says_it_may_be_stale(tmp_path):
    store = FolderStore(tmp_path / "store")
    home = tmp_path / "home"
    put_notes(store, "app", 1)
    never = cache.ensure_fresh(home, store.description, "app", max_age=30, offline=True)
    assert never.stale and "never refreshed" in never.reason
    cache.refresh(home, store.description, "app")
    status = cache.ensure_fresh(home, store.description, "app", max_age=30, offline=True)
    assert status.stale and "offline" in status.reason


def test_a_recent_refresh_is_not_repeated_within_max_age(tmp_path):
    store = FolderStore(tmp_path / "store")
    home = tmp_path / "home"
    cache.refresh(home, store.description, "app")
    put_notes(store, "app", 1)
    assert cache.ensure_fresh(home, store.description, "app", max_age=3600).refreshed is False
    assert cache.ensure_fresh(home, store.description, "app", max_age=0).added != []


def test_hostile_listing_entries_never_escape_the_cache_folder(tmp_path):
    class HostileStore(FolderStore):
        def list(self, prefix):
            from agentmem.store.base import ObjectInfo

            return super().list(prefix) + [
                ObjectInfo("projects/app/notes/../../../../evil.md", 3),
                ObjectInfo("projects/other/notes/x.md", 3),
                ObjectInfo("projects/app/notes/sub/deep.md", 3),
                ObjectInfo("projects/app/notes/.hidden.md", 3),
            ]

    store = HostileStore(tmp_path / "store")
    home = tmp_path / "home"
    ids = put_notes(store, "app", 1)
    status = cache.refresh(home, store.description, "app", store=store)
    assert status.added == ids
    assert sorted(p.name for p in (home).rglob("*.md")) == [f"{ids[0]}.md"]


def test_an_interrupted_download_never_appears_as_a_complete_cached_note(tmp_path):
    # INV atomic-cache: kill a refresh mid-way, repeatedly; every cached note is whole
    store = FolderStore(tmp_path / "store")
    home = tmp_path / "home"
    put_notes(store, "app", 300, size=20000)
    script = (
        "import sys; from pathlib import Path; from agentmem.memory import cache; from agentmem.store.folder import FolderStore;"
        f"s = FolderStore({str(store.root)!r}); cache.refresh(Path({str(home)!r}), s.description, 'app')"
    )
    for delay in (0.15, 0.25, 0.35):
        proc = subprocess.Popen([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": str(REPO)})
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        for note_id in cache.cached_ids(home, store.description, "app"):
            cached = cache.read_cached(home, store.description, "app", note_id)
            assert cached == store.get(notes.note_path("app", note_id))
    final = cache.refresh(home, store.description, "app")
    assert not final.stale
    assert len(cache.cached_ids(home, store.description, "app")) == 300
