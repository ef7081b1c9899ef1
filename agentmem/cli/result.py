"""The one shape every command handler returns, and the JSON envelope around it.

A handler returns a `Result`: its exit status, the JSON-able payload `--json`
prints, and the text a person reads. The envelope guarantees that every JSON
object carries `status`: commands that have an outcome of their own
(`saved`/`pending`, `confirmed`/`failed`, ...) set it; the rest get `"ok"`.
Keys are only ever added to a command's JSON, never removed.

A plain class, not a dataclass: search and read build one on every agent turn.
"""

from __future__ import annotations

from agentmem.errors import EXIT_OK


class Result:
    __slots__ = ("exit_code", "data", "text", "problems")

    def __init__(self, data: dict, text: str, exit_code: int = EXIT_OK, problems: list[str] | None = None):
        self.exit_code = exit_code
        self.data = data
        self.text = text
        self.problems = problems or []  # one line each, for stderr: what failed in a command that went on

    def envelope(self) -> dict:
        """The payload as printed by --json: `status` first, then the command's own keys."""
        if "status" in self.data:
            return self.data
        return {"status": "ok", **self.data}


def error_envelope(kind: str, message: str, next_steps: list[dict] | None = None) -> dict:
    """What --json prints for a failure (the same for every command): `next`, what to do, as steps
    (render.next_data)."""
    return {"status": "error", "error": kind, "message": message, "next": next_steps or []}


def with_warning_details(payload: dict) -> dict:
    """A payload that carries `warnings` also carries each one's class and next steps, in `warning_details`
    (render.warning_details); one without warnings is returned as it is, at no cost."""
    if not payload.get("warnings"):
        return payload
    from agentmem.render import warning_details

    return payload | {"warning_details": warning_details(payload["warnings"])}
