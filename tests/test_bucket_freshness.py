"""Fresh on every search through a bucket: updatedAt, the events feed and the listing fallback, counted
on the loopback Hub through the real clients."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentmem.note import document
from agentmem.replica import cache
from agentmem.store import hubfeed, hubhttp
from agentmem.store.base import StoreDescription

STORE = StoreDescription("bucket", "alice/agent-memory")
BUCKET = "alice/agent-memory"


def another_machine_saves(hub, count: int, body: str = "finding", size: int = 0) -> list[str]:
    """Notes written into the bucket server-side, as another machine's saves land."""
    ids = []
    for i in range(count):
        note = document.build(body=f"# {body} {i}\n" + "x" * size, title=None, kind="note", project="app", agent="m2")
        hub.put_file(BUCKET, document.note_path("app", note.id), note.render())
        ids.append(note.id)
    return ids


def long_ago(hub) -> None:
    """As if the bucket's last change were a minute old, so its updatedAt is trusted as settled."""
    hub.buckets[BUCKET].updated_ms -= 60_000


def routes(hub) -> list[str]:
    # huggingface_hub's once-a-day user-agent registry fetch is the client's, not the refresh's
    return [f"{r.method} {r.route}" for r in hub.requests() if r.route != "agent-harnesses"]


def refresh(home: Path):
    return cache.refresh(home, STORE, "app", timeout=3)


def test_a_search_with_nothing_new_costs_one_request_and_no_listing(hub, alice_bucket, tmp_path):
    home = tmp_path / "b"
    another_machine_saves(hub, 4)
    long_ago(hub)
    assert refresh(home).how == "listing (first look)"
    hub.clear_log()
    status = refresh(home)
    assert not status.stale and status.how == "unchanged (bucket updatedAt)"
    assert routes(hub) == ["GET info"]


def test_right_after_a_change_the_feed_is_read_once_more_before_updated_at_is_trusted(hub, alice_bucket, tmp_path):
    # INV read-your-writes: an updatedAt seen within SETTLE_SECONDS of the Hub's clock may still be
    # followed by a change in the same instant, or by a feed that lags it
    home = tmp_path / "b"
    another_machine_saves(hub, 1)
    refresh(home)
    hub.clear_log()
    assert refresh(home).how.startswith("events feed") and routes(hub) == ["GET info", "GET events"]
    long_ago(hub)
    hub.clear_log()
    refresh(home)
    assert routes(hub) == ["GET info", "GET events"]  # updatedAt moved: read once more, now settled
    hub.clear_log()
    refresh(home)
    assert routes(hub) == ["GET info"]


def files_downloaded(monkeypatch) -> list[str]:
    """The bucket paths handed to huggingface_hub's download_bucket_files from now on (it still runs)."""
    from huggingface_hub import HfApi

    asked: list[str] = []
    real = HfApi.download_bucket_files

    def counted(self, bucket_id, files, **kwargs):
        asked.extend(getattr(remote, "path", remote) for remote, _ in files)
        return real(self, bucket_id, files, **kwargs)

    monkeypatch.setattr(HfApi, "download_bucket_files", counted)
    return asked


def test_new_notes_from_another_machine_cost_the_feed_one_transfer_and_exactly_their_downloads(
        hub, alice_bucket, tmp_path, monkeypatch):
    # INV read-your-writes: k new notes cost k + 3 requests at most (here 4), each note downloaded once
    home = tmp_path / "b"
    another_machine_saves(hub, 3)
    long_ago(hub)
    refresh(home)
    new = another_machine_saves(hub, 10, body="arrived later", size=500)
    asked = files_downloaded(monkeypatch)
    hub.clear_log()
    status = refresh(home)
    assert not status.stale and sorted(status.added) == sorted(new)
    assert sorted(asked) == sorted(document.note_path("app", i) for i in new)
    assert routes(hub) == ["GET info", "GET events", "HEAD resolve", "GET xet-token"]
    for note_id in new:
        assert cache.read_cached(home, STORE, "app", note_id) == hub.read_file_bytes(BUCKET, document.note_path("app", note_id))


