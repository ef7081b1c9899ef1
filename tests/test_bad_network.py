"""A Hub that misbehaves (trickles, sends endlessly, breaks its change batches) costs a refresh a bounded
time and bounded memory, and never passes a missing note off as current: the real clients against the
loopback Hub's faults (tests/hubstub_misbehave.py)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from agentmem.replica import cache
from agentmem.store import hubfeed, hubhttp, network
from tests.test_bucket_freshness import STORE, another_machine_saves, refresh

MiB = 1024 * 1024


def within(seconds: float, fn, *args):
    """`fn(*args)` on a thread, failing the test (rather than hanging it) if it runs past `seconds`.

    Returns its value and the seconds it took."""
    box: dict = {}

    def run():
        try:
            box["value"] = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box["error"] = exc

    started = time.monotonic()
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"still running after {seconds} s"
    if "error" in box:
        raise box["error"]
    return box["value"], time.monotonic() - started


@pytest.fixture(params=["light", "huggingface_hub"])
def client_path(request, monkeypatch):
    """Both ways the info and the feed are asked: http.client, and huggingface_hub's session."""
    if request.param == "huggingface_hub":
        monkeypatch.setattr(hubhttp, "_light_token", lambda: hubhttp._HEAVY)
    return request.param


def on_a_cursor(hub, home: Path) -> None:
    another_machine_saves(hub, 1)
    refresh(home)
    refresh(home)  # the second one reads the feed and keeps its cursor


def test_a_feed_that_trickles_a_byte_at_a_time_without_a_newline_ends_in_a_listing_within_the_budget(
        hub, alice_bucket, tmp_path, client_path):
    # INV bounded-network: the deadline holds inside a line, not only between lines
    home = tmp_path / "b"
    on_a_cursor(hub, home)
    new = another_machine_saves(hub, 2)
    fault = hub.inject("events", "trickle", delay=0.2)
    status, took = within(15, refresh, home)
    assert took < 3 + 2 and fault.sent >= 1  # the budget is 3 s
    assert not status.stale and sorted(status.added) == sorted(new) and "listing" in status.how


def test_bucket_info_that_trickles_is_stale_after_the_budget_not_a_hang(hub, alice_bucket, tmp_path, client_path):
    # INV bounded-network
    home = tmp_path / "b"
    ids = another_machine_saves(hub, 1)
    refresh(home)
    hub.inject("info", "trickle", delay=0.2)
    status, took = within(15, refresh, home)
    assert took < 3 + 2 and status.stale and status.error == "offline"
    assert cache.cached_ids(home, STORE, "app") == ids  # INV cache-kept-on-failure


def test_a_feed_that_streams_one_endless_line_is_read_only_up_to_its_bound(hub, alice_bucket, tmp_path, client_path):
    # INV bounded-network: bounded in bytes too (an endless line once grew a search to 3.4 GB)
    home = tmp_path / "b"
    on_a_cursor(hub, home)
    new = another_machine_saves(hub, 1)
    fault = hub.inject("events", "endless")
    status, _ = within(30, refresh, home)
    # the client stops at hubhttp.MAX_LINE_BYTES; the rest is what the sockets' buffers took
    assert fault.sent < hubhttp.MAX_LINE_BYTES + 16 * MiB
    assert not status.stale and status.added == new and "more than this client reads" in status.how


def test_bucket_info_without_end_is_refused_after_its_bound(hub, alice_bucket, tmp_path, client_path):
    # INV bounded-network
    home = tmp_path / "b"
    another_machine_saves(hub, 1)
    refresh(home)
    fault = hub.inject("info", "endless")
    status, _ = within(30, refresh, home)
    assert fault.sent < hubhttp.MAX_INFO_BYTES + 16 * MiB
    assert status.stale and status.error == "remote-error" and "larger than" in status.reason


def test_change_batches_that_do_not_parse_never_give_a_current_answer_without_the_note(hub, alice_bucket, tmp_path):
    # INV read-your-writes, INV change-token: a batch this client cannot read may hold a note
    home = tmp_path / "b"
    on_a_cursor(hub, home)
    hub.feed = "malformed"
    new = another_machine_saves(hub, 3)
    status = refresh(home)
    assert "cannot read" in status.how and "GET tree" in [f"{r.method} {r.route}" for r in hub.requests()]
    assert not status.stale and sorted(status.added) == sorted(new)
    assert set(new) <= set(cache.cached_ids(home, STORE, "app"))
    token = json.loads((Path(cache.project_dir(home, STORE, "app")) / "state.json").read_text())["token"]
    assert "cursor" not in token  # the listing's resume point, never a cursor read past the unread batch


@pytest.mark.parametrize("batch", [
    {"cursor": "c9", "changes": "not a list"},
    {"cursor": 9, "changes": []},
    {"cursor": "c9", "changes": [{"op": "add"}]},
    {"cursor": "c9", "changes": [{"op": "rename", "path": "projects/app/notes/x.md"}]},
    ["not", "an", "object"],
])
def test_a_change_batch_of_the_wrong_shape_is_not_read_as_no_change(batch):
    # INV read-your-writes
    lines = [b"event: changes\n", b"data: " + json.dumps(batch).encode() + b"\n", b"\n",
             b"event: ready\n", b'data: {"cursor": "c9"}\n', b"\n"]
    assert hubfeed._FeedState("c1").read(iter(lines)) == "malformed"


def test_an_event_this_client_does_not_know_is_still_skipped():
    lines = [b"event: ping\n", b"data: {not json\n", b"\n", b"event: ready\n", b'data: {"cursor": "c2"}\n', b"\n"]
    state = hubfeed._FeedState("c1")
    assert state.read(iter(lines)) == "ready" and state.cursor == "c2"


def test_a_listing_that_trickles_through_huggingface_hub_ends_at_the_budget(hub, alice_bucket, tmp_path):
    # INV bounded-network: huggingface_hub's own requests are bounded the same way (the budget transport)
    home = tmp_path / "b"
    another_machine_saves(hub, 1)
    hub.inject("tree", "trickle", delay=0.2)
    status, took = within(15, refresh, home)  # the first look lists
    assert took < 3 + 2 and status.stale and status.error == "offline"
    assert cache.cached_ids(home, STORE, "app") == []


def test_a_listing_page_without_end_is_refused_after_its_bound(hub, alice_bucket, tmp_path, monkeypatch):
    # INV bounded-network: bounded in bytes (the bound made small here, so the test stays quick)
    monkeypatch.setattr(network, "MAX_RESPONSE_BYTES", 2 * MiB, raising=False)
    home = tmp_path / "b"
    another_machine_saves(hub, 1)
    fault = hub.inject("tree", "endless")
    status, _ = within(30, refresh, home)
    assert fault.sent < 2 * MiB + 16 * MiB
    assert status.stale and status.error == "remote-error" and "larger than" in status.reason
