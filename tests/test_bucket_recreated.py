"""A bucket deleted and created again under its ID, once accepted (`setup --new-store`), is listed whole:
the old bucket's notes leave the cache and its feed cursor is never read for the new one."""

from __future__ import annotations

from agentmem import config
from agentmem.replica import cache
from agentmem.setup import runner
from agentmem.store import identity
from tests.fixtures_hub import BucketMachine
from tests.test_bucket_freshness import BUCKET, STORE, another_machine_saves, refresh


def recreate_with(hub, count: int) -> list[str]:
    """Delete the bucket and create another under its ID, holding `count` new notes."""
    del hub.buckets[BUCKET]
    hub.add_bucket(BUCKET, private=True).created_ms += 1000
    return another_machine_saves(hub, count, body="in the new bucket")


def on_a_cursor(hub, home) -> list[str]:
    old = another_machine_saves(hub, 3, body="in the old bucket")
    refresh(home)
    refresh(home)  # now resuming from a feed cursor
    return old


def test_after_setup_accepts_a_recreated_bucket_search_lists_it_whole_and_drops_the_old_notes(
        hub, alice, alice_bucket, tmp_path):
    # INV store-identity, INV cache-kept-on-failure: a full listing of the accepted store prunes
    m = BucketMachine(tmp_path / "m", hub, alice)
    old = on_a_cursor(hub, m.home)
    new = recreate_with(hub, 1)
    assert refresh(m.home).stale  # not the bucket this machine knew, until setup accepts it
    report = runner.SetupReport(str(m.home))
    assert runner._store_step(report, m.home, config.load(m.home), 5, True), report.steps[-1].detail
    hub.clear_log()
    status = refresh(m.home)
    assert not status.stale and status.how == "listing (first look)"
    assert status.added == new and sorted(status.removed) == sorted(old)
    assert cache.cached_ids(m.home, STORE, "app") == new


def test_a_feed_cursor_of_another_bucket_is_never_read_for_this_one(hub, alice_bucket, tmp_path):
    # INV store-identity, INV change-token: the token names the bucket (its creation time) it came from
    home = tmp_path / "b"
    old = on_a_cursor(hub, home)
    new = recreate_with(hub, 2)
    identity.record(home, STORE, str(hub.buckets[BUCKET].created_ms))  # accepted some other way than setup
    hub.clear_log()
    status = refresh(home)
    assert not status.stale and status.how == "listing (first look)" and not hub.requests("events")
    assert sorted(status.added) == sorted(new) and sorted(status.removed) == sorted(old)
