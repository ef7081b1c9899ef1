"""The setup verification note, through the bucket store and the stand-in."""

from __future__ import annotations

import pytest

from agentmem import errors
from agentmem.setup import verification
from agentmem.store.base import StoreDescription

STORE = StoreDescription("bucket", "alice/agent-memory")


def test_setup_verification_saves_reads_back_from_the_bucket_and_finds_the_note(hub, alice_bucket, tmp_path):
    home = tmp_path / "home"
    result = verification.verify(home, STORE, "app", "codex@laptop", timeout=3)
    assert result.ok, result.problem
    assert result.upload == "saved" and list(hub.buckets["alice/agent-memory"].files) == [result.path]


def test_a_rerun_finds_the_same_note_and_adds_no_other(hub, alice_bucket, tmp_path):
    home = tmp_path / "home"
    first = verification.verify(home, STORE, "app", "codex@laptop", timeout=3)
    hub.clear_log()
    again = verification.verify(home, STORE, "app", "codex@laptop", timeout=3)
    assert again.ok and again.id == first.id and again.upload == "already-saved"
    assert hub.requests("batch") == [] and len(hub.buckets["alice/agent-memory"].files) == 1


def test_another_machine_gets_its_own_setup_note(hub, alice_bucket, tmp_path):
    a = verification.verify(tmp_path / "one", STORE, "app", "codex@one", timeout=3)
    b = verification.verify(tmp_path / "two", STORE, "app", "claude@two", timeout=3)
    assert a.ok and b.ok and a.id != b.id


def test_an_offline_hub_fails_verification_as_offline_and_saves_nothing(hub, alice_bucket, tmp_path):
    hub.stop()
    with pytest.raises(errors.Offline):
        verification.verify(tmp_path / "home", STORE, "app", "codex@laptop", timeout=2)
    assert not (tmp_path / "home" / "pending").exists() or not any((tmp_path / "home" / "pending").iterdir())


def test_a_failed_upload_leaves_the_note_pending_and_a_later_run_completes_it(hub, alice_bucket, tmp_path):
    # INV nothing-lost, INV same-bytes-retry
    home = tmp_path / "home"
    hub.inject("batch", status=503)
    down = verification.verify(home, STORE, "app", "codex@laptop", timeout=2)
    assert down.upload == "pending" and not down.ok and "--retry" in str(down.problem)
    hub.clear_faults()
    up = verification.verify(home, STORE, "app", "codex@laptop", timeout=3)
    assert up.ok and up.upload == "saved" and up.id == down.id
    assert not (home / "pending" / up.id).exists()


def test_a_second_host_with_the_same_folder_path_store_and_project_writes_its_own_note(hub, alice_bucket, tmp_path):
    # INV setup-own-write
    # Same user name on two hosts: the machine folder path, store and project are all equal. The
    # second must prove that it can write, not find the first one's note and call that verified.
    home = tmp_path / "home"
    first = verification.verify(home, STORE, "app", "codex@one", timeout=3)
    home.rename(tmp_path / "home-of-host-one")
    hub.clear_log()
    second = verification.verify(home, STORE, "app", "codex@two", timeout=3)
    assert second.ok and second.upload == "saved" and second.id != first.id
    assert hub.requests("batch") and len(hub.buckets["alice/agent-memory"].files) == 2


def test_a_setup_note_that_vanished_from_the_store_is_written_again(hub, alice_bucket, tmp_path):
    # INV setup-own-write
    home = tmp_path / "home"
    first = verification.verify(home, STORE, "app", "codex@laptop", timeout=3)
    hub.buckets["alice/agent-memory"].files.clear()  # the bucket was emptied behind our back
    again = verification.verify(home, STORE, "app", "codex@laptop", timeout=3)
    assert again.ok and again.upload == "saved" and again.id != first.id
    assert list(hub.buckets["alice/agent-memory"].files) == [again.path]


def test_a_setup_note_saved_before_the_record_existed_is_adopted_not_duplicated(hub, alice_bucket, tmp_path):
    # INV setup-rerun across the upgrade: the note an earlier version saved under the bare stable ID
    # is this machine's own when its cache holds the same bytes.
    from agentmem.note import document
    from agentmem.replica import cache

    home = tmp_path / "home"
    legacy_id = verification.setup_note_prefix(home, STORE, "app")
    data = document.build(body="# Memory setup verification\n\nSaved by an earlier agentmem.\n",
                          title=verification.TITLE, kind="note", project="app", agent="codex@laptop",
                          tags=["agentmem-setup"], note_id=legacy_id).render()
    hub.put_file("alice/agent-memory", f"projects/app/notes/{legacy_id}.md", data)
    cache.add_confirmed(home, STORE, "app", legacy_id, data)
    hub.clear_log()
    again = verification.verify(home, STORE, "app", "codex@laptop", timeout=3)
    assert again.ok and again.upload == "already-saved" and again.id == legacy_id
    assert hub.requests("batch") == [] and len(hub.buckets["alice/agent-memory"].files) == 1
