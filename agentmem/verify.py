"""The setup verification: save a note, read it back from the store, find it by search.

The note's ID is derived from the machine folder, store and agent, so a rerun
(or a resumed interrupted setup) finds the same note instead of adding one.
"""

from __future__ import annotations

import hashlib
import socket
from pathlib import Path

from agentmem import errors
from agentmem.runtimes import CORE_SKILL, runtime
from agentmem.store.base import StoreDescription

TITLE = "Memory setup verification"


def verification_id(home: Path, desc: StoreDescription, agent: str) -> str:
    digest = hashlib.sha256(f"{home}\0{desc.kind}:{desc.location}\0{agent}".encode()).hexdigest()[:16]
    return f"setup-verification-{digest}"


def _body(home: Path, desc: StoreDescription, agent: str) -> str:
    return (
        f"Setup of agent `{agent}` on host `{socket.gethostname()}` saved this note to {desc.label()}, "
        f"read it back from the store and found it by search.\n\n"
        f"Machine folder: `{home}`. Rerunning setup reuses this note; it holds no project knowledge.\n"
    )


def _save(home: Path, cfg, project: str, note_id: str, agent: str):
    """Deliver the verification note, reusing a pending copy or the stored one. Returns (status, bytes, error)."""
    from agentmem import notes, pending
    from agentmem.store import open_store

    desc, timeout = cfg.store, cfg.network_timeout
    try:
        entry, data = pending.load(home, note_id)
    except errors.NotFound:
        path = notes.note_path(project, note_id)
        store = open_store(desc, timeout=timeout)
        if store.info(path) is not None:
            return "saved", store.get(path), None
        note = notes.build(body=_body(home, desc, agent), title=TITLE, kind="note", project=project,
                           agent=agent, tags=["setup"], note_id=note_id)
        data = note.render()
        entry = pending.Entry(id=note_id, store=desc, project=project, path=path, created=note.created)
        pending.persist(home, entry, data)  # INV nothing-lost
    outcome = pending.deliver(home, entry, data, timeout=timeout)
    return outcome.status, data, outcome.error


def _check_skills(report, cfg_data: dict, env) -> None:
    names = (cfg_data.get("runtimes") or {}).get("enabled") or []
    for name in names:
        skill = runtime(name, env).skills_root / CORE_SKILL
        text = (skill / "SKILL.md").read_text("utf-8") if (skill / "SKILL.md").is_file() else ""
        outline = skill / "references" / "checkpoint.md"
        if f"name: {CORE_SKILL}" in text and outline.is_file():
            continue
        report.add(f"skill check {name}", "warning", f"{skill} lacks SKILL.md or references/checkpoint.md")


def verification_step(report, home: Path, env=None) -> str:
    """Add the verification steps to `report`; return confirmed | pending | failed."""
    from agentmem import cache, config, notes, search
    from agentmem.store import open_store

    cfg = config.require(home)
    projects = list(cfg.projects.values())
    if not projects:
        report.add("verify", "failed", "no project is mapped in config.toml ([projects])")
        return "failed"
    project, agent = config.check_project_name(projects[0]), cfg.agent
    note_id = verification_id(home, cfg.store, agent)
    _check_skills(report, cfg.data, env)
    try:
        status, data, error = _save(home, cfg, project, note_id, agent)
    except errors.AgentmemError as exc:
        report.add("verify save", "failed", f"{exc.kind}: {exc.one_line()}")
        report.exit_code = exc.exit_code
        return "failed"
    if status != "saved":
        why = error.one_line() if error else "outcome unknown"
        report.add("verify save", "pending", f"note {note_id} kept on this machine ({why}); "
                   "rerun setup or `agentmem save --retry " + note_id + "`")
        return "pending"
    report.add("verify save", "ok", f"note {note_id} in project {project}")
    try:
        fresh = open_store(cfg.store, timeout=cfg.network_timeout).get(notes.note_path(project, note_id))
    except errors.AgentmemError as exc:
        report.add("verify read", "failed", f"{exc.kind}: {exc.one_line()}")
        report.exit_code = exc.exit_code
        return "failed"
    if fresh != data:
        report.add("verify read", "failed", f"the store holds different bytes for {note_id}")
        return "failed"
    report.add("verify read", "ok", "read back from the store, bypassing the cache")
    status_ = cache.refresh(home, cfg.store, project, timeout=cfg.network_timeout)
    hits = search.literal(search.candidates(home, cfg.store, project), TITLE, 200)
    if status_.stale or not any(r.id == note_id and not r.pending for r in hits):
        reason = status_.reason or "the note was not among the results"
        report.add("verify search", "failed", f"search did not find {note_id}: {reason}")
        return "failed"
    report.add("verify search", "ok", f"search for {TITLE!r} found it")
    return "confirmed"
