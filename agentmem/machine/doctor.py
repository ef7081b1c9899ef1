"""`agentmem doctor`: one check per line, each with its fix, and whether anything is broken.

The checks are data (`Check`: name, status, detail, fix) so the CLI prints them, `--json` returns them,
setup's report shows the same ones, and the session-start reminder asks the cheap two (pending too long,
store silent too long) without running the rest. `fix` is words and `command` a helper command
(`errors.Command`), which each front end spells (the CLI as a quoted shell line, render.command).

Statuses come from the one vocabulary (`agentmem/status.py`): OK; WARNING (works, but something needs a
look: a note pending, an index to rebuild on the next search); FAILED (broken: the store unreachable, a
runtime's wiring missing). `to_json` spells them as doctor always has, `ok`, `warn`, `fail`
(`status.check_word`). `doctor` exits non-zero when any check fails. A config warning's detail is the
`errors.AgentmemWarning` itself, so a caller matches its class.
"""

from __future__ import annotations

import os
import time

from agentmem import errors
from agentmem.errors import Command, NextStep, Option
from agentmem.paths import CHECKED_FILE, config_path
from agentmem.status import FAILED, OK, WARNING, Status, check_word
from agentmem.uploads.overdue import PENDING_TOO_LONG, age_text, created_at

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable
    from typing import Any

    from agentmem.config import Config
    from agentmem.store.base import StoreDescription


class Check:
    __slots__ = ("name", "status", "detail", "fix", "command")

    def __init__(self, name: str, status: Status, detail: str, fix: str | None = None,
                 command: Command | None = None):
        check_word(status)  # a check is ok, warning or failed: anything else is a mistake here
        self.name, self.status, self.detail = name, status, detail
        self.fix, self.command = fix, command  # words, and/or the helper command that fixes it

    def to_json(self) -> dict:
        return {"name": self.name, "status": check_word(self.status), "detail": self.detail, "fix": self.fix,
                "command": list(self.command.args) if self.command else None}


def pending_check(machine: str, now: float | None = None, team: StoreDescription | None = None) -> Check:
    """Notes saved here whose upload is not confirmed: how many, the oldest, and why; how many of them are
    held (memory/team_writes.py `held`: the team store `team` refused this member, so no retry helps until
    they act), with `pending`, which names both ways out for each."""
    from agentmem.memory import team_writes
    from agentmem.uploads import pending

    entries = pending.list_entries(machine)
    broken = pending.unreadable(machine)
    if not entries and not broken:
        return Check("pending", OK, "no note waits for upload")
    now = time.time() if now is None else now
    oldest = min(entries, key=lambda e: e.id) if entries else None
    age = now - created_at(oldest) if oldest is not None else 0.0
    held = team_writes.held(machine, team, entries)
    why = ""
    if oldest is not None and oldest.id in held:  # the team's refusal, in the words `pending` uses
        why = f"; {held[oldest.id].message}"
    elif oldest is not None and oldest.last_error:
        why = f"; last error: {oldest.last_error.get('message')}"
    detail = f"{len(entries)} note(s) wait for upload"
    if oldest is not None:
        detail += f", the oldest {oldest.id} for {age_text(age)}{why}"
    if broken:
        detail += f"; {len(broken)} pending folder(s) hold no note that can be sent"
    status = FAILED if age > PENDING_TOO_LONG or broken else WARNING
    if held:
        detail += (f"; {len(held)} of them held: the team store refused you, so no retry (nor the Stop hook's) "
                   "sends them until you act")
        return Check("pending", status, detail, "for each held note, the write role then a retry, or keep it as "
                     "your own note; the list names both", Command("pending"))
    command = Command("save", "--retry", oldest.id) if oldest is not None else Command("pending")
    return Check("pending", status, detail, "retry once the store answers (the Stop hook retries too)", command)


def purge_checks(machine: str, cfg: Config, projects: list[str], timeout: float | None) -> list[Check]:
    """INV purged-gone: a purge is pending work until the store no longer holds the note; each unfinished
    one fails, with the command that finishes it."""
    from agentmem.memory import curation

    return [Check(f"purge {p['project']}", FAILED, f"the purge of note {p['note']} (record {p['record']}) is not "
                  f"finished: {p['problem']}; the store may still hold the note's full text",
                  "finish it once the store answers", Command(*p["command"]))
            for p in curation.unfinished_purges(machine, cfg, projects, timeout=timeout)]


