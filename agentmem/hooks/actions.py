"""What the optional hooks do when a runtime fires them: a reminder, and a bounded retry.

Both are small and never block the agent:
- `reminder` (SessionStart, UserPromptSubmit): short memory guidance and the
  number of pending uploads, read from the pending folder only. No network, no
  config parsing, no heavy imports.
- `stop` (Stop): retries notes that are already pending, within a total time
  budget, then returns and leaves the rest pending. It never writes new memory,
  never starts a model and never reads the transcript. A team note whose last
  attempt the team refused (memory/team_writes.py `waits_for_person`) is not
  retried: it waits for a person (the write role, or `save --retry ID --personal`).

Installing them into the runtimes' files lives in `hooks/config_files.py`.
"""

import os
import time

from agentmem.paths import pending_dir

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from agentmem.uploads.pending import Entry

# Seconds: the whole time a Stop hook may spend retrying. An agent's stop
# should not feel slow, and a folder or a healthy bucket confirms one note in
# a small part of it (docs/benchmarks.md); an unreachable bucket then costs 10 s once.
STOP_BUDGET = 10.0
# Seconds past the budget before the hook gives up on an attempt that ignores
# its own timeout (a hung network drive); the note stays pending either way.
STOP_GRACE = 2.0
# Seconds: after a Stop round that spent its whole budget without confirming a
# note (a store that hangs rather than refuses), later Stop hooks skip retrying
# for this long, so a hung drive or Hub does not add 10 s to every turn. An
# explicit `agentmem save --retry` is never paused.
STOP_PAUSE = 120.0
STOP_STATE = "hook-stop-state.json"

GUIDANCE = (
    "Memory (agent-memory skill): search this project's notes before relying on remembered "
    "decisions; save useful findings, and a checkpoint at milestones or handoffs, before your "
    "final reply."
)


def pending_names(machine: str | os.PathLike) -> list[str]:
    """The pending entries' names, by the same rule as `pending.count` (entries are folders not starting
    with "."), without importing the pending module: this runs on every prompt (see bench/hook_latency.py)."""
    try:
        return [n for n in os.listdir(pending_dir(machine)) if not n.startswith(".")]
    except FileNotFoundError:
        return []


def pending_count(machine: str | os.PathLike) -> int:
    return len(pending_names(machine))


def pending_line(count: int) -> str:
    # The command written by agentmem/shell.py, which `errors.Command.line` calls: not importing errors.py
    # (its classes) saves about a millisecond of the prompt hook whenever a note is pending.
    from agentmem import shell

    noun = "note is" if count == 1 else "notes are"
    return (
        f"{count} memory {noun} saved on this machine but not yet confirmed in shared memory; "
        f"`{shell.line('pending')}` lists them, each with the command that retries it."
    )


def reminder(machine: str | os.PathLike, event: str = "start", cwd: str | None = None) -> str:
    """The text a reminder hook prints. On `prompt` it says something only when uploads are pending;
    at the start of a session it also carries the project's pinned notes (`pins_text`)."""
    waiting = pending_names(machine)
    count = len(waiting)
    if event == "prompt":
        return pending_line(count) if count else ""
    text = GUIDANCE + ("\n" + pending_line(count) if count else "")
    from agentmem.uploads.overdue import reminder_line

    pinned = pins_text(machine, cwd, waiting=waiting)
    trouble = reminder_line(os.fspath(machine), _doctor_line, waiting=waiting,
                            held=lambda names: _held_text(os.fspath(machine), names))
    return text + ("\n" + pinned if pinned else "") + ("\n" + trouble if trouble else "")


def _doctor_line() -> str:
    from agentmem.errors import Command

    return Command("doctor").line()


def _held_text(machine: str, names: list[str]) -> str:
    """How many of the pending entries `names` are held (memory/team_writes.py `waits_for_person`: the team
    store refused this member, so no retry sends them until they act), as the start reminder says it, or "".
    Only an entry that records a refusal costs more than one small read (uploads/overdue.py `maybe_refused`):
    then config.toml and that entry are read exactly. No store is opened."""
    from agentmem.uploads.overdue import maybe_refused

    suspects = [name for name in names if maybe_refused(machine, name)]
    if not suspects:
        return ""
    from agentmem.errors import AgentmemError, Command
    from agentmem.memory import team_writes
    from agentmem.uploads import pending

    team = team_writes.machine_team(machine)
    if team is None:
        return ""
    held = 0
    for name in suspects:
        try:
            if team_writes.waits_for_person(pending.load(machine, name)[0], team):
                held += 1
        except (AgentmemError, OSError):
            continue
    if not held:
        return ""
    return (f"{held} of them the team store refused you: no retry sends them until you act; "
            f"`{Command('pending').line()}` names the ways out.")


