"""Sending a request to the Hub: the light way (http.client) when it can, through huggingface_hub when it must.

A search asks the Hub on every turn, so the common case does not import
huggingface_hub (about 190 ms): requests go out through the standard library's
http.client, within the invocation's network budget. Where that client cannot
do what huggingface_hub does (a proxy set in the environment, OIDC or
refreshable OAuth logins, no token found where the light path looks, a TLS
failure with the system's certificates, a 401 a refreshed token might cure), the
same requests go through huggingface_hub's own HTTP session instead.

INV bounded-network: either way every answer is read bounded in bytes and in
time: each read waits at most until an absolute deadline (so an answer that
trickles a byte at a time ends there, inside a line as between lines), and an
answer, or a line of a stream, longer than its limit is refused (TooLarge).
"""

from __future__ import annotations

import io
import os
import time

from agentmem import errors
from agentmem.store import network

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    import http.client
    import socket
    from collections.abc import Callable, Iterable, Iterator

    from _typeshed import ReadableBuffer, WriteableBuffer

DEFAULT_ENDPOINT = "https://huggingface.co"
# Seconds without a byte from a stream (the events feed) before it counts as stalled (the replay
# streams at once; the server's pings once live are far apart, and `ready` comes before them), so
# a stalled feed falls back to a listing inside the budget (docs/benchmarks.md).
FEED_IDLE_SECONDS = 5.0
# Bytes. The most one answer may carry, so a misbehaving Hub (or anything answering on its port)
# cannot grow memory without bound. Bucket info is a few hundred bytes. A feed line is one event's
# data: a `changes` batch of about 250 bytes a change, so 4 MiB holds a batch of 16k changes; the
# whole replay is bounded by 64 MiB (about 250k changes). Past either, the feed counts as unusable
# and the refresh lists instead: an endless line once grew a search's memory without bound
# (docs/benchmarks.md, "A misbehaving Hub").
MAX_INFO_BYTES = 1024 * 1024
MAX_LINE_BYTES = 4 * 1024 * 1024
MAX_FEED_BYTES = 64 * 1024 * 1024
_PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
_HEAVY = object()  # "let huggingface_hub resolve the token"


class TooLarge(ValueError):
    """An answer, or one line of it, longer than this client reads."""


class Reply:
    """One HTTP answer: status, lower-cased headers, and the body (or a line iterator for a stream)."""

    def __init__(self, status: int, headers: dict[str, str], body: bytes = b"",
                 lines: Iterator[bytes] | None = None, close: Callable[[], object] | None = None) -> None:
        self.status, self.headers, self.body, self.lines = status, headers, body, lines
        self._close = close

    def close(self) -> None:
        if self._close is not None:
            self._close()


# -- the two ways of sending a request -------------------------------------------------------------


class LightHttp:
    """http.client, no retries (like huggingface_hub's bucket_info), each wait bounded by the budget."""

    def __init__(self, endpoint: str, token: str, budget: network.Budget) -> None:
        from urllib.parse import urlsplit

        self.url = urlsplit(endpoint)
        self.token, self.budget = token, budget

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        import http.client

        host, port = self.url.hostname or "", self.url.port
        if self.url.scheme == "https":
            import ssl

            return http.client.HTTPSConnection(host, port, timeout=timeout, context=ssl.create_default_context())
        return http.client.HTTPConnection(host, port, timeout=timeout)

    def request(self, path: str, accept: str = "application/json", stream: bool = False,
                deadline: float | None = None) -> Reply:
        """One GET. Every read waits at most until `deadline` (monotonic; default: the budget's end),
        so a reply that trickles a byte at a time ends there too, and carries at most its byte limit."""
        from agentmem.version import __version__

        self.budget.start()
        left = self.budget.remaining()
        if left <= 0:
            raise errors.BudgetSpent()
        end = time.monotonic() + left if deadline is None else min(deadline, time.monotonic() + left)
        idle = FEED_IDLE_SECONDS if stream else left
        conn = self._connection(max(0.01, min(left, idle)))
        headers = {"Authorization": f"Bearer {self.token}", "Accept": accept,
                   "User-Agent": f"agentmem/{__version__}"}
        bounded = None
        try:
            conn.connect()
            bounded = conn.sock = _BoundedSocket(conn.sock, end, idle, MAX_FEED_BYTES if stream else MAX_INFO_BYTES)
            conn.request("GET", (self.url.path.rstrip("/") or "") + path, headers=headers)
            resp = conn.getresponse()
            head = {k.lower(): v for k, v in resp.getheaders()}
            body = b"" if stream else resp.read()
        except BaseException:
            conn.close()
            if bounded is not None:
                bounded.sock.close()  # a response cut short may still hold it
            raise
        if not stream:
            conn.close()
            return Reply(resp.status, head, body)

        def lines() -> Iterator[bytes]:
            while True:
                line = resp.readline(MAX_LINE_BYTES + 1)
                if not line:
                    return
                if len(line) > MAX_LINE_BYTES:
                    raise TooLarge(f"a line of the events feed is longer than {MAX_LINE_BYTES} bytes")
                yield line

        def close() -> None:
            resp.close()  # with `Connection: close` the response holds the socket, not the connection
            conn.close()

        return Reply(resp.status, head, lines=lines(), close=close)


