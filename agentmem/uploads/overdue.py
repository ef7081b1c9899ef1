"""What has been wrong on this machine for too long to stay quiet about: the session-start reminder's line.

Two facts read from local files only (no network): notes pending for over an hour, and the store not
having answered a refresh for a day. `agentmem doctor` says why (its pending and store checks use the same
thresholds). Of the notes pending over an hour, those the team store refused this member (held: no retry
sends them until they act) are counted by the caller (hooks/actions.py, which may know the team's rules);
`maybe_refused` tells it, from entry.json alone, which entries need the exact look.

Every session starts with this, so it costs about what the reminder cost before it existed: no `json`,
`re`, `glob` or `datetime` import (each several ms of a ~30 ms start; docs/benchmarks.md), only
`os.listdir` and small reads. The two values it needs, a pending entry's `created` and a project's
`refreshed_at`, are picked out of files agentmem itself wrote with `json.dumps` (`_scalar`); a file
whose value is not plainly there is read the slow, exact way (the pending module, `json`), so a
damaged or unexpected file costs time, never a wrong answer.
"""

from __future__ import annotations

import os
import time

from agentmem.paths import PENDING_ENTRY_FILE, STATE_FILE, listed, pending_dir, project_caches

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see paths.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

PENDING_TOO_LONG = 3600.0  # an hour: the Stop hook or the next save retries far sooner when the store answers
STORE_SILENT_TOO_LONG = 86400.0  # a day without one good check of the store is worth a line at session start
_MAX_READ = 65536  # bytes: entry.json and state.json are far smaller; a bigger one goes the slow way


def age_text(seconds: float) -> str:
    if seconds < 90:
        return f"{int(seconds)} s"
    if seconds < 5400:
        return f"{int(seconds // 60)} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.0f} days"


def created_at(entry: Any) -> float:
    """When a pending note was saved (its `created`), as seconds since the epoch; now if unknown."""
    from datetime import datetime

    try:
        return datetime.fromisoformat(str(entry.created).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return time.time()


def _read_text(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            raw = f.read(_MAX_READ + 1)
    except OSError:
        return None
    if len(raw) > _MAX_READ:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _scalar(text: str, key: str) -> str | None:
    """The value of `key` in a JSON object agentmem wrote with json.dumps, as its raw text (a string's
    contents without quotes, or a number), or None when it is not plainly there (then read it exactly).

    Inside a JSON string every quote is escaped, so `"key":` with bare quotes is a key, never text; and the
    files read here (pending entries, refresh states) use each of these keys once."""
    at = text.find(f'"{key}":')
    if at < 0 or text.find(f'"{key}":', at + 1) >= 0:
        return None
    rest = text[at + len(key) + 3 :].lstrip(" ")
    if rest.startswith('"'):
        end = rest.find('"', 1)
        value = rest[1:end] if end > 0 else ""
        return value if value and "\\" not in value else None
    ends = [i for i in (rest.find(","), rest.find("}"), rest.find("\n")) if i > 0]
    if not ends:
        return None
    return rest[: min(ends)].strip() or None


def _utc_seconds(stamp: str) -> float | None:
    """`2026-12-03T07:42:53.524Z` (how agentmem writes `created`) as seconds since the epoch, or None."""
    if len(stamp) != 24 or stamp[4] != "-" or stamp[7] != "-" or stamp[10] != "T" or stamp[13] != ":" \
            or stamp[16] != ":" or stamp[19] != "." or stamp[23] != "Z":
        return None
    digits = stamp[:4] + stamp[5:7] + stamp[8:10] + stamp[11:13] + stamp[14:16] + stamp[17:19] + stamp[20:23]
    if not digits.isdigit() or not digits.isascii():
        return None
    year, month, day = int(stamp[:4]), int(stamp[5:7]), int(stamp[8:10])
    hour, minute, second = int(stamp[11:13]), int(stamp[14:16]), int(stamp[17:19])
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour < 24 and minute < 60 and second < 61):
        return None
    # Days since 1970-01-01 of a proleptic Gregorian date (the civil-from-days inverse, integer only).
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
    return days * 86400 + hour * 3600 + minute * 60 + second + int(stamp[20:23]) / 1000


def _created_fast(machine: str, name: str) -> float | None:
    """A pending entry's `created`, read straight from its entry.json, or None (ask the pending module)."""
    text = _read_text(os.path.join(pending_dir(machine), name, PENDING_ENTRY_FILE))
    value = _scalar(text, "created") if text is not None else None
    return _utc_seconds(value) if value is not None else None


def _refreshed_at(path: str) -> float | None:
    """A project's last good refresh from its state.json (None: none recorded, or the file is unreadable)."""
    text = _read_text(path)
    if text is None:
        return None
    if '"refreshed_at":' not in text:
        return None
    value = _scalar(text, "refreshed_at")
    try:
        return float(value) if value is not None else _refreshed_at_exactly(text)
    except ValueError:
        return _refreshed_at_exactly(text)


def _refreshed_at_exactly(text: str) -> float | None:
    import json

    try:
        seen = json.loads(text).get("refreshed_at")
    except (ValueError, AttributeError):
        return None
    return float(seen) if isinstance(seen, (int, float)) and not isinstance(seen, bool) else None


# A pending entry's recorded last error of these kinds (errors.NoAccess, errors.NotFound: not imported, see
# above) may be the team store refusing this member (memory/team_writes.py `waits_for_person` decides).
_REFUSALS = ("no-access", "not-found")


def maybe_refused(machine: str, name: str) -> bool:
    """Whether a pending entry's entry.json records a last error that may be a refusal (or does not plainly
    say which error it records: then the caller's exact reading decides). One small read, no import."""
    text = _read_text(os.path.join(pending_dir(machine), name, PENDING_ENTRY_FILE))
    if text is None or '"error":' not in text:
        return False
    kind = _scalar(text, "error")
    return kind is None or kind in _REFUSALS


def reminder_line(machine: str, doctor_command: Callable[[], str], now: float | None = None,
                  waiting: list[str] | None = None, held: Callable[[list[str]], str] | None = None) -> str | None:
    """The one line the session-start reminder adds when something has been wrong for long, or None.

    `waiting`: the pending folder's entries (None: list it); the pending module reads them only when one's
    entry.json does not plainly hold its `created`. `doctor_command` spells the command that says why,
    asked only for a line that names it; `held`, given the entries waiting over an hour, says how many of
    them the team store refused this member ("" when none: hooks/actions.py, above the team's rules)."""
    now = time.time() if now is None else now
    if waiting is None:
        waiting = listed(pending_dir(machine))
    created = [_created_fast(machine, name) for name in waiting]
    if None in created:
        from agentmem.uploads import pending

        old = [e.id for e in pending.list_entries(machine) if now - created_at(e) > PENDING_TOO_LONG]
    else:
        old = [name for name, when in zip(waiting, created) if when is not None and now - when > PENDING_TOO_LONG]
    if old:
        line = f"{len(old)} memory note(s) have waited over an hour for upload: the store has not confirmed them."
        said = held(old) if held is not None else ""
        return f"{line}{' ' + said if said else ''} Tell the user; `{doctor_command()}` says why."
    last = None
    for pdir in project_caches(machine):
        seen = _refreshed_at(os.path.join(pdir, STATE_FILE))
        if seen is not None and (last is None or seen > last):
            last = seen
    if last is not None and now - last > STORE_SILENT_TOO_LONG:
        return (f"The memory store has not answered for {age_text(now - last)}: searches may miss notes saved "
                f"elsewhere. `{doctor_command()}` says why.")
    return None
