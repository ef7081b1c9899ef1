"""One status vocabulary for every report of checks or steps: `doctor`'s checks and setup's steps.

A check or a step is one of `Status`'s six words, from good to bad:

- `ok`: in place, nothing to do;
- `changed`: it was not, and this run put it right (setup only);
- `skipped`: not wanted or not possible here, and that is fine (setup only);
- `pending`: done on this machine, the store has not confirmed it yet (setup only);
- `warning`: works, but a person should look (`Status.WARNING`);
- `failed`: broken; the report says what fixes it.

Each front end spells a status as it always has, derived by one rule: a step (setup's report, its
`--json`) is the word itself; a check (doctor's lines and its `--json`) is the word's first four letters,
so `ok`, `warn`, `fail` (`check_word`). A check is only ever ok, warning or failed (`CHECK_STATUSES`).

What a report's warning *is* stays a class a caller matches: a warning that comes from an
`errors.AgentmemWarning` (a config.toml read with conflict markers, a malformed setting) keeps that
object as the check's detail. Whole-report verdicts (setup's confirmed | pending | failed, doctor's
ok | broken) and the outcomes of single operations (a save's saved | pending) are not statuses of a
check or step, and keep their own words.

Kept tiny and free of imports beyond `enum` (which `re` loads anyway): runtimes and setup use it.
"""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """A check's or step's status. A `str`: it compares equal to its word and is written as it in JSON."""

    OK = "ok"
    CHANGED = "changed"
    SKIPPED = "skipped"
    PENDING = "pending"
    WARNING = "warning"
    FAILED = "failed"


OK, CHANGED, SKIPPED, PENDING, WARNING, FAILED = (Status.OK, Status.CHANGED, Status.SKIPPED, Status.PENDING,
                                                   Status.WARNING, Status.FAILED)
CHECK_STATUSES = (OK, WARNING, FAILED)  # what a doctor check can be


def check_word(status: Status) -> str:
    """How a check spells `status`: its first four letters (ok, warn, fail). The one rule doctor's lines and
    its `--json` use."""
    if status not in CHECK_STATUSES:
        raise ValueError(f"a check is ok, warning or failed, not {status}")
    return status.value[:4]


CHECK_WORDS = {check_word(s): s for s in CHECK_STATUSES}  # "ok" | "warn" | "fail" -> Status
