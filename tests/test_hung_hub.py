"""A Hub that hangs (its process stopped, its port open) costs a search `[network] check_timeout`, once:
the answer comes from the cache marked stale, the next searches answer so at once without asking, and
saves keep their whole budget. Real clients against the loopback Hub's `hang` and `slow` faults."""

from __future__ import annotations

import json
import time

from agentmem.replica import backoff, cache
from tests.fixtures_hub import BucketMachine
from tests.test_bad_network import within
from tests.test_bucket_freshness import STORE, another_machine_saves


def machine(tmp_path, hub, token, *, budget: float = 8, check: float = 1) -> BucketMachine:
    m = BucketMachine(tmp_path / "m", hub, token)
    text = (m.home / "config.toml").read_text().replace("timeout = 3", f"timeout = {budget:g}\ncheck_timeout = {check:g}")
    (m.home / "config.toml").write_text(text)
    return m


def timed_search(m: BucketMachine, *args: str) -> tuple[dict, float]:
    started = time.monotonic()
    done = m.run("search", "finding", "--json", *args)
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), took


def test_a_hung_hub_costs_one_search_its_check_deadline_and_the_next_ones_nothing(hub, alice, alice_bucket, tmp_path):
    # INV bounded-network, INV cache-kept-on-failure
    m = machine(tmp_path, hub, alice)
    ids = another_machine_saves(hub, 2)
    first, base = timed_search(m)  # the first look lists the bucket
    assert first["stale"] is False and len(first["results"]) == 2
    hub.inject("*", "hang")
    out, took = timed_search(m)
    assert took < base + 1 + 2.5  # the budget is 8 s: waiting it out would fail here
    assert out["stale"] is True and out["stale_error"] == "offline" and "did not answer within 1 s" in out["stale_reason"]
    assert sorted(r["id"] for r in out["results"]) == sorted(ids)  # answered from the cache
    asked = len(hub.requests())
    again, quick = timed_search(m)
    assert quick < base + 1 and len(hub.requests()) == asked  # not asked at all
    assert again["stale"] is True and "did not answer a search in time" in again["stale_reason"]
    assert sorted(r["id"] for r in again["results"]) == sorted(ids)
    text = m.run("search", "finding")
    assert "may be stale - the store did not answer a search in time" in text.stdout + text.stderr


def test_a_slow_hub_makes_searches_stale_while_a_save_keeps_its_budget_and_refresh_asks_again(hub, alice, alice_bucket,
                                                                                            tmp_path):
    # INV bounded-network, INV nothing-lost: the check deadline is a search's, never a save's
    m = machine(tmp_path, hub, alice, budget=15)
    another_machine_saves(hub, 1)
    timed_search(m)
    hub.inject("*", "slow", delay=1.3)  # every answer comes, 1.3 s late: past the check, inside the budget
    out, _ = timed_search(m)
    assert out["stale"] is True and "did not answer within 1 s" in out["stale_reason"]
    saved = m.run("save", "--title", "finding saved slowly", stdin="Saved while the Hub is slow.\n")
    assert saved.returncode == 0 and saved.stdout.startswith("saved "), saved.stdout + saved.stderr
    hub.clear_faults()
    held, _ = timed_search(m)
    assert held["stale"] is True and "did not answer a search in time" in held["stale_reason"]
    fresh, _ = timed_search(m, "--refresh")  # asks despite the hold, and ends it
    assert fresh["stale"] is False and any(r["title"] == "finding saved slowly" for r in fresh["results"])
    hub.clear_log()
    after, _ = timed_search(m)
    assert after["stale"] is False and [r.route for r in hub.requests()][:1] == ["info"]


def test_the_check_deadline_bounds_only_the_check_and_the_hold_ends_when_it_has_passed(hub, alice_bucket, tmp_path,
                                                                                       monkeypatch):
    # INV bounded-network
    home = tmp_path / "b"
    another_machine_saves(hub, 1)
    cache.refresh(home, STORE, "app", timeout=8)
    fault = hub.inject("info", "hang", times=1)
    status, took = within(10, lambda: cache.ensure_fresh(home, STORE, "app", max_age=0, timeout=8, check_timeout=0.5))
    assert 0.5 <= took < 2 and status.stale and fault.hits == 1
    status, took = within(10, lambda: cache.ensure_fresh(home, STORE, "app", max_age=0, timeout=8, check_timeout=0.5))
    assert took < 0.3 and status.stale and fault.hits == 1
    monkeypatch.setattr(backoff, "HOLD_SECONDS", 0.0)  # as if a minute had passed
    new = another_machine_saves(hub, 2)
    status = cache.ensure_fresh(home, STORE, "app", max_age=0, timeout=8, check_timeout=0.5)
    assert not status.stale and sorted(status.added) == sorted(new)


def test_a_read_against_a_hung_hub_spends_at_most_one_network_budget(hub, alice, alice_bucket, tmp_path):
    # INV bounded-network: the change check and the note's own download share one budget
    m = machine(tmp_path, hub, alice, budget=4, check=1)
    [cached] = another_machine_saves(hub, 1)
    assert m.run("read", cached, "--json").returncode == 0  # cached here
    [fetched] = another_machine_saves(hub, 1)  # never here: only the Hub can answer for it
    hub.inject("*", "hang")
    started = time.monotonic()
    done = m.run("read", fetched, "--json")
    took = time.monotonic() - started
    assert done.returncode != 0 and json.loads(done.stdout)["error"] == "offline", done.stdout
    assert took < 4 + 2.5, took  # two budgets (the check's, then the download's) would be over 8 s
    started = time.monotonic()
    done = m.run("read", cached, "--json")
    took = time.monotonic() - started
    out = json.loads(done.stdout)
    assert done.returncode == 0 and out["source"] == "cache" and out["stale"] is True, out
    assert took < 2.5, took  # the hold after the hang: not asked again, answered from the cache, said so
