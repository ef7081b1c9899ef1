"""One invocation's time budget for a store, and running a call that may block within it.

INV bounded-network: see store/network.py, which charges the Hub's requests to a `Budget`. The folder
store bounds its reads on a possibly hung drive with the same `Budget` and `call_within`, and imports this
module alone: a search of a folder store needs nothing of the Hub's (network.py's environment settings,
its transport), so it does not import network.py (docs/benchmarks.md, "Per-turn commands at 100k").
"""

from __future__ import annotations

import threading
import time

from agentmem import errors

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def resolve_timeout(given: float | None = None) -> float:
    """The budget in seconds: the one given (the CLI passes `Config.network_timeout`), else
    the rule in store/timeout.py (AGENTMEM_NETWORK_TIMEOUT, else the default)."""
    from agentmem.store.timeout import MIN_NETWORK_TIMEOUT, network_timeout

    if given is None:
        return network_timeout()
    return max(MIN_NETWORK_TIMEOUT, float(given))


class Budget:
    """A network time budget. The clock starts at the first network use."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self._end: float | None = None

    def start(self) -> None:
        if self._end is None:
            self._end = time.monotonic() + self.seconds

    def remaining(self) -> float:
        return self.seconds if self._end is None else self._end - time.monotonic()

    def check(self) -> None:
        if self.remaining() <= 0:
            raise errors.BudgetSpent()


def call_within(budget: Budget, fn: Callable[..., Any], *args: Any) -> Any:
    """Run `fn(*args)` on a worker thread; raise BudgetSpent if it has not returned when the budget is.

    For calls that block in the kernel and cannot be given a timeout (a read on a hung
    network drive, an hf_xet transfer). A call left behind keeps its daemon thread; the
    caller must not use what it was working on again.
    """
    budget.start()
    budget.check()
    box: dict = {}

    def run() -> None:
        try:
            box["value"] = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            box["error"] = exc

    worker = threading.Thread(target=run, name="agentmem-bounded-call", daemon=True)
    worker.start()
    worker.join(max(0.0, budget.remaining()))
    if worker.is_alive():
        raise errors.BudgetSpent()
    if "error" in box:
        raise box["error"]
    return box.get("value")
