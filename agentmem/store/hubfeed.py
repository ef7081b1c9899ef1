"""Asking the Hub cheaply what changed in a bucket: its info (`updatedAt`) and its events feed.

Requests go through hubhttp.py (http.client on a search's common path, so it
does not import huggingface_hub), every answer bounded in bytes and time.

The feed (`GET /api/buckets/{id}/events?cursor=...` or `?since=...`, server-sent
events): `changes` batches (each with the cursor that resumes strictly after it),
then `ready` once the replay is done; this client stops reading there. `reset`
means the resume point is older than the server keeps; `reconnect` ends a
stream early. A batch this client cannot read whole makes the feed unusable
(the refresh lists instead): it may hold a note. Facts:
/work/shared/reference/hf-buckets.md, last section.
"""

from __future__ import annotations

import json
import re
import time

from agentmem import errors
from agentmem.store import network
from agentmem.store.hubhttp import Client, Reply, TooLarge

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

# Seconds the feed may take to reach `ready`, at most half the budget left: the rest is for
# the listing a stalled feed falls back to (2026-12-01).
FEED_MAX_SECONDS = 8.0
MAX_FEED_SESSIONS = 3  # streams ended by `reconnect` before `ready`, then give up and list
_ISO = re.compile(r"^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:?\d\d)?$")


# -- what is asked ---------------------------------------------------------------------------------


def check_status(reply: Reply, label: str, bucket_id: str) -> None:
    """Raise the agentmem error an error status means (as network.classify does for huggingface_hub)."""
    status = reply.status
    if status < 400:
        return
    if status == 404 and reply.headers.get("x-error-code") == "RepoNotFound":
        raise errors.NotFound(f"bucket {bucket_id} not found",
                              hint="check the ID; a private bucket of another account also looks missing")
    if status == 401:
        raise errors.NotAuthenticated(f"the Hugging Face Hub rejected this machine's credentials for {label}",
                                      hint=network.LOGIN_HINT)
    if status == 403:
        raise errors.NoAccess(f"this account may not do that in {label}",
                              hint="use a token with write access to the bucket, or ask its owner for access")
    if status == 404:
        raise errors.NotFound(f"{label}: not found")
    raise errors.RemoteError(f"{label}: the Hub answered HTTP {status}")


def bucket_info(client: Client, bucket_id: str) -> dict:
    """GET /api/buckets/{id}: the bucket's info, plus `_server_time` (epoch seconds from `Date`, or None)."""
    reply = client.request(f"/api/buckets/{bucket_id}")
    check_status(reply, client.label, bucket_id)
    try:
        info = json.loads(reply.body)
    except ValueError:
        info = None
    if not isinstance(info, dict):
        raise errors.RemoteError(f"{client.label}: malformed bucket info from the Hub")
    info["_server_time"] = _http_date(reply.headers.get("date"))
    return info


class Feed:
    """What one read of the feed gave: outcome "ready" (changes, cursor), "reset" or "unavailable"."""

    def __init__(self, outcome: str, detail: str = "", changes: list[dict] | None = None, cursor: str | None = None):
        self.outcome, self.detail, self.changes, self.cursor = outcome, detail, changes or [], cursor


