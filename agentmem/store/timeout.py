"""How long one invocation may spend on the network: the one rule, where store/ and config both read it.

`AGENTMEM_NETWORK_TIMEOUT` wins, then the configured `[network] timeout` (config.py passes it), then
the default. Here rather than in config.py so that the stores, which enforce the budget, never import
config.
"""

from __future__ import annotations

import os
import time

from agentmem.errors import InvalidInput

# Seconds. A save is a few Hub requests plus one Xet transfer (docs/benchmarks.md),
# a few seconds on a slow link; 20 s leaves room for two backoff retries
# of a 5xx while an offline save still returns well inside an agent's turn.
DEFAULT_NETWORK_TIMEOUT = 20.0
ENV_NETWORK_TIMEOUT = "AGENTMEM_NETWORK_TIMEOUT"  # overrides [network] timeout
MIN_NETWORK_TIMEOUT = 0.1  # seconds: below this not even a loopback request completes


def network_timeout(configured: float | None = None) -> float:
    """The network budget of one invocation, in seconds: the one rule for every caller.

    `AGENTMEM_NETWORK_TIMEOUT` wins, then `configured` (config.toml's `[network] timeout`),
    then the default; the result is at least MIN_NETWORK_TIMEOUT.
    """
    raw = os.environ.get(ENV_NETWORK_TIMEOUT)
    if raw:
        try:
            value = float(raw)
        except ValueError:
            raise InvalidInput(f"{ENV_NETWORK_TIMEOUT} must be a number of seconds, not {raw!r}") from None
    else:
        value = DEFAULT_NETWORK_TIMEOUT if configured is None else float(configured)
    return max(MIN_NETWORK_TIMEOUT, value)


class Deadline:
    """One invocation's network budget kept across several stores it opens (each store object charges its
    own `network.Budget`): `left()` is what remains for the next one. INV bounded-network."""

    __slots__ = ("end",)

    def __init__(self, seconds: float | None = None):
        budget = network_timeout() if seconds is None else max(MIN_NETWORK_TIMEOUT, float(seconds))
        self.end = time.monotonic() + budget

    def left(self) -> float:
        """Seconds left; past the end, MIN_NETWORK_TIMEOUT (the least a store accepts), so a step that
        must still be tried fails fast."""
        return max(MIN_NETWORK_TIMEOUT, self.end - time.monotonic())
