"""Setup's verification: the installed skill is usable, and the store saves, reads back and finds.

`verify` saves one note, reads it back from the store and finds it by search
(also `agentmem bucket verify`); `verification_step` turns that and the skill
check into setup report steps.

Setup must prove that *this* machine wrote: two hosts can share the machine
folder path, store and project (the same user name on both), so a note found
under a predictable ID proves nothing. Each machine's note gets a fresh random
ID below a stable prefix (`setup-verification-<12 hex of store, project,
machine folder>-<random>`), and the machine records the ID and the SHA-256 of
the bytes it wrote in `setup-verification.json` (machine data, never in git).
A rerun finds that record and reads those very bytes back (INV setup-rerun);
a record whose note is gone, or no record at all, means a new note. A pending
setup note below the prefix (an interrupted run) is resumed with its original
bytes (INV same-bytes-retry). A note an earlier agentmem saved under the bare
prefix is adopted only when this machine's cache holds the same bytes.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from agentmem import errors
from agentmem.paths import SETUP_VERIFICATION_FILE
from agentmem.runtimes.registry import configured
from agentmem.skills.spec import CORE_SKILL
from agentmem.status import FAILED, OK, PENDING, WARNING
from agentmem.store.base import StoreDescription

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Mapping

    from agentmem.machine.setup_report import SetupReport

TITLE = "Memory setup verification"
RECORD = SETUP_VERIFICATION_FILE  # in the machine folder: {"<store>|<project>": {"id", "sha256"}}


def setup_note_prefix(machine: Path, store: StoreDescription, project: str) -> str:
    """`setup-verification-<12 hex>` from the store, project and machine folder: what every setup
    note of this triple starts with (and the whole ID an earlier agentmem used)."""
    key = f"{store.kind}:{store.location}|{project}|{Path(machine).expanduser().resolve()}"
    from agentmem.note.ids import SETUP_PREFIX

    return SETUP_PREFIX + hashlib.sha256(key.encode()).hexdigest()[:12]


def _new_id(prefix: str) -> str:
    from agentmem.note.ids import new_id

    return f"{prefix}-{new_id().rsplit('-', 1)[1]}"  # the 8 random base32 characters of a note ID


def _record_key(store: StoreDescription, project: str) -> str:
    return f"{store.kind}:{store.location}|{project}"


def _load_record(machine: Path) -> dict:
    try:
        data = json.loads((Path(machine) / RECORD).read_bytes())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _remember(machine: Path, store: StoreDescription, project: str, note_id: str, data: bytes) -> None:
    from agentmem.fsutil import write_atomic

    record = _load_record(machine)
    record[_record_key(store, project)] = {"id": note_id, "sha256": hashlib.sha256(data).hexdigest()}
    write_atomic(Path(machine) / RECORD, (json.dumps(record, indent=2, sort_keys=True) + "\n").encode())


def _ours(machine: Path, store_desc: StoreDescription, project: str, prefix: str) -> tuple[str, str] | None:
    """(note ID, SHA-256) of the setup note this machine wrote, from its record; else a note an
    earlier agentmem saved under the bare prefix, if this machine's cache holds it."""
    from agentmem.replica import cache

    mine = _load_record(machine).get(_record_key(store_desc, project))
    if isinstance(mine, dict) and isinstance(mine.get("id"), str) and isinstance(mine.get("sha256"), str) \
            and mine["id"].startswith(prefix):
        return mine["id"], mine["sha256"]
    cached = cache.read_cached(machine, store_desc, project, prefix)
    return (prefix, hashlib.sha256(cached).hexdigest()) if cached is not None else None


@dataclass
class Verification:
    id: str
    path: str
    upload: str  # "saved" | "already-saved" | "pending"
    read_back: bool
    found_by_search: bool
    problem: str | errors.NextStep | None = None  # a step with the command to run, spelt for the CLI in to_json

    @property
    def ok(self) -> bool:
        return self.upload != "pending" and self.read_back and self.found_by_search

    def to_json(self) -> dict:
        return {
            "status": "ok" if self.ok else ("pending" if self.upload == "pending" else "failed"),
            "id": self.id,
            "path": self.path,
            "upload": self.upload,
            "read_back": self.read_back,
            "found_by_search": self.found_by_search,
            "problem": None if self.problem is None else str(self.problem),
        }