def test_a_note_deleted_in_the_bucket_leaves_the_cache_through_the_feed(hub, alice_bucket, tmp_path):
    # INV cache-kept-on-failure: a delete the feed reported prunes, without a listing
    home = tmp_path / "b"
    ids = another_machine_saves(hub, 3)
    refresh(home)
    hub.delete_file(BUCKET, document.note_path("app", ids[0]))
    hub.clear_log()
    status = refresh(home)
    assert status.removed == [ids[0]] and "GET tree" not in routes(hub)
    assert sorted(cache.cached_ids(home, STORE, "app")) == sorted(ids[1:])


@pytest.mark.parametrize("answer", ["404", "501", "400"])
def test_without_a_usable_feed_a_refresh_falls_back_to_a_complete_listing(hub, alice_bucket, tmp_path, answer):
    home = tmp_path / "b"
    another_machine_saves(hub, 2)
    refresh(home)
    hub.feed = answer
    new = another_machine_saves(hub, 2)
    hub.clear_log()
    status = refresh(home)
    assert not status.stale and sorted(status.added) == sorted(new)
    assert f"(HTTP {answer})" in status.how and "GET tree" in routes(hub)


def test_a_feed_reset_falls_back_to_a_listing_then_resumes_from_since(hub, alice_bucket, tmp_path):
    home = tmp_path / "b"
    another_machine_saves(hub, 1)
    refresh(home)  # first look: a listing; the next refresh resumes from since=updatedAt
    hub.feed = "reset"
    missed = another_machine_saves(hub, 2)
    status = refresh(home)
    assert "reset" in status.how and sorted(status.added) == sorted(missed)
    hub.feed = "ok"
    later = another_machine_saves(hub, 1)
    hub.clear_log()
    status = refresh(home)
    assert status.added == later and status.how.startswith("events feed")
    [feed] = hub.requests("events")
    assert "?since=" in feed.path  # after the reset's listing, from the instant it began
    token = json.loads((Path(cache.project_dir(home, STORE, "app")) / "state.json").read_text())["token"]
    assert token["cursor"].startswith("c")


def test_a_feed_that_stalls_before_ready_falls_back_to_a_listing_within_the_budget(hub, alice_bucket, tmp_path,
                                                                                   monkeypatch):
    # INV bounded-network
    monkeypatch.setattr(hubfeed, "FEED_MAX_SECONDS", 1.0)
    home = tmp_path / "b"
    another_machine_saves(hub, 1)
    refresh(home)
    hub.feed = "stall"
    new = another_machine_saves(hub, 1)
    status = refresh(home)
    assert not status.stale and status.added == new and "stalled" in status.how


def test_a_feed_that_reconnects_before_ready_is_resumed_from_its_last_cursor(hub, alice_bucket, tmp_path):
    home = tmp_path / "b"
    another_machine_saves(hub, 1)
    refresh(home)
    refresh(home)  # now on a cursor
    hub.feed, hub.feed_batch = "reconnect", 1
    new = another_machine_saves(hub, 3)
    hub.clear_log()
    status = refresh(home)
    assert sorted(status.added) == sorted(new) and len(hub.requests("events")) == 2 and "GET tree" not in routes(hub)


def test_an_interrupted_refresh_keeps_its_cursor_so_the_next_one_loses_nothing(hub, alice_bucket, tmp_path,
                                                                             monkeypatch):
    # INV change-token
    monkeypatch.setattr(cache, "FETCH_BATCH", 1)  # one transfer per note, so one can be cut off alone
    home = tmp_path / "b"
    another_machine_saves(hub, 1)
    refresh(home)
    refresh(home)
    state_file = Path(cache.project_dir(home, STORE, "app")) / "state.json"
    before = json.loads(state_file.read_text())["token"]
    new = another_machine_saves(hub, 3)
    hub.inject("resolve", "drop", after=1)  # the second download is cut off
    cut = refresh(home)
    assert cut.stale and len(cut.added) == 1
    assert json.loads(state_file.read_text())["token"] == before
    hub.clear_faults()
    status = refresh(home)
    assert not status.stale and set(status.added) == set(new) - set(cut.added)
    assert set(new) <= set(cache.cached_ids(home, STORE, "app"))