class _BoundedSocket:
    """A connected socket whose reads end at an absolute deadline and stop at a byte limit.

    Each receive waits at most until `deadline` (and `idle` seconds), so the deadline holds
    inside a line, not only between lines; http.client reads through `makefile`.
    """

    def __init__(self, sock: socket.socket, deadline: float, idle: float, limit: int) -> None:
        self.sock, self.deadline, self.idle, self.limit = sock, deadline, idle, limit
        self.received = 0
        self._files, self._closing = 0, False  # as a socket's makefile: closed once its files are

    def makefile(self, mode: str = "rb", *args: object, **kwargs: object) -> io.BufferedReader:
        self._files += 1
        return io.BufferedReader(_BoundedReader(self))

    def file_closed(self) -> None:
        self._files -= 1
        if self._closing and self._files <= 0:
            self.sock.close()

    def recv_into(self, buffer: WriteableBuffer) -> int:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the Hub's answer did not arrive in time")
        self.sock.settimeout(max(0.01, min(left, self.idle)))
        count = self.sock.recv_into(buffer)
        self.received += count
        if self.received > self.limit:
            raise TooLarge(f"the Hub's answer is larger than {self.limit} bytes")
        return count

    def sendall(self, data: ReadableBuffer) -> None:
        self.sock.sendall(data)

    def settimeout(self, value: float | None) -> None:
        self.sock.settimeout(value)

    def close(self) -> None:
        self._closing = True
        if self._files <= 0:
            self.sock.close()


class _BoundedReader(io.RawIOBase):
    def __init__(self, owner: _BoundedSocket) -> None:
        super().__init__()
        self.owner = owner

    def close(self) -> None:
        if not self.closed:
            self.owner.file_closed()
        super().close()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        return self.owner.recv_into(buffer)


class HubHttp:
    """huggingface_hub's HTTP session through the budget transport (network.install), read as bounded
    as the light way: at most the byte limit, and no read after `deadline`."""

    def __init__(self, endpoint: str, budget: network.Budget) -> None:
        self.endpoint, self.budget = endpoint.rstrip("/"), budget

    def request(self, path: str, accept: str = "application/json", stream: bool = False,
                deadline: float | None = None) -> Reply:
        from huggingface_hub.utils import build_hf_headers, get_session

        network.install()
        headers = {**build_hf_headers(), "accept": accept}
        with network.spending(self.budget):
            end = time.monotonic() + self.budget.remaining()
            end = end if deadline is None else min(end, deadline)
            ctx = get_session().stream("GET", self.endpoint + path, headers=headers)
            resp = ctx.__enter__()
        head = {k.lower(): v for k, v in resp.headers.items()}
        chunks = _bounded(resp.iter_bytes(), end, MAX_FEED_BYTES if stream else MAX_INFO_BYTES)
        if stream:
            return Reply(resp.status_code, head, lines=_split_lines(chunks),
                         close=lambda: ctx.__exit__(None, None, None))
        try:
            return Reply(resp.status_code, head, b"".join(chunks))
        finally:
            ctx.__exit__(None, None, None)


