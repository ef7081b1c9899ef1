"""The bucket store through the real huggingface_hub and hf_xet, against the loopback stand-in."""

from __future__ import annotations

import time

import pytest

from agentmem import errors
from agentmem.store.bucket import BucketStore

NOTE = "projects/app/notes/20261130T090000000Z-aaaaaaaa.md"


def _store(bucket="alice/agent-memory", timeout=2.0):
    return BucketStore(bucket, timeout=timeout)


def test_a_put_note_reads_back_with_the_same_bytes(alice_bucket):
    store = _store()
    store.put(NOTE, b"# hello\n")
    assert store.get(NOTE) == b"# hello\n"
    assert store.info(NOTE).size == 8


def test_identical_bytes_again_upload_nothing(hub, alice_bucket):
    # INV append-only
    store = _store()
    store.put(NOTE, b"same bytes\n")
    hub.clear_log()
    store.put(NOTE, b"same bytes\n")
    assert hub.requests("batch") == [] and hub.requests("xet-token") == []


def test_different_bytes_at_an_existing_path_are_a_conflict_and_the_remote_is_unchanged(hub, alice_bucket):
    # INV append-only
    store = _store()
    store.put(NOTE, b"first\n")
    with pytest.raises(errors.Conflict):
        store.put(NOTE, b"other\n")
    with pytest.raises(errors.Conflict):
        store.put(NOTE, b"first\n\n")
    assert store.get(NOTE) == b"first\n"


def test_no_credentials_is_not_authenticated_with_login_instructions(hub, alice_bucket, monkeypatch):
    monkeypatch.delenv("HF_TOKEN")
    with pytest.raises(errors.NotAuthenticated) as caught:
        _store().put(NOTE, b"x")
    assert "hf auth login" in caught.value.one_line() and "HF_TOKEN" in caught.value.one_line()
    assert hub.log == []  # nothing was even asked