def test_a_vanished_bucket_is_not_found_and_prunes_nothing(hub, alice_bucket, tmp_path):
    # INV store-identity, INV cache-kept-on-failure
    home = tmp_path / "b"
    ids = another_machine_saves(hub, 2)
    refresh(home)
    del hub.buckets[BUCKET]
    status = refresh(home)
    assert status.stale and status.error == "not-found" and "not found" in status.reason
    assert sorted(cache.cached_ids(home, STORE, "app")) == sorted(ids)


def test_a_bucket_deleted_and_created_again_is_not_taken_for_the_one_this_machine_knew(hub, alice_bucket, tmp_path):
    # INV store-identity
    home = tmp_path / "b"
    ids = another_machine_saves(hub, 2)
    refresh(home)
    del hub.buckets[BUCKET]
    hub.add_bucket(BUCKET, private=True).created_ms += 1000  # a new bucket under the same ID
    status = refresh(home)
    assert status.stale and status.error == "offline" and "created again" in status.reason
    assert sorted(cache.cached_ids(home, STORE, "app")) == sorted(ids)  # nothing pruned


def test_a_bucket_whose_info_has_no_updated_at_still_finds_every_new_note(hub, alice_bucket, tmp_path):
    hub.info_updated_at = False
    home = tmp_path / "b"
    another_machine_saves(hub, 1)
    refresh(home)
    new = another_machine_saves(hub, 2)
    status = refresh(home)
    assert sorted(status.added) == sorted(new)
    hub.feed = "404"
    later = another_machine_saves(hub, 1)
    assert refresh(home).added == later


def test_an_oversized_object_in_the_bucket_is_skipped_and_reported_and_the_rest_arrive(hub, alice_bucket, tmp_path):
    # INV unreadable-skipped
    home = tmp_path / "b"
    refresh(home)
    big = "20261201T000000000Z-hugenote"  # not a note agentmem writes: placed by hand, over 1 MiB
    hub.put_file(BUCKET, document.note_path("app", big), b'---\ntitle: "big"\n---\n' + b"y" * (1024 * 1024 + 10))
    fine = another_machine_saves(hub, 1)
    hub.clear_log()
    status = refresh(home)
    assert status.added == fine and list(status.unreadable) == [big]
    assert "too large" in status.unreadable[big]["message"]
    assert all(big not in r.path for r in hub.requests("resolve"))  # never downloaded


def test_a_note_arriving_while_the_feed_is_read_is_found_by_the_next_refresh(hub, alice_bucket, tmp_path, monkeypatch):
    # INV read-your-writes: updatedAt was read before the feed, so the late note moves it again
    home = tmp_path / "b"
    another_machine_saves(hub, 1)
    refresh(home)
    real = hubfeed.read_feed
    late: list[str] = []

    def read_then_another_machine_saves(*args, **kwargs):
        feed = real(*args, **kwargs)
        if not late:
            late.extend(another_machine_saves(hub, 1, body="late"))
        return feed

    monkeypatch.setattr(hubfeed, "read_feed", read_then_another_machine_saves)
    another_machine_saves(hub, 1)
    during = refresh(home)
    assert late and late[0] not in during.added
    monkeypatch.setattr(hubfeed, "read_feed", real)  # (undo would also drop the fixtures' HF_TOKEN)
    assert late[0] in refresh(home).added