def read_feed(client: Client, bucket_id: str, resume: tuple[str, str]) -> Feed:
    """The changes since `resume` (("cursor", c) or ("since", iso)), read until `ready`, then closed.

    The cursor returned resumes after everything returned. A stream that ends early
    (`reconnect`, a dropped connection) is resumed from the last batch's cursor.
    """
    from urllib.parse import quote

    state = _FeedState(resume[1] if resume[0] == "cursor" else None)
    kind, value = resume
    deadline = time.monotonic() + min(FEED_MAX_SECONDS, max(0.0, client.budget.remaining()) / 2)
    for _ in range(MAX_FEED_SESSIONS):
        path = f"/api/buckets/{bucket_id}/events?{kind}={quote(value, safe='')}"
        try:
            reply = client.request(path, accept="text/event-stream", stream=True, deadline=deadline)
        except errors.Offline as exc:
            return Feed("unavailable", f"did not answer ({exc.one_line()})")
        try:
            if reply.status >= 400:
                what = "refused the resume point" if reply.status == 400 else "is not served here"
                return Feed("unavailable", f"{what} (HTTP {reply.status})")
            if not (reply.headers.get("content-type") or "").startswith("text/event-stream"):
                return Feed("unavailable", "answered something other than an event stream")
            end = state.read(reply.lines)
        except TooLarge as exc:
            return Feed("unavailable", f"sent more than this client reads ({exc})")
        except (OSError, ValueError) as exc:  # includes a read timeout: the feed stalled
            return Feed("unavailable", f"stalled ({type(exc).__name__}: no `ready` in time)")
        finally:
            reply.close()
        if end == "malformed":  # INV read-your-writes: a batch not understood may hold a note
            return Feed("unavailable", "sent a change batch this client cannot read")
        if end == "ready":
            return Feed("ready", changes=state.changes, cursor=state.cursor)
        if end == "reset":
            return Feed("reset", f"reset ({state.reason or 'the resume point is older than the server keeps'})")
        if state.cursor is not None:
            kind, value = "cursor", state.cursor
    return Feed("unavailable", f"ended {MAX_FEED_SESSIONS} times before replaying everything")


class _FeedState:
    """The changes read so far and the cursor that resumes after them."""

    def __init__(self, cursor: str | None) -> None:
        self.changes: list[dict] = []
        self.cursor = cursor
        self.reason: str | None = None

    def read(self, lines: Any) -> str:  # Reply.lines, which a stream's reply always has
        """Apply a stream's events until ready/reset/reconnect ("ready", "reset", "ended"), or
        "malformed" at the first event of those kinds this client cannot read whole."""
        for name, data in _sse(lines):
            if name not in ("changes", "ready", "reconnect", "reset"):
                continue  # an event this client does not know is skipped, as huggingface_hub does
            try:
                payload = json.loads(data) if data.strip() else {}
            except ValueError:
                return "malformed"
            if not isinstance(payload, dict):
                return "malformed"
            cursor = payload.get("cursor")
            if name == "changes":
                batch = payload.get("changes")
                if not isinstance(batch, list) or not isinstance(cursor, str) or not all(map(_is_change, batch)):
                    return "malformed"
                self.changes.extend(batch)
                self.cursor = cursor
            elif name in ("ready", "reconnect"):
                if isinstance(cursor, str):  # absent: the feed has seen no change yet; keep ours
                    self.cursor = cursor
                elif cursor is not None:
                    return "malformed"
                return "ready" if name == "ready" else "ended"
            else:
                reason = payload.get("reason")
                self.reason = reason if isinstance(reason, str) else None
                return "reset"
        return "ended"


def _is_change(item: object) -> bool:
    return isinstance(item, dict) and item.get("op") in ("add", "update", "delete") \
        and isinstance(item.get("path"), str)


def _sse(lines: Iterable[bytes]) -> Iterator[tuple[str, str]]:
    """(event, data) pairs from server-sent-event lines; comments (keep-alives) are skipped."""
    name, data = "message", []  # type: tuple[str, list[str]]
    for raw in lines:
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if not line:
            if data:
                yield name, "\n".join(data)
            name, data = "message", []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            name = value
        elif field == "data":
            data.append(value)


def iso_ms(text: object) -> int | None:
    """Epoch milliseconds of a Hub timestamp (`2026-12-01T09:00:00.123Z`), None if it is not one."""
    from datetime import UTC, datetime, timedelta, timezone

    m = _ISO.match(text) if isinstance(text, str) else None
    if m is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    frac = (m.group(7) or "0")[:3].ljust(3, "0")
    zone = m.group(8) or "Z"
    tz = UTC
    if zone != "Z":
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        tz = timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))
    try:
        moment = datetime(year, month, day, hour, minute, second, tzinfo=tz)
    except ValueError:
        return None
    return int(moment.timestamp()) * 1000 + int(frac)


def _http_date(value: str | None) -> float | None:
    if not value:
        return None
    from email.utils import mktime_tz, parsedate_tz

    parsed = parsedate_tz(value)
    return float(mktime_tz(parsed)) if parsed else None
