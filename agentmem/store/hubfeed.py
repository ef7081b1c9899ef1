"""Asking the Hub cheaply what changed in a bucket: its info (`updatedAt`) and its events feed.

A search asks this on every turn, so the common case does not import
huggingface_hub (about 190 ms): requests go out through the standard library's
http.client, within the invocation's network budget. Where that client cannot
do what huggingface_hub does (a proxy set in the environment, OIDC or
refreshable OAuth logins, no token found where the light path looks, a TLS
failure with the system's certificates, a 401 a refreshed token might cure), the
same requests go through huggingface_hub's own HTTP session instead.

The feed (`GET /api/buckets/{id}/events?cursor=...` or `?since=...`, server-sent
events): `changes` batches (each with the cursor that resumes strictly after it),
then `ready` once the replay is done; this client stops reading there. `reset`
means the resume point is older than the server keeps; `reconnect` ends a
stream early. Facts: /work/shared/reference/hf-buckets.md, last section.
"""

from __future__ import annotations

import json
import os
import re

from agentmem import errors
from agentmem.store import network

DEFAULT_ENDPOINT = "https://huggingface.co"
# Seconds without a byte from the feed before it counts as stalled (the replay streams at
# once; the server pings only every ~30 s once live, and `ready` comes before that), so a
# stalled feed falls back to a listing inside the budget (2026-12-01).
FEED_IDLE_SECONDS = 5.0
# Seconds the feed may take to reach `ready`, at most half the budget left: the rest is for
# the listing a stalled feed falls back to (2026-12-01).
FEED_MAX_SECONDS = 8.0
MAX_FEED_SESSIONS = 3  # streams ended by `reconnect` before `ready`, then give up and list
_PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
_ISO = re.compile(r"^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:?\d\d)?$")
_HEAVY = object()  # "let huggingface_hub resolve the token"


class Reply:
    """One HTTP answer: status, lower-cased headers, and the body (or a line iterator for a stream)."""

    def __init__(self, status: int, headers: dict[str, str], body: bytes = b"", lines=None, close=None):
        self.status, self.headers, self.body, self.lines = status, headers, body, lines
        self._close = close

    def close(self) -> None:
        if self._close is not None:
            self._close()


# -- the two ways of sending a request -------------------------------------------------------------


class LightHttp:
    """http.client, no retries (like huggingface_hub's bucket_info), each wait bounded by the budget."""

    def __init__(self, endpoint: str, token: str, budget: network.Budget):
        from urllib.parse import urlsplit

        self.url = urlsplit(endpoint)
        self.token, self.budget = token, budget

    def _connection(self, timeout: float):
        import http.client

        host, port = self.url.hostname or "", self.url.port
        if self.url.scheme == "https":
            import ssl

            return http.client.HTTPSConnection(host, port, timeout=timeout, context=ssl.create_default_context())
        return http.client.HTTPConnection(host, port, timeout=timeout)

    def request(self, path: str, accept: str = "application/json", stream: bool = False) -> Reply:
        from agentmem.version import __version__

        self.budget.start()
        left = self.budget.remaining()
        if left <= 0:
            raise errors.BudgetSpent()
        conn = self._connection(min(left, FEED_IDLE_SECONDS) if stream else left)
        headers = {"Authorization": f"Bearer {self.token}", "Accept": accept,
                   "User-Agent": f"agentmem/{__version__}"}
        try:
            conn.request("GET", (self.url.path.rstrip("/") or "") + path, headers=headers)
            resp = conn.getresponse()
        except Exception:
            conn.close()
            raise
        head = {k.lower(): v for k, v in resp.getheaders()}
        if not stream:
            try:
                return Reply(resp.status, head, resp.read())
            finally:
                conn.close()

        def lines():
            while True:
                if conn.sock is not None:
                    conn.sock.settimeout(max(0.01, min(FEED_IDLE_SECONDS, self.budget.remaining())))
                line = resp.readline()
                if not line:
                    return
                yield line

        return Reply(resp.status, head, lines=lines(), close=conn.close)


