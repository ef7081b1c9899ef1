"""Searches hold off asking a store that just did not answer in time.

A search waits at most `[network] check_timeout` for the store to say what changed
(INV bounded-network). When the store was reached but did not answer by then (a Hub whose
process is stopped while its port stays open), that is remembered here, in
`cache/<store key>/no-answer.json`, and the searches of the next HOLD_SECONDS answer from
the cache at once, marked stale and saying why, instead of waiting again. Only searches
consult it: saves, retries, reads and the Stop hook keep their whole budget, a search with
`--refresh` asks anyway, and any refresh that reaches the store ends the hold.
"""

from __future__ import annotations

import json
import os
import time

from agentmem.fsutil import read_bytes, write_atomic
from agentmem.paths import NO_ANSWER_FILE, store_cache
from agentmem.store.base import StoreDescription

# Seconds. An agent's turns come every few seconds to a minute, so a Hub that hangs costs one
# turn in a minute its check deadline instead of every turn; a note saved elsewhere meanwhile is
# missed by searches for at most this long, and each of their answers says so (2026-12-01).
HOLD_SECONDS = 60.0


def _path(machine: str | os.PathLike, store: StoreDescription) -> str:
    return os.path.join(store_cache(machine, store.key), NO_ANSWER_FILE)


def held(machine: str | os.PathLike, store: StoreDescription) -> tuple[float, str] | None:
    """(when, what happened) if the store did not answer a search within the last HOLD_SECONDS."""
    try:
        data = json.loads(read_bytes(_path(machine, store), 4096))
    except (OSError, ValueError):
        return None
    at, reason = (data.get("at"), data.get("reason")) if isinstance(data, dict) else (None, None)
    if not isinstance(at, (int, float)) or not isinstance(reason, str) or not 0 <= time.time() - at < HOLD_SECONDS:
        return None
    return float(at), reason


def hold(machine: str | os.PathLike, store: StoreDescription, reason: str) -> None:
    """Remember that the store did not answer in time (best effort: unwritable, the next search waits)."""
    body = json.dumps({"at": time.time(), "reason": reason}) + "\n"
    try:
        write_atomic(_path(machine, store), body.encode(), durable=False)  # a lost hold costs one wait
    except OSError:
        pass


def release(machine: str | os.PathLike, store: StoreDescription) -> None:
    """The store answered: searches ask it again."""
    try:
        os.unlink(_path(machine, store))
    except OSError:
        pass


def words(at: float, reason: str) -> str:
    """Why a held search did not ask, for its `stale_reason` (the option named as the CLI spells it)."""
    from agentmem.errors import NextStep, Option

    waited = max(0, int(time.time() - at))
    left = max(1, int(HOLD_SECONDS - (time.time() - at)))
    return str(NextStep.of(f"the store did not answer a search in time {waited} s ago ({reason}), so searches "
                           f"answer from the cache without asking for {left} s more (a save, or a search with ",
                           Option("refresh"), ", still asks)"))
