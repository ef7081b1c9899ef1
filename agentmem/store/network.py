"""The bucket store's network budget and the classification of Hub failures.

INV bounded-network: one helper invocation spends at most one network budget
(`config.network_timeout`, default 20 s) talking to the Hub, across huggingface_hub's
HTTP retries and hf_xet's own. The budget is enforced in three places:

- every huggingface_hub request goes through `_BudgetTransport`, which caps the
  request's timeout at the time left, refuses to start once the budget is spent,
  and stops http_backoff's retry loop (by raising an exception it does not retry)
  when too little time is left for another backoff sleep;
- an unreachable Hub (connection refused, DNS failure) is never retried: an
  offline save must return at once as pending;
- hf_xet's retry and timeout settings are derived from the budget through its
  environment variables before its session starts (`configure_xet`), and the
  bucket store waits for an hf_xet transfer only as long as the budget lasts
  (its token requests bypass our transport; see `bucket._within`).

The budget is per thread (`spending`), so a transfer abandoned at the deadline
cannot change what a later call is charged to.

The budget and `call_within` (store/budget.py) also bound the folder store (a hung network drive);
this module imports nothing outside the standard library, and huggingface_hub
only inside the functions that install into it.
"""

from __future__ import annotations

import os
import sys
import threading
import time

from agentmem import errors
from agentmem.store.budget import Budget, call_within, resolve_timeout  # noqa: F401 - re-exported

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    import httpx2

# http_backoff sleeps up to 8 s between retries; it may start another sleep only
# while more than this is left, so the next attempt still fits (max_wait_time=8,
# checked with huggingface_hub 2.4.0, 2026-11-30).
_RETRY_HEADROOM = 10.0
_RETRY_STATUSES = (408, 429, 500, 502, 503, 504)
# Bytes. The most one answer read through huggingface_hub may carry: a tree page or a paths-info
# answer of 1000 entries is a small fraction of this (docs/benchmarks.md), and the events feed read
# this way is bounded by its own 64 MiB; past this the answer is refused rather than held in memory.
MAX_RESPONSE_BYTES = 64 * 1024 * 1024

# agentmem's calls send no usage telemetry unless the user asked for it: with telemetry on,
# huggingface_hub 2.4.0 fetches /api/agent-harnesses once a day to build its user agent (one
# more request, up to 3 s, on some save) and caches it under HF_HOME. Must precede its import.
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
# huggingface_hub 2.4.0 draws hf_xet uploads' progress bars (tqdm, XetUploadProgressReporter: terminal
# codes on every save; docs/benchmarks.md) on stderr whether or not stderr is a terminal, and agents read
# stderr. Off unless stderr is a terminal or the user chose. Read at its import; and
# set again through its API in `install`, in case it was imported first.
_PROGRESS_VAR = "HF_HUB_DISABLE_PROGRESS_BARS"


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (OSError, ValueError):  # a closed or detached stderr
        return False


if not _stderr_is_terminal():
    os.environ.setdefault(_PROGRESS_VAR, "1")

LOGIN_HINT = "log in on this machine with `hf auth login`, or set HF_TOKEN in the environment"


def hub_token() -> str:
    """The local HF credential, or NotAuthenticated with login instructions (never a request for it)."""
    from huggingface_hub import get_token

    token = get_token()
    if not token:
        raise errors.NotAuthenticated("no Hugging Face credentials on this machine", hint=LOGIN_HINT)
    return token


# The budget charged by requests made on this thread (httpx sends on the calling thread).
_local = threading.local()


def _active() -> Budget | None:
    return getattr(_local, "budget", None)


class spending:  # noqa: N801 - used like the function it replaced: `with spending(budget):`
    """Charge huggingface_hub requests made on this thread to `budget`, for the duration.

    A class rather than a contextlib generator: the folder store's per-search path
    imports this module, and contextlib's import is a measurable share of that path
    (docs/benchmarks.md).
    """

    def __init__(self, budget: Budget):
        self.budget = budget
        self.previous: Budget | None = None

    def __enter__(self) -> Budget:
        self.budget.start()
        self.budget.check()
        self.previous, _local.budget = _active(), self.budget
        return self.budget

    def __exit__(self, *exc: object) -> None:
        _local.budget = self.previous


