"""Note IDs: the one home of their rules; note and record file names as the store's layout spells them
(store/layout.py), named here too for the cache that keeps them.

An ID is `YYYYMMDDTHHMMSSmmmZ-` (UTC creation time to the millisecond) plus 8
random base32 characters: unique across machines, and sorting by ID sorts by
time. Skill revisions are allocated the same way. IDs that agentmem did not
allocate (a setup note's stable ID, a note placed in a store by hand) only have
to be a safe file name: `ID`.
"""

from __future__ import annotations

import os

from agentmem import patterns
from agentmem.errors import InvalidInput
from agentmem.store import layout

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from datetime import datetime

ID = patterns.compile(rf"^{layout.ID_PATTERN}$")
ALLOCATED = patterns.compile(r"^\d{8}T\d{9}Z-[a-z2-7]{8}$")  # what new_id returns
# File names are the store's layout (store/layout.py), which the cache keeps: <id>.md, <record id>.<kind>.json
NOTE_FILE = layout.NOTE_FILE
RECORD_KINDS = layout.RECORD_KINDS
RECORD_FILE = layout.RECORD_FILE
note_file = layout.note_file
# What every setup verification note's ID starts with (setup/verification.py): notes of setup's own, left
# out of an empty query's list of recent notes (search/find.py), found by any search that matches them.
SETUP_PREFIX = "setup-verification-"
_B32 = "abcdefghijklmnopqrstuvwxyz234567"


def new_id(now: datetime | None = None) -> str:
    """A globally unique ID that sorts by creation time. `now`: an aware datetime (default: now)."""
    from datetime import UTC, datetime  # lazy: search and read never need it

    now = now or datetime.now(UTC)
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%S") + f"{now.microsecond // 1000:03d}Z"
    rand = "".join(_B32[b % 32] for b in os.urandom(8))  # 256 % 32 == 0: every character equally likely
    return f"{stamp}-{rand}"


def check_id(note_id: str) -> str:
    if not isinstance(note_id, str) or not ID.match(note_id):
        raise InvalidInput(f"invalid note ID {note_id!r}: letters, digits, '_' and '-' only")
    return note_id


def record_file(record_id: str, kind: str) -> str:
    """The file name of a record (a retraction, pin, unpin or purge): `<id>.<kind>.json`."""
    if kind not in RECORD_KINDS:
        raise InvalidInput(f"invalid record kind {kind!r}")
    return layout.record_file(check_id(record_id), kind)


def note_ids(names: Iterable[str]) -> list[str]:
    """The note IDs among file names (anything else in a folder is ignored)."""
    return [m.group(1) for n in names if (m := NOTE_FILE.match(n))]