def store_checks(machine: str, cfg: Config, projects: list[str], timeout: float | None) -> list[Check]:
    """Ask the store what changed for each project, as search does: reachable, the right store, when checked."""
    from agentmem.replica import cache
    from agentmem.search import follow
    from agentmem.store import identity

    out = []
    label = cfg.store.label()
    known = identity.recorded(machine, cfg.store)
    for project in projects or []:
        status = cache.refresh(machine, cfg.store, project, timeout=timeout, index=follow.update)
        if status.stale:
            out.append(Check(f"store {project}", FAILED, f"{label}: {status.reason}",
                             _store_fix(status.error), Command("setup") if status.error == "not-found" else None))
        else:
            marker = f"identity {known}" if known else "no identity recorded yet"
            out.append(Check(f"store {project}", OK, f"{label} answered ({status.how or 'checked'}; {marker})"))
        if status.unreadable:
            out.append(Check(f"unreadable {project}", WARNING,
                             f"{len(status.unreadable)} object(s) in the store are not readable notes (skipped)",
                             "look at them in the store; a note agentmem wrote is never one"))
    if not projects:
        out.append(Check("projects", WARNING, "no project is mapped on this machine", "map a directory",
                         Command("map", os.getcwd(), os.path.basename(os.getcwd()) or "project")))
    return out


def team_check(machine: str, cfg: Config, timeout: float | None) -> Check | None:
    """With `[team]`: the team store reachable, and what this member may do there (machine/team_access.py)."""
    from agentmem.machine import team_access

    try:
        found = team_access.check(machine, cfg, timeout=timeout)
    except errors.AgentmemError as exc:  # a malformed [team] table
        return Check("team", FAILED, exc.one_line(), "correct [team] in config.toml (kind and location)")
    if found is None:
        return None
    return Check("team", found.status, found.line, found.fix, found.command)


def _store_fix(kind: str | None) -> str:
    return {
        "offline": "check the network or the drive that holds the store; searches answer from the cache meanwhile",
        "not-authenticated": "log in to Hugging Face (hf auth login) or set HF_TOKEN",
        "no-access": "ask the bucket's owner for access, or configure a bucket you can write",
        "not-found": str(NextStep("the store is gone or moved: restore it, or accept a new one with setup {}",
                                  Option("new-store"))),
    }.get(kind or "", "see the reason; searches answer from the cache and say they may be stale")


# Beside the index: what doctor found when the index's integrity check last passed (the index file as it
# was, and how many notes the cache then held). The check reads every page (seconds at 100k notes, cold:
# docs/benchmarks.md), so a rerun with nothing changed takes the record's word instead; any write to the
# index (a search that added a note, a rebuild, damage done through the file system) changes the file's
# identity, and the check runs again.
CHECKED = CHECKED_FILE


def index_check(machine: str, cfg: Config, project: str) -> Check:
    """The project's ranked index: present, of this version, sound, holding every cached note."""
    import sqlite3

    from agentmem.replica import cache
    from agentmem.search import index

    pdir = cache.project_dir(machine, cfg.store, project)
    ndir = cache.notes_dir(machine, cfg.store, project)
    path = index.index_path(pdir)
    if not os.path.exists(path):
        cached = len(cache.cached_ids(machine, cfg.store, project))
        return Check(f"index {project}", OK, f"no index yet for {cached} cached note(s): the next search builds it")
    record = _checked(path)
    began = time.time_ns()  # before the stats: see store/dirwatch.py
    identity, notes_time = _identity(path), _mtime(ndir)
    try:
        valid, indexed = _read_only(path, lambda conn: index._valid(conn), "SELECT COUNT(*) FROM docs")
        if not valid:
            return Check(f"index {project}", WARNING, "written by another version", "the next search rebuilds it")
        unchanged = identity is not None and record.get("index") == identity
        integrity = "ok" if unchanged else _read_only(path, "PRAGMA quick_check")[0]
    except sqlite3.DatabaseError as exc:
        return Check(f"index {project}", WARNING, f"unreadable ({exc})", "the next search rebuilds it")
    if integrity != "ok":  # SQLite's answer, not a status
        return Check(f"index {project}", WARNING, f"damaged ({integrity})", "the next search rebuilds it")
    same_notes = notes_time and record.get("notes") == notes_time and isinstance(record.get("cached"), int)
    cached = record["cached"] if same_notes else len(cache.cached_ids(machine, cfg.store, project))
    if identity is not None and _identity(path) == identity:  # nothing wrote the index while it was checked
        from agentmem.store import dirwatch

        trusted = dirwatch.trusted_mtime(began, notes_time, ndir, int(dirwatch.RACY_SECONDS * 1e9)) if notes_time else 0
        _record_checked(path, {"index": identity, "notes": trusted or None, "cached": cached}, record)
    if indexed != cached:
        return Check(f"index {project}", OK, f"{indexed} of {cached} cached note(s) indexed",
                     "the next search brings it up to date")
    return Check(f"index {project}", OK, f"{indexed} note(s) indexed")