def test_a_rejected_token_is_not_authenticated_and_never_echoed(hub, alice_bucket, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_not_a_real_token_123")
    with pytest.raises(errors.NotAuthenticated) as caught:
        _store().list("projects/app")
    assert "hf_not_a_real_token_123" not in caught.value.one_line()


def test_someone_elses_private_bucket_is_reported_not_found(hub, alice, bob):
    with pytest.raises(errors.NotFound):
        _store("bob/agent-memory").list("projects/app")


def test_a_public_bucket_is_refused_before_anything_is_written(hub, alice):
    hub.add_bucket("alice/open", private=False)
    with pytest.raises(errors.UnsafeBucket):
        _store("alice/open").put(NOTE, b"secret plans\n")
    assert hub.buckets["alice/open"].files == {} and hub.buckets["alice/open"].private is False
    assert hub.requests("batch") == []


def test_a_read_only_token_cannot_upload_and_is_told_no_access(hub, alice_bucket, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", hub.add_token("alice", write=False))
    store = _store()
    assert store.list("projects/app") == []  # reading is allowed
    with pytest.raises(errors.NoAccess):
        store.put(NOTE, b"x\n")
    assert hub.buckets["alice/agent-memory"].files == {}


def test_a_missing_bucket_is_not_found(hub, alice):
    with pytest.raises(errors.NotFound):
        _store("alice/nothing-here").get(NOTE)


def test_a_missing_object_is_not_found(alice_bucket):
    with pytest.raises(errors.NotFound):
        _store().get(NOTE)
    assert _store().info(NOTE) is None


def test_an_unreachable_hub_is_offline_at_once(hub, alice_bucket):
    # INV bounded-network
    hub.stop()
    started = time.monotonic()
    with pytest.raises(errors.Offline):
        _store(timeout=20).put(NOTE, b"x\n")
    assert time.monotonic() - started < 2


def test_server_errors_are_a_remote_error_within_the_budget(hub, alice_bucket):
    # INV bounded-network
    hub.inject("paths-info", status=503)
    started = time.monotonic()
    with pytest.raises(errors.RemoteError):
        _store(timeout=2).put(NOTE, b"x\n")
    assert time.monotonic() - started < 3


def test_a_slow_server_is_offline_when_the_budget_runs_out(hub, alice_bucket):
    # INV bounded-network
    hub.inject("tree", "slow", delay=6)
    started = time.monotonic()
    with pytest.raises(errors.Offline):
        _store(timeout=1).list("projects/app")
    assert time.monotonic() - started < 3.5  # the budget plus slack for a loaded machine, well short of 6


def test_a_listing_cut_off_on_its_second_page_raises_instead_of_returning_part(hub, alice_bucket):
    # INV complete-listing
    store = _store()
    for i in range(7):
        store.put(f"projects/app/notes/n{i}.md", f"{i}\n".encode())
    assert len(_store().list("projects/app")) == 7
    hub.inject("tree", "drop", page=2)
    with pytest.raises((errors.Offline, errors.RemoteError)):
        _store().list("projects/app")


def test_listing_reads_every_page_and_only_below_the_prefix(hub, alice_bucket):
    # INV complete-listing
    store = _store()
    for i in range(8):
        store.put(f"projects/app/notes/n{i}.md", b"a\n")
    store.put("projects/app-other/notes/x.md", b"b\n")
    store.put("projects/other/notes/y.md", b"c\n")
    hub.clear_log()
    listed = _store().list("projects/app")
    assert [o.path for o in listed] == [f"projects/app/notes/n{i}.md" for i in range(8)]
    assert len(hub.requests("tree")) >= 3


def test_a_batch_applied_but_its_reply_lost_is_outcome_unknown_and_a_retry_adds_nothing(hub, alice_bucket):
    # INV append-only: the retry sends the same bytes and finds them already there
    hub.inject("batch", "drop-after-apply", times=1)
    with pytest.raises(errors.TRANSIENT):
        _store().put(NOTE, b"the note\n")
    assert NOTE in hub.buckets["alice/agent-memory"].files  # applied server-side
    hub.clear_log()
    _store().put(NOTE, b"the note\n")
    assert hub.requests("batch") == []
    assert list(hub.buckets["alice/agent-memory"].files) == [NOTE]


def test_a_refused_xet_token_mid_upload_is_classified_by_asking_the_token_endpoint(hub, alice_bucket):
    hub.inject("xet-token", "drop")
    started = time.monotonic()
    with pytest.raises(errors.Offline):
        _store(timeout=2).put(NOTE, b"x\n")
    assert time.monotonic() - started < 8
    assert hub.buckets["alice/agent-memory"].files == {}


@pytest.mark.parametrize("bad", ["", "/abs", "a/../b", ".hidden/x", "a//b", "a/b/"])
def test_bad_object_paths_are_rejected_before_any_request(hub, alice_bucket, bad):
    with pytest.raises(errors.InvalidInput):
        _store().put(bad, b"x")
    assert hub.log == []


@pytest.mark.parametrize("bad", ["noslash", "a/b/c", "../x", "a/ b", ""])
def test_bad_bucket_ids_are_invalid_input(bad):
    with pytest.raises(errors.InvalidInput):
        BucketStore(bad)


def test_hf_xet_retries_against_a_failing_token_endpoint_stay_within_the_budget(hub, alice_bucket):
    # INV bounded-network: hf_xet's own retries are bounded through its settings
    hub.inject("xet-token", status=500)
    started = time.monotonic()
    with pytest.raises(errors.TRANSIENT):
        _store(timeout=2).put(NOTE, b"x\n")
    assert time.monotonic() - started < 2 + 3  # budget plus hf_xet's bounded retry window
    assert hub.buckets["alice/agent-memory"].files == {}


def test_a_hanging_xet_token_endpoint_cannot_hold_a_save_past_the_budget(hub, alice_bucket):
    # INV bounded-network: hf_xet's requests bypass our HTTP client; the transfer is waited for only as long as the budget
    hub.inject("xet-token", "slow", delay=6, times=1)
    started = time.monotonic()
    with pytest.raises(errors.Offline):
        _store(timeout=1.5).put(NOTE, b"x\n")
    assert time.monotonic() - started < 4  # the budget plus slack for a loaded machine, well short of 6


def test_a_prefix_nobody_wrote_lists_empty_even_if_the_hub_answers_404(hub, alice_bucket):
    # The stand-in cannot know which the real Hub does for an unused folder; both must mean "no notes yet".
    assert _store().list("projects/new") == []
    hub.missing_prefix_404 = True
    assert _store().list("projects/new") == []
    with pytest.raises(errors.NotFound):
        _store("alice/no-such-bucket").list("projects/new")
