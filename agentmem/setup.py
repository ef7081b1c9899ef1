"""Machine setup: what Copier's task runs, and what `agentmem setup` reruns at any time.

Every run checks real state and adds what is missing; there is no progress
ledger. Steps: store (auth, connect or create), config, core skill and managed
block per runtime, hooks (optional), shared skills, then the verification note.

INV setup-rerun: rerunning setup, whole or after an interruption, creates no
second store, note or skill copy, and changes nothing already in place.
"""

from __future__ import annotations

import re
import shlex
import socket
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from agentmem import blocks, coreskill
from agentmem.errors import AgentmemError, InvalidInput
from agentmem.runtimes import RUNTIME_NAMES, runtime
from agentmem.store import StoreDescription

BLOCK_SOURCE = "instructions-block.md"


@dataclass
class Step:
    name: str
    status: str  # ok | changed | skipped | warning | pending | failed
    detail: str = ""


@dataclass
class SetupReport:
    home: str
    outcome: str = "failed"  # confirmed | pending | failed
    steps: list[Step] = field(default_factory=list)
    exit_code: int = 1  # the exit status of the failure that stopped setup

    def add(self, name: str, status: str, detail: str = "") -> Step:
        step = Step(name, status, detail)
        self.steps.append(step)
        return step

    @property
    def warnings(self) -> list[Step]:
        return [s for s in self.steps if s.status in ("warning", "failed")]

    def to_dict(self) -> dict:
        return {"status": self.outcome, "home": self.home, "steps": [asdict(s) for s in self.steps]}

    def text(self) -> str:
        lines = [f"{s.name}: {s.status}" + (f" - {s.detail}" if s.detail else "") for s in self.steps]
        verdict = {
            "confirmed": "Setup verified: the note was saved, read back from the store and found by search.",
            "pending": "Setup incomplete: the verification note is saved on this machine only (upload pending).",
            "failed": "Setup FAILED: see the failed step above; fix it and run setup again.",
        }[self.outcome]
        return "\n".join([*lines, verdict])


def default_helper_command() -> list[str]:
    """The command that runs this very helper: the venv launcher when there is one."""
    launcher = Path(sys.prefix) / ("Scripts/agentmem.cmd" if sys.platform == "win32" else "bin/agentmem")
    if sys.prefix != sys.base_prefix and launcher.is_file():
        return [str(launcher)]
    return [sys.executable, "-m", "agentmem"]


def _store_step(report: SetupReport, desc: StoreDescription, env: dict | None) -> bool:
    """Authenticate and connect to (or create) the store. False when setup cannot go on."""
    if desc.kind == "folder":
        report.add("auth", "skipped", "folder store: no account needed")
        root = Path(desc.location)
        if root.is_dir():
            report.add("store", "ok", f"connected to folder {root}")
        elif root.exists():
            report.add("store", "failed", f"{root} exists and is not a folder")
            return False
        else:
            root.mkdir(parents=True)
            report.add("store", "changed", f"created folder {root}")
        return True
    try:
        from agentmem import provision  # issue B; imports huggingface_hub
    except ImportError:
        report.add("store", "failed", "this helper has no bucket support (agentmem.provision is missing)")
        return False
    try:
        outcome = provision.ensure_bucket(desc.location)
    except AgentmemError as exc:
        report.add("store", "failed", f"{exc.kind}: {exc.one_line()}")
        report.exit_code = exc.exit_code
        return False
    report.add("auth", "ok", getattr(outcome, "user", "") or "authenticated")
    created = bool(getattr(outcome, "created", False))
    report.add("store", "changed" if created else "ok", f"{'created' if created else 'connected to'} private bucket {desc.location}")
    return True


def _runtime_steps(report: SetupReport, home: Path, names: list[str], helper: str, env, replace: bool) -> None:
    files = coreskill.render_files(coreskill.skill_source(home), helper)
    block_body = (home / BLOCK_SOURCE).read_text("utf-8").replace(coreskill.HELPER_TOKEN, helper)
    for name in names:
        rt = runtime(name, env)
        result = coreskill.install_core_skill(files, rt.skills_root / coreskill.CORE_SKILL, home, name, replace=replace)
        status = {"installed": "changed", "updated": "changed", "unchanged": "ok"}.get(result.status, "warning")
        report.add(f"skill {name}", status, result.detail or f"{result.status}: {result.path}")
        try:
            changed = blocks.apply_block(rt.instructions, block_body)
        except InvalidInput as exc:
            report.add(f"instructions {name}", "warning", exc.one_line())
            continue
        report.add(f"instructions {name}", "changed" if changed else "ok", str(rt.instructions))


def _hooks_step(report: SetupReport, home: Path, enabled: bool, names: list[str], helper_cmd: list[str], env) -> None:
    try:
        from agentmem import hooks  # issue E
    except ImportError:
        if enabled:
            report.add("hooks", "warning", "hooks were asked for, but this helper has no hook support yet")
        return
    try:
        if enabled:
            detail = hooks.install_for_setup(home, names, helper_cmd, env=env)
            report.add("hooks", "changed", detail or "installed")
        else:
            hooks.remove_for_setup(home, names, env=env)
    except AgentmemError as exc:
        report.add("hooks", "warning", exc.one_line())


def _shared_skill_steps(report: SetupReport, home: Path, wanted: list[str], env) -> None:
    if not wanted:
        return
    try:
        from agentmem import skills  # issue D
    except ImportError:
        report.add("shared skills", "warning", "this helper cannot install shared skills yet")
        return
    for item in wanted:
        name, _, revision = str(item).partition("@")
        try:
            detail = skills.install_for_setup(home, name, revision, env=env)
            report.add(f"shared skill {item}", "ok", detail or "installed")
        except AgentmemError as exc:
            report.add(f"shared skill {item}", "warning", exc.one_line())


def run_setup(home: Path, *, env: dict | None = None, replace_core_skill: bool = False,
              helper_command: list[str] | None = None) -> SetupReport:
    """Bring this machine folder's setup to the state its config describes, and verify the store."""
    from agentmem import config, setup_config, verify

    home = Path(home).expanduser().resolve()
    report = SetupReport(str(home))
    cfg = config.require(home)
    desc = cfg.store
    names = [n for n in setup_config.runtime_names(cfg) if n in RUNTIME_NAMES]
    helper_cmd = helper_command or default_helper_command()
    helper = shlex.join(helper_cmd)

    if not _store_step(report, desc, env):
        return report
    agent = setup_config.agent_name(cfg) or default_agent(names)
    changed = setup_config.complete(home, cfg, agent=agent, helper_command=helper_cmd)
    report.add("config", "changed" if changed else "ok", f"{home / 'config.toml'} (helper: {helper})")
    _runtime_steps(report, home, names, helper, env, replace_core_skill)
    _hooks_step(report, home, setup_config.hooks_enabled(cfg), names, helper_cmd, env)
    _shared_skill_steps(report, home, setup_config.shared_skills(cfg), env)
    report.outcome = verify.verification_step(report, home, env)
    return report


def default_agent(runtime_names: list[str]) -> str:
    """`<first runtime>@<short host name>`, cut to a valid agent name."""
    host = re.sub(r"[^A-Za-z0-9._-]+", "-", socket.gethostname().split(".")[0]).strip("-.") or "host"
    return f"{(runtime_names or ['agent'])[0]}@{host}"[:64]
