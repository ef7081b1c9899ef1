"""Saving, retrying and refreshing through the bucket store, the real clients and the stand-in."""

from __future__ import annotations

import os
from pathlib import Path

from agentmem.fsutil import TMP_PREFIX
from agentmem.note import document
from agentmem.replica import cache
from agentmem.search import find
from agentmem.store.base import StoreDescription
from agentmem.store.opening import open_store
from agentmem.uploads import delivery, pending

STORE = StoreDescription("bucket", "alice/agent-memory")
PREFIX = "projects/app/notes"


def _save(home, body: str, *, timeout: float = 2):
    note = document.build(body=body, title=None, kind="note", project="app", agent="codex@laptop")
    data = note.render()
    entry = pending.Entry(id=note.id, store=STORE, project="app", path=document.note_path("app", note.id), created=note.created)
    pending.persist(home, entry, data)
    return delivery.deliver(home, entry, data, timeout=timeout), data


def _remote(hub):
    return hub.buckets["alice/agent-memory"].files


def test_a_failed_upload_leaves_the_exact_note_pending_until_a_retry_confirms_it(hub, alice_bucket, tmp_path):
    # INV nothing-lost, INV same-bytes-retry
    home = tmp_path / "home"
    hub.inject("batch", status=503)
    outcome, data = _save(home, "# Decision\nUse buckets.\n")
    assert outcome.status == "pending" and outcome.error.kind == "remote-error"
    assert pending.load(home, outcome.entry.id)[1] == data and _remote(hub) == {}
    hub.clear_faults()
    again = delivery.retry(home, outcome.entry.id, timeout=2)
    assert again.status == "saved" and pending.list_entries(home) == []
    assert open_store(STORE, timeout=2).get(outcome.entry.path) == data


def test_an_upload_applied_but_unconfirmed_is_retried_without_a_duplicate(hub, alice_bucket, tmp_path):
    # INV same-bytes-retry, INV append-only
    home = tmp_path / "home"
    hub.inject("batch", "drop-after-apply", times=1)
    outcome, data = _save(home, "# Finding\nThe reply was lost.\n")
    assert outcome.status == "pending"  # the outcome is unknown, so the note stays
    assert list(_remote(hub)) == [outcome.entry.path]  # yet the server applied it
    hub.clear_log()
    again = delivery.retry(home, outcome.entry.id, timeout=2)
    assert again.status == "saved" and hub.requests("batch") == []
    assert list(_remote(hub)) == [outcome.entry.path] and pending.count(home) == 0


def test_a_crash_after_upload_before_cleanup_is_recovered_by_a_retry(hub, alice_bucket, tmp_path):
    # INV nothing-lost: persisted, uploaded, then the process died before removing the entry
    home = tmp_path / "home"
    note = document.build(body="# Checkpoint\nhalf done\n", title=None, kind="checkpoint", project="app", agent="a")
    data = note.render()
    entry = pending.Entry(id=note.id, store=STORE, project="app", path=document.note_path("app", note.id), created=note.created)
    pending.persist(home, entry, data)
    open_store(STORE, timeout=2).put(entry.path, data)
    assert pending.count(home) == 1
    outcome = delivery.retry(home, note.id, timeout=2)
    assert outcome.status == "saved" and pending.count(home) == 0
    assert list(_remote(hub)) == [entry.path]


def test_a_listing_cut_off_midway_keeps_the_previous_cache(hub, alice_bucket, tmp_path):
    # INV cache-kept-on-failure
    home = tmp_path / "home"
    ids = [_save(home, f"# Note {i}\nbody {i}\n")[0].entry.id for i in range(8)]  # 6 left after two vanish: 2 pages
    other = tmp_path / "other-machine"
    assert cache.refresh(other, STORE, "app", timeout=2).stale is False
    assert sorted(cache.cached_ids(other, STORE, "app")) == sorted(ids)
    for note_id in ids[:2]:  # two notes vanish server-side: a complete listing would prune them
        hub.delete_file("alice/agent-memory", f"{PREFIX}/{note_id}.md")
    hub.feed = "404"  # no events feed: the refresh must list the project
    hub.inject("tree", "drop", page=2)
    status = cache.refresh(other, STORE, "app", timeout=2)
    assert status.stale and status.error in ("offline", "remote-error")
    assert sorted(cache.cached_ids(other, STORE, "app")) == sorted(ids)
    hub.clear_faults()
    assert cache.refresh(other, STORE, "app", timeout=2).stale is False
    assert sorted(cache.cached_ids(other, STORE, "app")) == sorted(ids[2:])


def test_an_interrupted_download_never_leaves_a_complete_looking_cached_file(hub, alice_bucket, tmp_path, monkeypatch):
    # INV atomic-cache
    monkeypatch.setattr(cache, "FETCH_BATCH", 1)  # one transfer per note, so the third can be cut off alone
    home = tmp_path / "home"
    saved = {}
    for i in range(4):
        outcome, data = _save(home, f"# Note {i}\n" + "line\n" * 50)
        saved[outcome.entry.id] = data
    hub.inject("resolve", "drop", after=2)  # the third download's metadata request is cut off
    other = tmp_path / "other-machine"
    status = cache.refresh(other, STORE, "app", timeout=2)
    assert status.stale
    ndir = Path(cache.notes_dir(other, STORE, "app"))
    names = os.listdir(ndir)
    assert len(cache.cached_ids(other, STORE, "app")) == 2
    for name in names:
        if name.startswith(TMP_PREFIX):
            continue
        assert (ndir / name).read_bytes() == saved[name[:-3]]  # every cached note is whole


def test_an_offline_search_uses_the_cache_and_says_it_may_be_stale(hub, alice_bucket, tmp_path):
    home = tmp_path / "home"
    outcome, _ = _save(home, "# Decision\nWe chose buckets over git.\n")
    other = tmp_path / "other-machine"
    cache.refresh(other, STORE, "app", timeout=2)
    hub.stop()
    status = cache.ensure_fresh(other, STORE, "app", max_age=0, timeout=2)
    assert status.stale and status.error == "offline" and "reach" in status.reason
    hits = find.literal(find.candidates(other, STORE, "app"), "buckets over git", 10)
    assert [h.id for h in hits] == [outcome.entry.id]


def test_an_authentication_failure_is_never_reported_as_a_refresh(hub, alice_bucket, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_revoked")
    status = cache.ensure_fresh(tmp_path / "home", STORE, "app", max_age=0, timeout=2)
    assert status.stale and status.error == "not-authenticated" and not status.refreshed


def test_a_transfer_cut_short_in_the_xet_store_never_lands_in_the_cache(hub, alice_bucket, tmp_path):
    # INV atomic-cache: hf_xet reconstructs from truncated data and fails; nothing half-written is kept
    home = tmp_path / "home"
    for i in range(3):
        _save(home, f"# Note {i}\n" + "detail\n" * 100)
    for xorb in (hub.cas_dir / "xet" / "xorbs" / "xorbs").iterdir():
        if not xorb.name.endswith(".tagset"):
            xorb.write_bytes(xorb.read_bytes()[: xorb.stat().st_size // 2])
    other = tmp_path / "other-machine"
    status = cache.refresh(other, STORE, "app", timeout=3)
    assert status.stale and status.error == "remote-error"
    ndir = Path(cache.notes_dir(other, STORE, "app"))
    assert cache.cached_ids(other, STORE, "app") == []
    assert not ndir.exists() or [n for n in os.listdir(ndir) if not n.startswith(TMP_PREFIX)] == []
