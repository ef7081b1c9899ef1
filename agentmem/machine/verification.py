"""Setup's verification: the installed skill is usable, and the store saves, reads back and finds.

`verify` saves one note, reads it back from the store and finds it by search
(also `agentmem bucket verify`); `verification_step` turns that and the skill
check into setup report steps.

The note's ID is stable for a (store, project, machine) triple, so a rerun of
setup finds the note it saved before instead of adding another one. A note
whose upload did not go through stays pending and is retried with its
original bytes (INV same-bytes-retry).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from agentmem import errors
from agentmem.machine.runtimes import CORE_SKILL, enabled_names, runtime
from agentmem.store.base import StoreDescription

TITLE = "Memory setup verification"


def setup_note_id(machine: Path, store: StoreDescription, project: str) -> str:
    """`setup-verification-<12 hex>` from the store, project and machine folder."""
    key = f"{store.kind}:{store.location}|{project}|{Path(machine).expanduser().resolve()}"
    return "setup-verification-" + hashlib.sha256(key.encode()).hexdigest()[:12]


@dataclass
class Verification:
    id: str
    path: str
    upload: str  # "saved" | "already-saved" | "pending"
    read_back: bool
    found_by_search: bool
    problem: str | None = None

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
            "problem": self.problem,
        }


def verify(machine: Path, store_desc: StoreDescription, project: str, agent: str, *,
           timeout: float | None = None) -> Verification:
    """Save (once), read back bypassing the cache, and search for the setup note."""
    from agentmem.memory import cache, notes, pending
    from agentmem.search import find
    from agentmem.store.base import open_store

    note_id = setup_note_id(machine, store_desc, project)
    path = notes.note_path(project, note_id)
    store = open_store(store_desc, timeout=timeout)

    def left() -> float | None:  # the upload shares this invocation's one network budget
        budget = getattr(store, "budget", None)
        return timeout if budget is None else max(0.1, budget.remaining())

    upload = "already-saved"
    try:
        entry, data = pending.load(machine, note_id)
        outcome = pending.deliver(machine, entry, data, timeout=left())
        upload = "saved" if outcome.status == "saved" else "pending"
    except errors.NotFound:
        if store.info(path) is None:
            note = notes.build(
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
            entry = pending.Entry(id=note_id, store=store_desc, project=project, path=path, created=note.created)
            pending.persist(machine, entry, data)  # INV nothing-lost
            outcome = pending.deliver(machine, entry, data, timeout=left())
            upload = "saved" if outcome.status == "saved" else "pending"
    if upload == "pending":
        from agentmem.launch import shell_line

        return Verification(note_id, path, upload, False, False, "the upload is pending; retry with "
                            f"`{shell_line('save', '--retry', note_id)}`")

    parsed = notes.parse(store.get(path))  # straight from the store, not the cache; failures raise as what they are
    read_back = parsed.title == TITLE

    status = cache.refresh(machine, store_desc, project, store=store)
    found = any(r.id == note_id for r in find.literal(find.candidates(machine, store_desc, project), TITLE, 200))
    problem = None if found else (status.reason or "search did not find the setup note")
    return Verification(note_id, path, upload, read_back, found, problem)


def _check_skills(report, cfg_data: dict, env) -> None:
    """The installed core skill has its entry point and the checkpoint outline an agent follows."""
    for name in enabled_names(cfg_data):
        skill = runtime(name, env).skills_root / CORE_SKILL
        entry = skill / "SKILL.md"
        text = entry.read_text("utf-8") if entry.is_file() else ""
        if f"name: {CORE_SKILL}" not in text or not (skill / "references" / "checkpoint.md").is_file():
            report.add(f"skill check {name}", "warning", f"{skill} lacks SKILL.md or references/checkpoint.md")


def verification_step(report, machine: Path, env=None) -> str:
    """Add the verification steps to `report`; return confirmed | pending | failed."""
    from agentmem import config

    cfg = config.require(machine)
    projects = list(cfg.projects.values())
    if not projects:
        report.add("verify", "failed", "no project is mapped in config.toml ([projects])")
        return "failed"
    _check_skills(report, cfg.data, env)
    project = config.check_project_name(projects[0])
    try:
        result = verify(machine, cfg.store, project, cfg.agent, timeout=cfg.network_timeout)
    except errors.AgentmemError as exc:
        report.add("verify", "failed", f"{exc.kind}: {exc.one_line()}")
        report.exit_code = exc.exit_code
        return "failed"
    if result.upload == "pending":
        report.add("verify save", "pending", f"note {result.id} kept on this machine: {result.problem}")
        return "pending"
    report.add("verify save", "ok", f"note {result.id} in project {project} ({result.upload})")
    if not result.read_back:
        report.add("verify read", "failed", f"the store holds something else at {result.path}")
        return "failed"
    report.add("verify read", "ok", "read back from the store, bypassing the cache")
    if not result.found_by_search:
        report.add("verify search", "failed", result.problem or "search did not find the note")
        return "failed"
    report.add("verify search", "ok", f"search for {TITLE!r} found it")
    return "confirmed"
