"""The Hub user name of this machine's token, asked once and kept in the machine folder (`whoami.json`).

A note on a bucket store names its author by the Hub user name (issue X, item 5). Asking the Hub costs a
request, so the answer is kept, keyed by a fingerprint of the endpoint and the token (a SHA-256 prefix:
never the token itself), and a new login is asked again. Setup and doctor refresh it; a save asks only
when nothing is kept for the token it holds, within what is left of its own network budget; a rights
probe (store/rights.py) keeps the name its own whoami found. This is the one place the name is kept.

Standard library only (the light HTTP path of store/hubhttp.py); huggingface_hub is imported only for a
login the light path cannot read (OIDC, a refreshable OAuth token, a proxy).
"""

from __future__ import annotations

import os

from agentmem import errors
from agentmem.paths import whoami_path

MAX_KEPT = 8  # tokens remembered; a machine rarely changes login more often than this
MAX_FILE_BYTES = 64 * 1024


def fingerprint() -> str | None:
    """The endpoint and token this machine would send, as a SHA-256 prefix (None: no login at all)."""
    import hashlib

    from agentmem.store import hubhttp

    endpoint = (os.environ.get("HF_ENDPOINT") or hubhttp.DEFAULT_ENDPOINT).rstrip("/")
    token = hubhttp._light_token()
    if token is None:
        return None
    if not isinstance(token, str):
        try:
            from agentmem.store import network

            token = network.hub_token()
        except errors.AgentmemError:
            return None
    return hashlib.sha256(f"{endpoint}\n{token}".encode()).hexdigest()[:32]


def _kept(machine: str | os.PathLike) -> dict:
    import json

    from agentmem.fsutil import read_bytes

    try:
        data = json.loads(read_bytes(whoami_path(machine), MAX_FILE_BYTES))
    except (OSError, ValueError):
        return {}
    users = data.get("users") if isinstance(data, dict) else None
    return users if isinstance(users, dict) else {}


def cached_name(machine: str | os.PathLike, key: str | None = None) -> str | None:
    """The kept user name of the current token (or of fingerprint `key`), without asking the Hub."""
    key = key or fingerprint()
    if key is None:
        return None
    entry = _kept(machine).get(key)
    name = entry.get("name") if isinstance(entry, dict) else None
    return name if isinstance(name, str) and name else None


def remember(machine: str | os.PathLike, name: str, key: str | None = None) -> None:
    """Keep `name` as the current token's user name (derived data: a failed write is only forgotten)."""
    import json
    import time

    from agentmem.fsutil import write_atomic

    key = key or fingerprint()
    if key is None or not isinstance(name, str) or not name:
        return
    users = {k: v for k, v in _kept(machine).items() if k != key and isinstance(v, dict)}
    users[key] = {"name": name, "checked": int(time.time())}
    newest = sorted(users.items(), key=lambda kv: kv[1].get("checked", 0) if isinstance(kv[1].get("checked"), int)
                    else 0)[-MAX_KEPT:]
    try:
        write_atomic(whoami_path(machine), json.dumps({"users": dict(newest)}, indent=1).encode(), durable=False)
    except OSError:
        pass


def ask(timeout: float) -> str:
    """The Hub's user name for the current token: one `whoami-v2` request within `timeout` seconds.
    Raises what the Hub's failure is (offline, not authenticated, no answer)."""
    import json

    from agentmem.store import hubhttp, network

    client = hubhttp.Client(network.Budget(network.resolve_timeout(timeout)), "the Hub's account check")
    reply = client.request("/api/whoami-v2")
    if reply.status == 401:
        raise errors.NotAuthenticated("the Hub does not accept this machine's token", hint=network.LOGIN_HINT)
    if reply.status != 200:
        raise errors.RemoteError(f"the Hub's account check answered HTTP {reply.status}")
    try:
        name = json.loads(reply.body).get("name")
    except (ValueError, AttributeError):
        name = None
    if not isinstance(name, str) or not name:
        raise errors.RemoteError("the Hub's account check returned an unexpected reply")
    return name


def user_name(machine: str | os.PathLike, timeout: float) -> str | None:
    """The current token's Hub user name: kept, else asked (then kept); None when the Hub cannot say now."""
    key = fingerprint()
    if key is None:
        return None
    name = cached_name(machine, key)
    return name if name is not None else refresh(machine, timeout)


def refresh(machine: str | os.PathLike, timeout: float) -> str | None:
    """Ask the Hub again and keep the answer (setup, doctor); None when it cannot say now."""
    key = fingerprint()
    if key is None:
        return None
    try:
        name = ask(timeout)
    except errors.AgentmemError:
        return None
    remember(machine, name, key)
    return name