def test_a_note_saved_on_one_machine_is_found_by_the_next_search_on_another_even_right_after_it_searched(
        hub, alice, alice_bucket, tmp_path):
    # INV read-your-writes, through the CLI of two machines
    from tests.fixtures_hub import BucketMachine

    writer = BucketMachine(tmp_path / "a", hub, alice)
    reader = BucketMachine(tmp_path / "b", hub, alice)
    first = reader.run("search", "zebra", "--json")
    assert first.returncode == 0 and json.loads(first.stdout)["results"] == []
    saved = writer.run("save", "--title", "zebra", stdin="The zebra migration is done.\n")
    assert saved.returncode == 0, saved.stderr
    found = reader.run("search", "zebra", "--json")
    out = json.loads(found.stdout)
    assert [r["title"] for r in out["results"]] == ["zebra"] and out["stale"] is False
    assert out["checked_at"] and out["unreadable"] == []


def test_where_the_light_client_cannot_go_the_same_requests_go_through_huggingface_hub(hub, alice_bucket, tmp_path,
                                                                                     monkeypatch):
    # a proxy in the environment, an OIDC or refreshable login: huggingface_hub's session sends them
    monkeypatch.setattr(hubhttp, "_light_token", lambda: hubhttp._HEAVY)
    home = tmp_path / "b"
    another_machine_saves(hub, 1)
    refresh(home)
    new = another_machine_saves(hub, 2)
    hub.clear_log()
    status = refresh(home)
    assert not status.stale and sorted(status.added) == sorted(new) and status.how.startswith("events feed")
    assert routes(hub)[:2] == ["GET info", "GET events"]


def test_the_bucket_identity_is_the_same_whether_proved_by_a_search_or_by_a_save(hub, alice_bucket, tmp_path):
    # INV store-identity: a save's check (huggingface_hub's datetime) must match a search's (the raw string)
    from agentmem.store import identity
    from agentmem.store.bucket import BucketStore

    home = tmp_path / "b"
    refresh(home)
    known = identity.recorded(home, STORE)
    store = BucketStore(BUCKET, timeout=3, identity=known)
    store.verify()
    assert store.identity == known


def test_a_listing_of_new_notes_is_fetched_in_one_transfer_and_a_lost_one_is_fetched_again(
        hub, alice_bucket, tmp_path, monkeypatch):
    # INV change-token: a transfer cut short adds nothing and keeps the token; the next one gets every note
    home = tmp_path / "b"
    first = another_machine_saves(hub, 12)
    asked = files_downloaded(monkeypatch)
    hub.inject("resolve", "drop", times=1)  # the transfer's one metadata request is cut off
    cut = refresh(home)
    assert cut.stale and cut.added == [] and cache.cached_ids(home, STORE, "app") == []
    hub.clear_log()
    asked.clear()
    status = refresh(home)
    assert not status.stale and sorted(status.added) == sorted(first) and sorted(asked) == sorted(
        document.note_path("app", i) for i in first)
    assert len([r for r in routes(hub) if r != "GET tree"]) <= 3  # info, one HEAD, one read token; the pages aside


def test_a_note_whose_transfer_fails_keeps_none_of_the_notes_before_it_out(hub, alice_bucket, tmp_path):
    # INV change-token, INV nothing-lost: the batch is read again one note at a time
    from tests.hubstub import StoredFile

    home = tmp_path / "b"
    refresh(home)
    good = another_machine_saves(hub, 3)
    broken = "20000101T000000000Z-zzzzzzzz"  # older than the others, so fetched after them; its bytes are in no CAS
    with hub.lock:
        bucket = hub.buckets[BUCKET]
        path = document.note_path("app", broken)
        bucket.files[path] = StoredFile(path, 200, "ab" * 32, 0, 0)
        hub.record(bucket, "add", path, bucket.files[path])
    status = refresh(home)
    assert status.stale and sorted(status.added) == sorted(good)
    assert broken not in cache.cached_ids(home, STORE, "app")