def _identity(path: str) -> list[int] | None:
    """The index file as the file system tells it apart: device, inode, size, modification and change times
    (the change time moves with any write, and no one can set it back). None while a rollback journal lies
    beside it: a write was under way, or was cut off and is undone by the next open."""
    if os.path.exists(path + "-journal"):
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _mtime(folder: str) -> int:
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return 0


def _checked(path: str) -> dict:
    import json

    from agentmem.fsutil import read_bytes

    try:
        found = json.loads(read_bytes(os.path.join(os.path.dirname(path), CHECKED), 65536))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _record_checked(path: str, record: dict, kept: dict) -> None:
    """Write the record if it says something new (`kept`: the one read before the check); skipped where the
    folder cannot be written (a sandbox)."""
    import json

    from agentmem.fsutil import write_atomic

    if kept == record:
        return
    try:
        write_atomic(os.path.join(os.path.dirname(path), CHECKED), json.dumps(record).encode(), durable=False)
    except OSError:
        pass


def _read_only(path: str, *asks: str | Callable[[sqlite3.Connection], Any]) -> list[Any]:
    """Each of `asks` (a query's first value, or a function of the connection) over the index opened
    read-only: doctor never writes it. Raises sqlite3.DatabaseError as opening or asking does."""
    import sqlite3

    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [ask(conn) if callable(ask) else conn.execute(ask).fetchone()[0] for ask in asks]
    finally:
        conn.close()


def hybrid_check(machine: str, cfg: Config, project: str) -> Check | None:
    """How many indexed notes have sentence vectors (hybrid mode), when hybrid is the configured mode."""
    import sqlite3

    from agentmem.replica import cache
    from agentmem.search import index

    if cfg.search_mode != "hybrid":
        return None
    try:
        from agentmem.search import vectors

        vectors.require()
    except errors.AgentmemError as exc:
        return Check(f"hybrid {project}", FAILED, exc.one_line(), str(exc.hint or "install the hybrid extra"))
    path = index.index_path(cache.project_dir(machine, cfg.store, project))
    if not os.path.exists(path):
        return Check(f"hybrid {project}", OK, "no index yet", "the next search builds it")
    try:
        total, embedded = _read_only(path, "SELECT COUNT(*) FROM docs", "SELECT COUNT(DISTINCT num) FROM vectors")
    except sqlite3.DatabaseError as exc:
        return Check(f"hybrid {project}", WARNING, f"index unreadable ({exc})", "the next search rebuilds it")
    status = OK if embedded >= total else WARNING
    if status == OK:
        return Check(f"hybrid {project}", status, f"{embedded} of {total} note(s) embedded")
    return Check(f"hybrid {project}", status, f"{embedded} of {total} note(s) embedded (the rest are ranked by their "
                 "words alone)", "each hybrid search embeds a few; this embeds them all now",
                 Command("sync", "--embed", "--project", project))


def helper_check(machine: str, cfg: Config) -> Check:
    """The helper agents run (the command setup recorded) against the one the template installed into the
    machine folder's venv (`machine/helper_venv.py`: the package's own folder and a launcher, no
    dist-info) and the one running this check. Each warning's fix is the command that clears it."""
    from agentmem.paths import helper_command
    from agentmem.shell import join
    from agentmem.version import __version__

    answers = _answers(machine)
    where = f"template {answers['_commit']}" if answers.get("_commit") else "no template revision recorded"
    launcher = _launcher(machine)
    installed = _installed_version(machine) if os.path.isfile(launcher) else None
    venv_helper = [launcher] if installed is not None else None
    raw = (cfg.data.get("helper") or {}).get("command")
    recorded = [str(w) for w in raw] if isinstance(raw, list) and raw else None
    running = helper_command()
    runs_venv = venv_helper is not None and recorded is not None and _same(recorded, venv_helper)
    if recorded is None:
        return Check("helper", WARNING, f"agentmem {__version__}; setup has not recorded the helper agents run "
                     "([helper] command in config.toml)", "run setup", Command("setup", helper=venv_helper))
    if _same(recorded, [launcher]) and venv_helper is None:  # the launcher or the package it starts is gone
        reinstall = _reinstall(machine, answers)
        what = "is missing" if not os.path.isfile(launcher) else "has lost its package (agentmem/version.py)"
        return Check("helper", FAILED, f"the helper agents run, {launcher}, {what} ({where})",
                     "install it again from the template checkout" if reinstall else
                     "set this machine up again from the template (bootstrap.md)", reinstall)
    if os.path.isabs(recorded[0]) and not os.path.isfile(recorded[0]):
        return Check("helper", FAILED, f"the helper agents run, {join(recorded)}, is missing",
                     "let setup record " + ("the machine folder's helper" if venv_helper else "this helper"),
                     Command("setup", helper=venv_helper))
    if venv_helper is not None and not runs_venv:
        return Check("helper", WARNING, f"agents run {join(recorded)}, not the machine folder's helper {launcher} "
                     f"(agentmem {installed}, {where})", "let setup record the machine folder's helper",
                     Command("setup", helper=venv_helper))
    if runs_venv and installed != __version__:
        return Check("helper", WARNING, f"this is agentmem {__version__} ({join(running)}), but agents run the machine "
                     f"folder's helper, agentmem {installed} ({where})", "check with the helper agents run",
                     Command("doctor", helper=venv_helper))
    if runs_venv:
        return Check("helper", OK, f"agentmem {installed}: {launcher}, installed from {where}")
    return Check("helper", OK, f"agents run {join(recorded)} (no helper venv in the machine folder: "
                 f"set up without the template's installer); this is agentmem {__version__}")