def verify(machine: Path, store_desc: StoreDescription, project: str, agent: str, *,
           timeout: float | None = None) -> Verification:
    """Save (once per machine), read back bypassing the cache, and search for the setup note."""
    from agentmem.note import document
    from agentmem.replica import cache
    from agentmem.search import find, follow
    from agentmem.store.opening import open_store
    from agentmem.uploads import delivery, pending

    prefix = setup_note_prefix(machine, store_desc, project)
    store = open_store(store_desc, timeout=timeout)

    def left() -> float | None:  # the upload shares this invocation's one network budget
        budget = getattr(store, "budget", None)
        return timeout if budget is None else max(0.1, budget.remaining())

    waiting = [e for e in pending.list_entries(machine)
               if e.store == store_desc and (e.id == prefix or e.id.startswith(prefix + "-"))]
    mine = _ours(machine, store_desc, project, prefix)
    if waiting:  # an interrupted run: the same ID and bytes (INV same-bytes-retry)
        entry = waiting[0]
        note_id, data = entry.id, pending.load(machine, entry.id)[1]
        _remember(machine, store_desc, project, note_id, data)
        outcome = delivery.deliver(machine, entry, data, timeout=left(), index=follow.update)
        upload = "saved" if outcome.status == "saved" else "pending"
        wanted = hashlib.sha256(data).hexdigest()
    elif mine is not None and store.info(document.note_path(project, mine[0])) is not None:
        note_id, wanted, upload = mine[0], mine[1], "already-saved"
    else:
        note_id = _new_id(prefix)
        # Asked first, so an unreachable store fails as what it is (offline, no access) before anything is written.
        if store.info(document.note_path(project, note_id)) is not None:
            raise errors.Conflict(f"a setup note {note_id} is already in the store")
        note = document.build(
            body=f"# {TITLE}\n\nSaved by agentmem setup to check that this machine can save, "
            "read back and search shared memory.\n",
            title=TITLE,
            kind="note",
            project=project,
            agent=agent,
            tags=["agentmem-setup"],
            note_id=note_id,
        )
        data = note.render()
        entry = pending.Entry(id=note_id, store=store_desc, project=project, path=document.note_path(project, note_id),
                              created=note.created)
        pending.persist(machine, entry, data)  # INV nothing-lost
        _remember(machine, store_desc, project, note_id, data)
        outcome = delivery.deliver(machine, entry, data, timeout=left(), index=follow.update)
        upload = "saved" if outcome.status == "saved" else "pending"
        wanted = hashlib.sha256(data).hexdigest()
    path = document.note_path(project, note_id)
    if upload == "pending":
        return Verification(note_id, path, upload, False, False,
                            errors.NextStep("the upload is pending; retry with `{}`",
                                            errors.Command("save", "--retry", note_id)))

    raw = store.get(path)  # straight from the store, not the cache; failures raise as what they are
    read_back = document.parse(raw).title == TITLE and hashlib.sha256(raw).hexdigest() == wanted

    # A search's refresh: a store this machine is joining is caught up by setup's next step, with progress
    status = cache.refresh(machine, store_desc, project, store=store, index=follow.update,
                           catch_up=cache.SEARCH_CATCH_UP)
    found = any(r.id == note_id for r in find.literal(find.candidates(machine, store_desc, project), TITLE, 200))
    problem = None if found else (status.reason or "search did not find the setup note")
    if not read_back:
        problem = f"the store holds other bytes than this machine wrote at {path}"
    return Verification(note_id, path, upload, read_back, found, problem)


def _check_skills(report: SetupReport, cfg_data: dict, env: Mapping[str, str] | None) -> None:
    """The installed core skill has its entry point and the checkpoint outline an agent follows."""
    for rt in configured(cfg_data, env):
        if rt.skills_root is None:
            continue  # a CLI that reads no skill folder
        name, skill = rt.name, rt.skills_root / CORE_SKILL
        entry = skill / "SKILL.md"
        text = entry.read_text("utf-8") if entry.is_file() else ""
        if f"name: {CORE_SKILL}" not in text or not (skill / "references" / "checkpoint.md").is_file():
            report.add(f"skill check {name}", WARNING, f"{skill} lacks SKILL.md or references/checkpoint.md")


def verification_step(report: SetupReport, machine: Path, env: Mapping[str, str] | None = None) -> str:
    """Add the verification steps to `report`; return confirmed | pending | failed."""
    from agentmem import config

    cfg = config.require(machine)
    projects = list(cfg.projects.values())
    if not projects:
        report.add("verify", FAILED, "no project is mapped in config.toml ([projects])")
        return "failed"
    _check_skills(report, cfg.data, env)
    project = config.check_project_name(projects[0])
    try:
        result = verify(machine, cfg.store, project, cfg.agent, timeout=cfg.network_timeout)
    except errors.AgentmemError as exc:
        report.add("verify", FAILED, f"{exc.kind}: {exc.one_line()}")
        report.exit_code = exc.exit_code
        return "failed"
    if result.upload == "pending":
        report.add("verify save", PENDING, f"note {result.id} kept on this machine: {result.problem}")
        return "pending"
    report.add("verify save", OK, f"note {result.id} in project {project} ({result.upload})")
    if not result.read_back:
        report.add("verify read", FAILED, f"the store holds something else at {result.path}")
        return "failed"
    report.add("verify read", OK, "read back from the store, bypassing the cache")
    if not result.found_by_search:
        report.add("verify search", FAILED, str(result.problem or "search did not find the note"))
        return "failed"
    report.add("verify search", OK, f"search for {TITLE!r} found it")
    return "confirmed"
