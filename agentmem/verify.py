"""The verification steps of setup: the installed skill is usable, and the store saves, reads and finds.

The store part is issue B's `verification.verify` (a note under a stable,
setup-specific ID, read back bypassing the cache, found by search); this module
turns its result into setup report steps.
"""

from __future__ import annotations

from pathlib import Path

from agentmem import errors
from agentmem.runtimes import CORE_SKILL, runtime


def _check_skills(report, cfg_data: dict, env) -> None:
    """The installed core skill has its entry point and the checkpoint outline an agent follows."""
    for name in (cfg_data.get("runtimes") or {}).get("enabled") or []:
        try:
            skill = runtime(name, env).skills_root / CORE_SKILL
        except ValueError:
            continue
        entry = skill / "SKILL.md"
        text = entry.read_text("utf-8") if entry.is_file() else ""
        if f"name: {CORE_SKILL}" not in text or not (skill / "references" / "checkpoint.md").is_file():
            report.add(f"skill check {name}", "warning", f"{skill} lacks SKILL.md or references/checkpoint.md")


def verification_step(report, home: Path, env=None) -> str:
    """Add the verification steps to `report`; return confirmed | pending | failed."""
    from agentmem import config, verification

    cfg = config.require(home)
    projects = list(cfg.projects.values())
    if not projects:
        report.add("verify", "failed", "no project is mapped in config.toml ([projects])")
        return "failed"
    _check_skills(report, cfg.data, env)
    project = config.check_project_name(projects[0])
    try:
        result = verification.verify(home, cfg.store, project, cfg.agent, timeout=cfg.network_timeout)
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
    report.add("verify search", "ok", f"search for {verification.TITLE!r} found it")
    return "confirmed"