def _bounded(chunks: Iterable[bytes], deadline: float, limit: int) -> Iterator[bytes]:
    """`chunks` until `deadline` (monotonic) and at most `limit` bytes, else TimeoutError / TooLarge."""
    received = 0
    for chunk in chunks:
        received += len(chunk)
        if received > limit:
            raise TooLarge(f"the Hub's answer is larger than {limit} bytes")
        if time.monotonic() > deadline:
            raise TimeoutError("the Hub's answer did not arrive in time")
        yield chunk


def _split_lines(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The lines (each with its newline) of a byte stream, none longer than MAX_LINE_BYTES."""
    buf = bytearray()
    for chunk in chunks:
        scan = len(buf)
        buf += chunk
        while (cut := buf.find(b"\n", scan)) >= 0:
            yield bytes(buf[: cut + 1])
            del buf[: cut + 1]
            scan = 0
        if len(buf) > MAX_LINE_BYTES:
            raise TooLarge(f"a line of the events feed is longer than {MAX_LINE_BYTES} bytes")
    if buf:
        yield bytes(buf)


class Client:
    """Sends a request the light way when it can, through huggingface_hub when it must."""

    def __init__(self, budget: network.Budget, label: str) -> None:
        self.budget, self.label = budget, label
        self.endpoint = (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")
        token = _light_token()
        if token is None:
            raise errors.NotAuthenticated("no Hugging Face credentials on this machine", hint=network.LOGIN_HINT)
        self._light = LightHttp(self.endpoint, token, budget) if isinstance(token, str) else None
        self._heavy: HubHttp | None = None

    def request(self, path: str, *, accept: str = "application/json", stream: bool = False,
                deadline: float | None = None) -> Reply:
        """GET `path`; `deadline` (monotonic) ends every read of the answer, default the budget's end."""
        if _offline_mode():
            raise errors.Offline(f"{self.label}: HF_HUB_OFFLINE is set, so the Hub is not asked")
        if self._light is not None:
            try:
                reply = self._light.request(path, accept, stream, deadline)
            except TooLarge as exc:
                raise errors.RemoteError(f"{self.label}: {exc}") from None
            except errors.BudgetSpent:
                raise self._no_answer() from None
            except (OSError, http_errors()) as exc:
                if not _tls_failure(exc):
                    raise self._transport_error(exc) from None
                self._light = None  # the system's certificates are not what huggingface_hub trusts
            else:
                if reply.status != 401:
                    return reply
                reply.close()
                self._light = None  # let huggingface_hub find (or refresh) the token
        return self._heavy_request(path, accept, stream, deadline)

    def _heavy_request(self, path: str, accept: str, stream: bool, deadline: float | None) -> Reply:
        network.hub_token()  # NotAuthenticated with login instructions when there is none at all
        if self._heavy is None:
            self._heavy = HubHttp(self.endpoint, self.budget)
        try:
            return self._heavy.request(path, accept, stream, deadline)
        except TooLarge as exc:
            raise errors.RemoteError(f"{self.label}: {exc}") from None
        except TimeoutError:
            raise self._no_answer() from None
        except Exception as exc:  # noqa: BLE001 - classified like every Hub call
            if self.budget.remaining() <= 0:  # a timeout of huggingface_hub's session, at the budget's end
                raise self._no_answer() from None
            raise network.classify(exc, self.label.removeprefix("hf://buckets/")) from None

    def _no_answer(self) -> errors.NoAnswer:
        return errors.NoAnswer(f"{self.label}: the Hub did not answer within {self.budget.seconds:g} s")

    def _transport_error(self, exc: BaseException) -> errors.AgentmemError:
        import socket

        if isinstance(exc, (TimeoutError, socket.timeout)):
            return self._no_answer()
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


def _light_token() -> object:
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
