"""Note and store text made fit for the memory view: each credential withheld (INV no-credentials).

Its own module, below view/data.py (which gathers through it) and view/collect.py (which it is handed
to), so neither imports the other even for the type.
"""

from __future__ import annotations

from agentmem.safety import credentials, screening


class Redactor:
    """The one place note and store text is made fit to show: each credential replaced by
    `[REDACTED:<kind>]` (`safety/screening.py`'s withholding, as for the rest of the helper's output).
    Counts what it withheld, for the page."""

    def __init__(self) -> None:
        self.known = credentials.env_secrets()
        self.withheld = 0

    def text(self, value: object) -> str:
        if not isinstance(value, str):
            return "" if value is None else str(value)
        if not value:
            return value
        shown, kinds = screening.withhold(value, self.known)
        self.withheld += len(kinds)
        return shown

    def items(self, value: object) -> list[str]:
        if isinstance(value, str):
            value = [value]
        return [self.text(v) for v in value] if isinstance(value, list) else []

    def fields(self, values: dict) -> dict:
        """Several fields of one note ({name: str or [str]}): checked as one text first, joined by line
        breaks (the detectors work line by line), then field by field only when that text holds a
        credential, which halves the time of a check per field (bench/view.py; docs/benchmarks.md)."""
        joined = "\n".join(v if isinstance(v, str) else "\n".join(v) for v in values.values())
        if not screening.withhold(joined, self.known)[1]:
            return values
        return {k: self.text(v) if isinstance(v, str) else self.items(v) for k, v in values.items()}
