"""The loopback Hub's bucket events feed (`GET /api/buckets/{id}/events`), as server-sent events.

A mixin of tests/hubstub.py's request handler. The wire format is the one
huggingface_hub 2.4.0's `parse_follow_event` accepts (reference: hf-buckets.md,
last section): `changes` {cursor, changes: [...]}, in batches of `Hub.feed_batch`;
then `ready` {cursor}; the stream then stays open with keep-alive comments until
the client hangs up. Cursors are `c<sequence number>`; `since=` replays the
changes after that instant. `Hub.feed` makes it answer 404/501/400, `reset`,
stall (pings, never `ready`), end the first stream with `reconnect`, or send every
`changes` batch as data that does not parse (`malformed`), then `ready` as usual;
`Hub.feed_keep` limits the replay buffer (an older cursor gets `reset`).
"""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime


class FeedHandler:
    def _h_events(self, method, match, query, body, split, drop_reply):
        bucket = self._bucket_for(match, write=False)
        if bucket is None:
            return
        mode = self.hub.feed
        if mode in ("404", "501", "400"):
            self._send_json(int(mode), {"error": f"events feed answers {mode} here"})
            return
        with self.hub.lock:
            events = list(bucket.events)
        replay, error = self._replay_from(events, query)
        if error == "bad":
            self._send_json(400, {"error": "invalid cursor or since"})
            return
        self._log(method, self.path, 200, 0, 0)  # with the query: tests check the resume point sent
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            self._stream(mode, error, replay, events)
        except OSError:
            pass  # the client closed the stream, as it does after `ready`

    def _replay_from(self, events: list[dict], query) -> tuple[list[dict], str | None]:
        """The changes after the resume point, or an error: "bad" (400) or "reset" (too old)."""
        if "cursor" in query:
            raw = query["cursor"][0]
            if not re.fullmatch(r"c\d+", raw):
                return [], "bad"
            after = int(raw[1:])
            oldest = events[-self.hub.feed_keep]["seq"] if self.hub.feed_keep and len(events) > self.hub.feed_keep else 1
            if self.hub.feed_keep is not None and after < oldest - 1:
                return [], "reset"
            return [e for e in events if e["seq"] > after], None
        if "since" in query:
            moment = _parse_iso_ms(query["since"][0])
            if moment is None:
                return [], "bad"
            return [e for e in events if e["at_ms"] > moment], None
        return [], None  # live only: nothing replayed

    def _event(self, name: str, payload: dict, *, cut: bool = False) -> None:
        data = json.dumps(payload)
        data = data[: len(data) // 2] if cut else data  # "malformed": the batch's JSON breaks off
        self.wfile.write(f"event: {name}\ndata: {data}\n\n".encode())
        self.wfile.flush()

    def _stream(self, mode: str, error: str | None, replay: list[dict], events: list[dict]) -> None:
        if mode == "reset" or error == "reset":
            self._event("reset", {"reason": "resume point older than the replay buffer"})
            return
        size = max(1, self.hub.feed_batch)
        for start in range(0, len(replay), size):
            batch = replay[start : start + size]
            self._event("changes", {"cursor": f"c{batch[-1]['seq']}", "changes": [e["change"] for e in batch]},
                        cut=mode == "malformed")
            if mode == "reconnect" and not self.hub._reconnected:
                self.hub._reconnected = True
                self._event("reconnect", {"cursor": f"c{batch[-1]['seq']}"})
                return
        if mode == "stall":
            for _ in range(600):  # pings, never `ready`, for up to a minute
                self.wfile.write(b": ping\n\n")
                self.wfile.flush()
                time.sleep(0.1)
            return
        self._event("ready", {"cursor": f"c{events[-1]['seq']}"} if events else {})
        for _ in range(300):  # live: keep-alive pings until the client hangs up (it does, after `ready`)
            time.sleep(0.1)
            self.wfile.write(b": ping\n\n")
            self.wfile.flush()



def _parse_iso_ms(text: str) -> int | None:
    try:
        dt = datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    except ValueError:
        return None
    return int(dt.timestamp() * 1000)