def _make_transport() -> httpx2.BaseTransport:
    import httpx2

    class _BudgetTransport(httpx2.BaseTransport):
        def __init__(self) -> None:
            self._inner = httpx2.HTTPTransport()

        def handle_request(self, request: httpx2.Request) -> httpx2.Response:
            budget = _active()
            if budget is None:
                return self._inner.handle_request(request)
            left = budget.remaining()
            if left <= 0:
                raise errors.BudgetSpent()
            request.extensions["timeout"] = {"connect": left, "read": left, "write": left, "pool": left}
            try:
                response = self._inner.handle_request(request)
            except httpx2.ConnectError as exc:
                raise errors.Unreachable(str(exc) or type(exc).__name__) from exc
            except httpx2.TransportError as exc:
                if budget.remaining() < _RETRY_HEADROOM:
                    raise errors.GaveUp(f"connection failed: {type(exc).__name__}") from exc
                raise
            if response.status_code in _RETRY_STATUSES and budget.remaining() < _RETRY_HEADROOM:
                response.close()
                raise errors.GaveUp(f"the Hub answered HTTP {response.status_code}", response.status_code)
            response.stream = _BoundedStream(response.stream, time.monotonic() + left)
            return response

        def close(self) -> None:
            self._inner.close()

    class _BoundedStream(httpx2.SyncByteStream):
        """An answer's body, read until the budget's end and up to MAX_RESPONSE_BYTES: each read
        waits at most the request's timeout (the budget left), and no read starts after the end."""

        def __init__(self, inner: Any, deadline: float) -> None:  # a sync transport's SyncByteStream
            self._inner, self._deadline = inner, deadline

        def __iter__(self) -> Iterator[bytes]:
            received = 0
            for chunk in self._inner:
                received += len(chunk)
                if received > MAX_RESPONSE_BYTES:
                    raise errors.RemoteError(f"the Hub's answer is larger than {MAX_RESPONSE_BYTES} bytes")
                if time.monotonic() > self._deadline:
                    raise errors.BudgetSpent()
                yield chunk

        def close(self) -> None:
            self._inner.close()

    return _BudgetTransport()


_installed = False


def install() -> None:
    """Route huggingface_hub's shared HTTP client through the budget (idempotent)."""
    global _installed
    if _installed:
        return
    import httpx2
    from huggingface_hub import set_client_factory
    from huggingface_hub.utils import disable_progress_bars
    from huggingface_hub.utils._http import hf_request_event_hook

    if os.environ.get(_PROGRESS_VAR) == "1":
        disable_progress_bars()  # the same choice, made through the API (see _PROGRESS_VAR)

    def factory() -> httpx2.Client:
        return httpx2.Client(
            transport=_make_transport(),
            event_hooks={"request": [hf_request_event_hook]},
            follow_redirects=True,
            timeout=None,
        )

    set_client_factory(factory)
    _installed = True


def configure_xet(seconds: float) -> None:
    """Bound hf_xet's retries and timeouts by the budget. Only effective before its session starts.

    Values an operator already set in the environment are kept.
    """
    whole = max(1, int(seconds))
    os.environ.setdefault("HF_XET_CLIENT_RETRY_MAX_ATTEMPTS", "2")
    os.environ.setdefault("HF_XET_CLIENT_RETRY_BASE_DELAY", "300ms")
    os.environ.setdefault("HF_XET_CLIENT_RETRY_MAX_DURATION", f"{max(1, whole // 2)}s")
    os.environ.setdefault("HF_XET_CLIENT_CONNECT_TIMEOUT", f"{min(whole, 10)}s")
    os.environ.setdefault("HF_XET_CLIENT_READ_TIMEOUT", f"{whole}s")


def classify(exc: BaseException, bucket_id: str | None, *, what: str | None = None) -> errors.AgentmemError:
    """Translate a Hub client failure into the agentmem error it is. Never includes a token. `what` names
    a request that concerns no bucket (the account check) instead of `hf://buckets/<bucket_id>`."""
    if isinstance(exc, errors.AgentmemError):
        return exc
    from huggingface_hub.errors import BucketNotFoundError, HfHubHTTPError, OfflineModeIsEnabled

    label = what or f"hf://buckets/{bucket_id}"
    if isinstance(exc, errors.BudgetSpent):
        return errors.Offline(f"{label}: the network time budget ran out before the Hub answered")
    if isinstance(exc, (errors.Unreachable, OfflineModeIsEnabled)):
        return errors.Offline(f"cannot reach the Hugging Face Hub for {label}")
    if isinstance(exc, errors.GaveUp):
        if exc.status is None:
            return errors.Offline(f"{label}: {exc} and the network time budget is spent")
        return errors.RemoteError(f"{label}: {exc} and the network time budget is spent")
    if isinstance(exc, BucketNotFoundError):
        return errors.NotFound(
            f"bucket {bucket_id} not found",
            hint="check the ID; a private bucket of another account also looks missing",
        )
    if isinstance(exc, HfHubHTTPError):
        status = exc.response.status_code if exc.response is not None else None
        if status == 401:
            return errors.NotAuthenticated(
                f"the Hugging Face Hub rejected this machine's credentials for {label}", hint=LOGIN_HINT
            )
        if status == 403:
            return errors.NoAccess(
                f"this account may not do that in {label}",
                hint="use a token with write access to the bucket, or ask its owner for access",
            )
        if status == 404:
            return errors.NotFound(f"{label}: not found")
        return errors.RemoteError(f"{label}: the Hub answered HTTP {status}")
    try:
        import httpx2

        if isinstance(exc, httpx2.TransportError):
            return errors.Offline(f"lost the connection to the Hugging Face Hub for {label}")
    except ImportError:  # pragma: no cover - httpx2 ships with huggingface_hub
        pass
    if isinstance(exc, (ValueError, KeyError, TypeError)):
        return errors.RemoteError(f"{label}: malformed reply from the Hub ({type(exc).__name__})")
    return errors.RemoteError(f"{label}: {type(exc).__name__}")