def pins_text(machine: str | os.PathLike, cwd: str | None = None, waiting: list[str] | None = None) -> str:
    """The pinned notes of the working directory's project, framed as recalled data like search results,
    within `[memory] pin_budget`, saying what was left out. "" when there are none, or no project here.
    Cache and pending folder only: no network (replica/pins.py). `waiting`: the pending folder's entries
    (None: not looked at)."""
    from agentmem.replica import pins

    if not pins.may_have_pins(os.fspath(machine), pending_names(machine) if waiting is None else waiting):
        return ""
    from agentmem import config
    from agentmem.errors import AgentmemError

    try:
        cfg = config.load(machine)
        project = cfg.resolve_project(cwd=cwd)
        stores = [cfg.scoped(scope).store for scope in cfg.scopes()]  # a team's pins reach every member
        found = pins.pinned_notes(os.fspath(machine), stores, project, cfg.pin_budget)
    except AgentmemError:
        return ""  # no project here, or no store configured: nothing pinned to show
    if not found["shown"] and not found["left_out"]:
        return ""
    from agentmem.errors import Command
    from agentmem.safety.framing import frame_lines

    lines = [f"Pinned memory of project {project} ({len(found['shown'])} note(s), newest pin first):"]
    body: list[str] = []
    for note in found["shown"]:
        body += [f"[{note['id']}] {note['text']}", ""]
    if body:
        lines += frame_lines(body[:-1], label="pinned notes")
    if found["left_out"]:
        named = ", ".join(f"{item['id']} ({item['why']})" for item in found["left_out"][:10])
        more = f" and {len(found['left_out']) - 10} more" if len(found["left_out"]) > 10 else ""
        first = found["left_out"][0]["id"]
        lines.append(f"Pinned but left out: {named}{more}; read one with: "
                     f"{Command('read', first, '--project', project).line()}")
    return "\n".join(lines)


class StopReport:
    def __init__(self) -> None:
        self.saved: list[str] = []
        self.purged: list[str] = []  # purge records delivered: each its whole purge (INV purged-gone)
        self.pending: list[str] = []  # tried and still pending, or never tried
        self.errors: list[str] = []  # one line each, no credentials
        self.held: list[str] = []  # team notes the team refused this member: not tried until a person acts
        self.skipped = ""  # why nothing was tried
        self.paused = False  # skipped because a recent round hung (see STOP_PAUSE)
        self.timed_out = False
        self.seconds = 0.0

    def message(self) -> str:
        """One short line for stderr, or "" when there is nothing worth telling."""
        if self.paused:
            return f"agentmem stop hook: notes still pending; {self.skipped}"
        if self.skipped or not (self.pending or self.errors or self.saved or self.purged or self.held):
            return ""
        parts = []
        if self.saved:
            parts.append(f"uploaded {len(self.saved)} pending note(s)")
        if self.purged:
            parts.append(f"finished {len(self.purged)} purge(s): the store no longer holds the note")
        if self.pending:
            parts.append(f"{len(self.pending)} still pending, kept on this machine")
        if self.held:
            from agentmem.errors import Command

            parts.append(f"{len(self.held)} team note(s) the team store refused you, kept on this machine and not "
                         f"retried until you act (`{Command('pending').line()}` says how)")
        if self.timed_out:
            parts.append(f"stopped after the {STOP_BUDGET:g} s budget")
        text = "agentmem stop hook: " + "; ".join(parts)
        if self.errors:
            text += f" (last error: {self.errors[-1]})"
        return text