class HubHttp:
    """huggingface_hub's HTTP session through the budget transport (network.install)."""

    def __init__(self, endpoint: str, budget: network.Budget):
        self.endpoint, self.budget = endpoint.rstrip("/"), budget

    def request(self, path: str, accept: str = "application/json", stream: bool = False) -> Reply:
        from huggingface_hub.utils import build_hf_headers, get_session

        network.install()
        headers = {**build_hf_headers(), "accept": accept}
        with network.spending(self.budget):
            session = get_session()
            if not stream:
                resp = session.get(self.endpoint + path, headers=headers)
                return Reply(resp.status_code, {k.lower(): v for k, v in resp.headers.items()}, resp.content)
            ctx = session.stream("GET", self.endpoint + path, headers=headers)
            resp = ctx.__enter__()

        def lines():
            with network.spending(self.budget):
                for line in resp.iter_lines():
                    yield line.encode() + b"\n"

        return Reply(resp.status_code, {k.lower(): v for k, v in resp.headers.items()}, lines=lines(),
                     close=lambda: ctx.__exit__(None, None, None))


class Client:
    """Sends a request the light way when it can, through huggingface_hub when it must."""

    def __init__(self, budget: network.Budget, label: str):
        self.budget, self.label = budget, label
        self.endpoint = (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")
        token = _light_token()
        if token is None:
            raise errors.NotAuthenticated("no Hugging Face credentials on this machine", hint=network.LOGIN_HINT)
        self._light = LightHttp(self.endpoint, token, budget) if isinstance(token, str) else None
        self._heavy: HubHttp | None = None

    def request(self, path: str, *, accept: str = "application/json", stream: bool = False) -> Reply:
        if _offline_mode():
            raise errors.Offline(f"{self.label}: HF_HUB_OFFLINE is set, so the Hub is not asked")
        if self._light is not None:
            try:
                reply = self._light.request(path, accept, stream)
            except errors.BudgetSpent:
                raise errors.Offline(f"{self.label}: the network time budget ran out before the Hub answered") from None
            except (OSError, http_errors()) as exc:
                if not _tls_failure(exc):
                    raise self._transport_error(exc) from None
                self._light = None  # the system's certificates are not what huggingface_hub trusts
            else:
                if reply.status != 401:
                    return reply
                reply.close()
                self._light = None  # let huggingface_hub find (or refresh) the token
        return self._heavy_request(path, accept, stream)

    def _heavy_request(self, path: str, accept: str, stream: bool) -> Reply:
        from agentmem.store.bucket import hub_token

        hub_token()  # NotAuthenticated with login instructions when there is none at all
        if self._heavy is None:
            self._heavy = HubHttp(self.endpoint, self.budget)
        try:
            return self._heavy.request(path, accept, stream)
        except Exception as exc:  # noqa: BLE001 - classified like every Hub call
            raise network.classify(exc, self.label.removeprefix("hf://buckets/")) from None

    def _transport_error(self, exc: BaseException) -> errors.AgentmemError:
        import socket

        if isinstance(exc, (TimeoutError, socket.timeout)):
            return errors.Offline(f"{self.label}: the Hub did not answer within the network time budget")
        if isinstance(exc, (ConnectionRefusedError, socket.gaierror)):
            return errors.Offline(f"cannot reach the Hugging Face Hub for {self.label}")
        return errors.Offline(f"lost the connection to the Hugging Face Hub for {self.label}")


def http_errors() -> type[Exception]:
    import http.client

    return http.client.HTTPException


def _offline_mode() -> bool:
    value = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return value.strip().upper() in ("1", "ON", "YES", "TRUE")


def _tls_failure(exc: BaseException) -> bool:
    return type(exc).__module__ == "ssl" or "SSL" in type(exc).__name__


def _light_token():
    """The token huggingface_hub would send, when finding it needs no huggingface_hub; else _HEAVY."""
    if os.environ.get("HF_OIDC_RESOURCE") or os.environ.get("HUGGINGFACE_CO_STAGING"):
        return _HEAVY
    if any(os.environ.get(v) for v in _PROXY_VARS):
        return _HEAVY  # httpx honours them; http.client would not
    token = _clean(os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN"))
    if token:
        return token
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    home = os.path.expandvars(os.path.expanduser(os.environ.get("HF_HOME") or os.path.join(cache, "huggingface")))
    path = os.path.expandvars(os.path.expanduser(os.environ.get("HF_TOKEN_PATH") or os.path.join(home, "token")))
    try:
        with open(path, encoding="utf-8") as fh:
            token = _clean(fh.read())
    except FileNotFoundError:
        return None  # no login at all: NotAuthenticated, without importing huggingface_hub
    except (OSError, UnicodeDecodeError):
        return _HEAVY
    try:
        with open(os.path.join(os.path.dirname(path), "stored_tokens"), encoding="utf-8") as fh:
            if "refresh_token" in fh.read():
                return _HEAVY  # an OAuth login huggingface_hub may need to refresh
    except (OSError, UnicodeDecodeError):
        pass
    return token or _HEAVY


def _clean(token: str | None) -> str | None:
    return (token or "").replace("\r", "").replace("\n", "").strip() or None


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
    import time
    from urllib.parse import quote

    state = _FeedState(resume[1] if resume[0] == "cursor" else None)
    kind, value = resume
    deadline = time.monotonic() + min(FEED_MAX_SECONDS, max(0.0, client.budget.remaining()) / 2)
    for _ in range(MAX_FEED_SESSIONS):
        path = f"/api/buckets/{bucket_id}/events?{kind}={quote(value, safe='')}"
        try:
            reply = client.request(path, accept="text/event-stream", stream=True)
        except errors.Offline as exc:
            return Feed("unavailable", f"did not answer ({exc.one_line()})")
        try:
            if reply.status >= 400:
                what = "refused the resume point" if reply.status == 400 else "is not served here"
                return Feed("unavailable", f"{what} (HTTP {reply.status})")
            if not (reply.headers.get("content-type") or "").startswith("text/event-stream"):
                return Feed("unavailable", "answered something other than an event stream")
            end = state.read(_until(reply.lines, deadline))
        except (OSError, ValueError) as exc:  # includes a read timeout: the feed stalled
            return Feed("unavailable", f"stalled ({type(exc).__name__})")
        finally:
            reply.close()
        if end == "ready":
            return Feed("ready", changes=state.changes, cursor=state.cursor)
        if end == "reset":
            return Feed("reset", f"reset ({state.reason or 'the resume point is older than the server keeps'})")
        if state.cursor is not None:
            kind, value = "cursor", state.cursor
    return Feed("unavailable", f"ended {MAX_FEED_SESSIONS} times before replaying everything")


def _until(lines, deadline: float):
    """The lines of a stream, until `deadline` (monotonic): keep-alives alone never reach `ready`."""
    import time

    for line in lines:
        if time.monotonic() > deadline:
            raise TimeoutError("the events feed did not reach `ready` in time")
        yield line


class _FeedState:
    """The changes read so far and the cursor that resumes after them."""

    def __init__(self, cursor: str | None):
        self.changes: list[dict] = []
        self.cursor = cursor
        self.reason: str | None = None

    def read(self, lines) -> str:
        """Apply a stream's events until ready/reset/reconnect ("ready", "reset", "ended")."""
        for name, data in _sse(lines):
            try:
                payload = json.loads(data) if data.strip() else {}
            except ValueError:
                continue  # an event this client does not understand is skipped, as huggingface_hub does
            if not isinstance(payload, dict):
                continue
            cursor = payload.get("cursor")
            if name == "changes":
                batch = payload.get("changes")
                if not isinstance(batch, list) or not isinstance(cursor, str):
                    continue
                self.changes.extend(item for item in batch if isinstance(item, dict)
                                    and item.get("op") in ("add", "update", "delete")
                                    and isinstance(item.get("path"), str))
                self.cursor = cursor
            elif name in ("ready", "reconnect"):
                if isinstance(cursor, str):  # absent: the feed has seen no change yet; keep ours
                    self.cursor = cursor
                return "ready" if name == "ready" else "ended"
            elif name == "reset":
                reason = payload.get("reason")
                self.reason = reason if isinstance(reason, str) else None
                return "reset"
        return "ended"


def _sse(lines):
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


def iso_ms(text) -> int | None:
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