def _same(command: list[str], other: list[str]) -> bool:
    """Do two helper commands name the same program (one word each, compared as real paths)?"""
    return len(command) == len(other) == 1 and os.path.realpath(command[0]) == os.path.realpath(other[0])


def _answers(machine: str) -> dict[str, str]:
    """The scalar answers Copier recorded in the machine folder (`_commit`, `_src_path`, `hybrid`...)."""
    import re

    try:
        with open(os.path.join(machine, ".copier-answers.yml"), encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return {}
    return {k: v.strip().strip("'\"") for k, v in re.findall(r"^([A-Za-z_]\w*):[ \t]*(\S.*)$", text, re.M)}


def _launcher(machine: str) -> str:
    """Where the installer puts the helper's launcher (helper_venv.launcher_path, without importing it)."""
    return os.path.join(machine, ".venv", *(("Scripts", "agentmem.cmd") if os.name == "nt" else ("bin", "agentmem")))


def _installed_version(machine: str) -> str | None:
    """The version of the package the template installed into the machine folder's venv (its `version.py`:
    the installer copies the package folder itself, so there is no dist-info), or None."""
    import glob
    import re

    found = (glob.glob(os.path.join(machine, ".venv", "lib", "python*", "site-packages", "agentmem", "version.py"))
             + glob.glob(os.path.join(machine, ".venv", "Lib", "site-packages", "agentmem", "version.py")))
    for path in found:
        try:
            with open(path, encoding="utf-8") as f:
                got = re.search(r"^__version__\s*=\s*[\"']([^\"']+)[\"']", f.read(), re.M)
        except OSError:
            continue
        if got:
            return got.group(1)
    return None


def _reinstall(machine: str, answers: dict[str, str]) -> Command | None:
    """The installer Copier's first task runs (`machine/helper_venv.py`), from the template checkout the
    machine folder records, when that checkout is on this machine; else None."""
    import sys

    src = answers.get("_src_path")
    if not src or not os.path.isfile(os.path.join(src, "agentmem", "machine", "helper_venv.py")):
        return None
    hybrid = "true" if answers.get("hybrid", "").lower() == "true" else "false"
    script = os.path.join(src, "agentmem", "machine", "helper_venv.py")
    return Command(os.path.abspath(machine), src, f"--hybrid={hybrid}", helper=[sys.executable, "-I", script])


def run(machine: str, cfg: Config, *, timeout: float | None = None,
        runtime_checks: list[Check] | None = None) -> list[Check]:
    """Every check, in the order a person fixes them: config, store, team, pending, index, helper, runtimes."""
    checks = [Check("config", OK, f"{config_path(machine)} ({cfg.store.label()})")]
    for line in getattr(cfg, "warnings", ()) or ():
        checks.append(Check("config", WARNING, line))
    projects = sorted(cfg.project_names())
    checks += store_checks(machine, cfg, projects, timeout)
    team = team_check(machine, cfg, timeout)
    if team is not None:
        checks.append(team)
    if cfg.store.kind == "bucket" and not cfg.author:  # the name a save stamps, asked again (issue X, item 5)
        from agentmem.memory.author import CHECK_SECONDS
        from agentmem.store import whoami

        whoami.refresh(machine, min(CHECK_SECONDS, timeout or CHECK_SECONDS))
    from agentmem.memory.team_writes import team_of

    checks.append(pending_check(machine, team=team_of(cfg)))  # an unusable [team]: the team check says why
    checks += purge_checks(machine, cfg, projects, timeout)
    for project in projects:
        checks.append(index_check(machine, cfg, project))
        hybrid = hybrid_check(machine, cfg, project)
        if hybrid is not None:
            checks.append(hybrid)
    checks.append(helper_check(machine, cfg))
    if runtime_checks is not None:
        checks += runtime_checks
    return checks


def broken(checks: list[Check]) -> bool:
    return any(c.status == FAILED for c in checks)