def parse_hook_input(raw: str) -> dict:
    """The runtime's JSON on stdin; anything unreadable counts as no input."""
    import json

    try:
        data = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def stop(machine: str | os.PathLike, hook_input: dict, *, budget: float = STOP_BUDGET,
         grace: float = STOP_GRACE) -> StopReport:
    """Retry already-pending notes for at most `budget` (+ `grace`) seconds."""
    report = StopReport()
    start = time.monotonic()
    if hook_input.get("stop_hook_active"):
        report.skipped = "stop_hook_active"
        return report
    if pending_count(machine) == 0:
        report.skipped = "nothing pending"
        return report
    paused = _paused_for(machine)
    if paused:
        from agentmem.errors import Command

        try:
            oldest = min((n for n in os.listdir(pending_dir(machine)) if not n.startswith(".")),
                         default=None)
        except OSError:
            oldest = None
        now = f"`{Command('save', '--retry', oldest).line()}` retries one now; " if oldest else ""
        report.skipped = (f"the store did not answer {paused:.0f} s ago, so no retry for {STOP_PAUSE:g} s "
                          f"({now}`{Command('pending').line()}` lists them all)")
        report.paused = True
        return report

    import threading

    from agentmem.memory import team_writes
    from agentmem.search import follow
    from agentmem.uploads import delivery

    box: dict = {}
    team = team_writes.machine_team(machine)  # none, or unreadable: every entry is retried, as before teams

    def hold(entry: "Entry") -> bool:
        if team_writes.waits_for_person(entry, team):
            report.held.append(entry.id)
            return True
        return False

    def work() -> None:
        try:
            box["result"] = delivery.retry_all(machine, budget=budget, index=follow.update, hold=hold)
        except Exception as exc:  # reported, never raised into the runtime
            box["error"] = exc

    worker = threading.Thread(target=work, name="agentmem-stop-retry", daemon=True)
    worker.start()
    worker.join(budget + grace)
    report.seconds = time.monotonic() - start
    if worker.is_alive():
        # An attempt ignored its timeout. Its note stays pending: entries are only
        # removed after the store confirms, so abandoning the attempt loses nothing.
        report.timed_out = True
        report.pending = [e.id for e in _safe_list(machine)]
        report.errors.append("the store did not answer within the budget")
        _remember(machine, report, budget)
        return report
    if "error" in box:
        exc = box["error"]
        report.errors.append(getattr(exc, "one_line", lambda: f"{type(exc).__name__}: {exc}")())
        report.pending = [e.id for e in _safe_list(machine)]
        return report
    outcomes, untried = box["result"]
    for outcome in outcomes:
        if outcome.status == "saved":
            (report.purged if outcome.entry.purges else report.saved).append(outcome.entry.id)
        else:
            report.pending.append(outcome.entry.id)
            if team is not None and team_writes.waits_for_person(outcome.entry, team):
                report.errors.append(team_writes.refusal(outcome.entry, team).one_line())
            elif outcome.error is not None:
                report.errors.append(outcome.error.one_line())
    report.pending += [e.id for e in untried]
    report.timed_out = bool(untried)
    _remember(machine, report, budget)
    return report


def _paused_for(machine: str | os.PathLike) -> float:
    """Seconds since a round that hung, if that was less than STOP_PAUSE ago; else 0."""
    import json

    try:
        from agentmem.fsutil import read_bytes

        hung_at = json.loads(read_bytes(os.path.join(machine, STOP_STATE)))["hung_at"]
        age = time.time() - float(hung_at)
    except (OSError, ValueError, KeyError, TypeError):
        return 0.0
    return age if 0 <= age < STOP_PAUSE else 0.0


def _remember(machine: str | os.PathLike, report: StopReport, budget: float) -> None:
    """Record a round that used (nearly) its whole budget and confirmed nothing; forget it once one succeeds."""
    state = os.path.join(machine, STOP_STATE)
    try:
        if (report.timed_out or report.seconds >= 0.9 * budget) and not report.saved:
            from agentmem.fsutil import write_atomic

            write_atomic(state, f'{{"hung_at": {time.time():.3f}}}\n'.encode())
        elif report.saved and os.path.exists(state):
            os.unlink(state)
    except OSError:
        pass  # the pause is a courtesy; without it the next stop simply tries again


def _safe_list(machine: str | os.PathLike) -> list:
    from agentmem.uploads import pending

    try:
        return pending.list_entries(machine)
    except OSError:
        return []

