"""Machine setup: what Copier's task runs, and what `agentmem setup` reruns at any time.

Every run checks real state and adds what is missing; there is no progress
ledger. Steps: store (auth, connect or create), config, core skill and managed
block per runtime, hooks (optional), the MCP server's registration (optional), shared skills,
then the verification note.

INV setup-rerun: rerunning setup, whole or after an interruption, creates no
second store, note or skill copy, and changes nothing already in place.
"""

from __future__ import annotations

import re
import shlex
import socket
from dataclasses import asdict, dataclass, field
from pathlib import Path

from agentmem.errors import EXIT_UNEXPECTED, AgentmemError, Command, InvalidInput, NotConfigured
from agentmem.machine import blocks, core_skill
from agentmem.machine.reach import store_reach
from agentmem.machine.runtimes import RUNTIME_NAMES, enabled_names, listed_names, runtime
from agentmem.paths import helper_command

BLOCK_SOURCE = "instructions-block.md"


@dataclass
class Step:
    name: str
    status: str  # ok | changed | skipped | warning | pending | failed
    detail: str = ""


@dataclass
class SetupReport:
    machine: str
    outcome: str = "failed"  # confirmed | pending | failed
    steps: list[Step] = field(default_factory=list)
    exit_code: int = EXIT_UNEXPECTED  # the exit status of the failure that stopped setup
    store: dict | None = None  # which store was chosen and who can reach it (store_reach)
    helper: list[str] | None = None  # the helper command setup records, which the report's commands name

    def add(self, name: str, status: str, detail: str = "") -> Step:
        step = Step(name, status, detail)
        self.steps.append(step)
        return step

    def to_dict(self) -> dict:
        out: dict = {"status": self.outcome, "home": self.machine, "steps": [asdict(s) for s in self.steps]}
        if self.store is not None:
            out["store"] = self.store
        return out

    def text(self) -> str:
        lines = [f"{s.name}: {s.status}" + (f" - {s.detail}" if s.detail else "") for s in self.steps]
        if self.store is not None:
            lines.append(f"Store: {self.store['summary']}")
        rerun = Command("setup", helper=self.helper).line()
        verdict = {
            "confirmed": "Setup verified: the note was saved, read back from the store and found by search.",
            "pending": "Setup incomplete: the verification note is saved on this machine only (upload pending); "
                       f"run `{rerun}` again once the store is reachable.",
            "failed": f"Setup FAILED: see the failed step above; fix its cause, then run `{rerun}` "
                      "(it resumes; nothing is duplicated).",
        }[self.outcome]
        warned = [s.name for s in self.steps if s.status == "warning"]
        if warned:
            verdict += f" Needs attention: {', '.join(warned)} (see above)."
        return "\n".join([*lines, verdict])


def default_helper_command() -> list[str]:
    """The command that runs this very helper: the installed launcher when it started us."""
    return helper_command()


def _store_step(report: SetupReport, machine: Path, cfg, timeout: float, new_store: bool = False) -> bool:
    """Authenticate and connect to (or create) the store, and record its identity. False when setup cannot go on.

    INV store-identity: a folder store is created only on this machine's first setup for
    it, or with `new_store`; a store this machine knew is never replaced by another one at
    its location unless `new_store` says so.
    """
    raw = cfg.data.get("store") or {}
    if raw.get("kind") == "bucket":
        return _bucket_step(report, machine, str(raw.get("location") or ""), timeout, new_store)
    report.add("auth", "skipped", "folder store: no account needed")
    try:
        step = _folder_store(machine, cfg.store, new_store)
    except AgentmemError as exc:
        report.add("store", "failed", exc.one_line())
        report.exit_code = exc.exit_code
        return False
    report.add("store", *step)
    return True


def _folder_store(machine: Path, desc, new_store: bool) -> tuple[str, str]:
    """Connect to, mark or create the folder store; (status, detail) for the report."""
    import os

    from agentmem.errors import Offline
    from agentmem.store import folder, identity

    root, known = desc.location, identity.recorded(machine, desc)
    if not os.path.lexists(root):
        if not new_store and identity.has_trace(machine, desc):
            raise Offline(f"folder store {root} is not there (an unmounted drive or a moved folder?); "
                          "this machine used a store there before, so no new one was created",
                          hint=folder.new_store_hint())
        _accept(machine, desc, folder.create_store(root))
        return "changed", f"created folder store {root}"
    if not os.path.isdir(root):
        raise InvalidInput(f"{root} exists and is not a folder")
    found = folder.read_marker(root)
    if found is not None and known is not None and found != known and not new_store:
        raise Offline(f"folder store {root} is another store than the one this machine used (marker "
                      f"{found[:12]}, expected {known[:12]})", hint=folder.new_store_hint())
    if found is None:
        if known is not None and not new_store:
            raise Offline(f"folder store {root} has no {folder.MARKER} marker any more: the folder was replaced "
                          "or is not the store this machine used", hint=folder.new_store_hint())
        _accept(machine, desc, folder.write_marker(root))
        return "changed", f"connected to folder {root} and marked it as an agentmem store ({folder.MARKER})"
    _accept(machine, desc, found)
    return "ok", f"connected to folder {root}"


def _accept(machine: Path, desc, found: str) -> None:
    """Record `found` as the store at `desc`. INV store-identity: when that is another store than the
    one recorded, what the cache knew of the old one's changes goes, so the next search lists the new
    one whole and prunes the old one's notes."""
    from agentmem.memory import cache
    from agentmem.store import identity

    if identity.recorded(machine, desc) != found:
        cache.forget_changes(machine, desc)
    identity.record(machine, desc, found)


def _bucket_step(report: SetupReport, machine: Path, bucket_id: str, timeout: float, new_store: bool = False) -> bool:
    """Connect to the configured bucket; with none configured, create or reuse `<user>/agent-memory`."""
    from agentmem.machine import provision  # imports huggingface_hub
    from agentmem.store import identity
    from agentmem.store.base import StoreDescription
    from agentmem.store.bucket import BucketStore

    try:
        if bucket_id:
            done = provision.connect(bucket_id, timeout=timeout)
        else:
            done = provision.create(None, timeout=timeout)
            provision.save_to_config(machine, done.bucket_id)
        desc = StoreDescription("bucket", done.bucket_id)
        store = BucketStore(done.bucket_id, timeout=timeout,
                            identity=None if new_store else identity.recorded(machine, desc))
        store.verify()  # INV store-identity: a bucket deleted and created again is not the one this machine knew
        if store.identity is not None:
            _accept(machine, desc, store.identity)
    except AgentmemError as exc:
        report.add("auth" if exc.kind == "not-authenticated" else "store", "failed", exc.one_line())
        report.exit_code = exc.exit_code
        return False
    report.add("auth", "ok", f"Hugging Face user {done.user}")
    report.add("store", "changed" if done.action == "created" else "ok", done.text())
    return True


def _runtime_steps(report: SetupReport, machine: Path, names: list[str], helper_cmd: list[str], store, env,
                   replace: bool) -> None:
    helper = shlex.join(helper_cmd)
    files = core_skill.render_files(core_skill.skill_source(machine), helper)
    block_body = (machine / BLOCK_SOURCE).read_text("utf-8").replace(core_skill.HELPER_TOKEN, helper)
    for name in names:
        rt = runtime(name, env)
        dest = rt.skills_root / core_skill.CORE_SKILL
        try:
            result = core_skill.install_core_skill(files, dest, machine, name, replace=replace)
        except AgentmemError as exc:  # a dangling link or a read-only folder (INV user-files)
            report.add(f"skill {name}", "warning", exc.one_line())
        else:
            status = {"installed": "changed", "updated": "changed", "unchanged": "ok"}.get(result.status, "warning")
            report.add(f"skill {name}", status, result.detail or f"{result.status}: {result.path}")
        agents_md_existed = rt.instructions.exists()
        try:
            changed = blocks.apply_block(rt.instructions, block_body)
        except AgentmemError as exc:  # malformed markers, a dangling link, a read-only file
            report.add(f"instructions {name}", "warning", exc.one_line())
            continue
        report.add(f"instructions {name}", "changed" if changed else "ok", str(rt.instructions))
        if name == "opencode":
            _opencode_claude_md_step(report, machine, env, agents_md_existed)
        _permissions_step(report, machine, name, helper_cmd, store, env)
    for name in RUNTIME_NAMES:
        if name not in names:
            _withdraw_permissions(report, machine, name, env)


def _permissions_step(report: SetupReport, machine: Path, name: str, helper_cmd: list[str], store, env) -> None:
    """Let the runtime run the helper in its default permission mode (machine/permissions.py)."""
    from agentmem.machine import permissions

    try:
        changed, detail = permissions.apply(machine, name, helper_cmd, store, env)
    except AgentmemError as exc:
        report.add(f"permissions {name}", "warning", exc.one_line())
        return
    status = "changed" if changed else ("skipped" if name in ("opencode", "copilot") else "ok")
    report.add(f"permissions {name}", status, detail)


def _withdraw_permissions(report: SetupReport, machine: Path, name: str, env) -> None:
    """A runtime no longer enabled: take back the permission entries setup added for it."""
    from agentmem.machine import permissions

    try:
        if permissions.withdraw(machine, name, env):
            report.add(f"permissions {name}", "changed", "removed the entries agentmem had added (runtime disabled)")
    except AgentmemError as exc:
        report.add(f"permissions {name}", "warning", exc.one_line())


def _opencode_claude_md_step(report: SetupReport, machine: Path, env, agents_md_existed: bool) -> None:
    from agentmem.machine import permissions

    try:
        outcome = permissions.opencode_keeps_claude_md(machine, env, agents_md_existed=agents_md_existed)
    except AgentmemError as exc:
        report.add("instructions opencode: CLAUDE.md", "warning", exc.one_line())
        return
    if outcome is not None:
        report.add("instructions opencode: CLAUDE.md", *outcome)


def _managed_entries(report: SetupReport, label: str, names: list[str], wanted, apply, note=lambda name: "") -> None:
    """Put our entries in for each runtime in `names` that `wanted` names, take them out for the others,
    and report each runtime where they are wanted or something changed (`note` adds to a wanted one)."""
    for name in names:
        on = wanted(name)
        try:
            change = apply(name, on)
        except AgentmemError as exc:
            report.add(f"{label} {name}", "warning", exc.one_line())
            continue
        if on or change.changed:
            report.add(f"{label} {name}", "changed" if change.changed else "ok",
                       f"{change.detail}: {change.path}{note(name) if on else ''}")


def _hooks_step(report: SetupReport, machine: Path, wanted: set[str], names: list[str], helper_cmd: list[str],
                env) -> None:
    """Install our hooks for the runtimes in `wanted`, and take out any we installed before elsewhere."""
    from agentmem.hooks import codex_trust, runtime_hooks

    def apply(name: str, on: bool):
        return runtime_hooks.install(machine, name, helper_cmd, env) if on else runtime_hooks.remove(machine, name, env)

    _managed_entries(report, "hooks", names, lambda name: name in wanted, apply,
                     note=lambda name: f" {codex_trust.trust_hint(helper_cmd)}" if name == "codex" else "")
    for name in RUNTIME_NAMES:  # a runtime no longer enabled keeps no hook of ours
        if name in names:
            continue
        try:
            change = runtime_hooks.remove(machine, name, env)
        except AgentmemError:
            continue  # a file of a runtime this machine does not use: not ours to report on
        if change.changed:
            report.add(f"hooks {name}", "changed", f"{change.detail} (runtime disabled): {change.path}")


def _mcp_step(report: SetupReport, machine: Path, enabled: bool, names: list[str], helper_cmd: list[str],
              env) -> None:
    """Register our MCP server with the runtimes that take one when asked, else take out any we registered."""
    from agentmem.mcp import registration

    def apply(name: str, on: bool):
        if on:
            return registration.register(machine, name, helper_cmd, env)
        return registration.unregister(machine, name, env)

    _managed_entries(report, "mcp", [n for n in names if n in registration.RUNTIMES], lambda name: enabled, apply)
    if enabled:
        from agentmem.mcp import extra

        problem = extra.problem()
        if problem is not None:
            report.add("mcp server", "warning", f"{problem}; add it with: {extra.install_command(str(machine))}")


def _shared_skill_steps(report: SetupReport, machine: Path, cfg, wanted: list[str], names: list[str], env) -> None:
    """Install each listed shared skill revision; an edited local copy is kept."""
    if not wanted:
        return
    from agentmem.skills import install
    from agentmem.store.base import open_store

    rts = [runtime(n, env) for n in names]
    for item in wanted:
        name, _, revision = item.partition("@")
        try:
            store = open_store(cfg.store, timeout=cfg.network_timeout)
            out = install.install(store, name, revision, rts, machine=machine)
        except AgentmemError as exc:
            report.add(f"shared skill {item}", "warning", exc.one_line())
            continue
        actions = sorted({r["action"] for r in out["runtimes"]})
        report.add(f"shared skill {item}", "ok" if actions == ["unchanged"] else "changed", ", ".join(actions))


def run_setup(machine: Path, *, env: dict | None = None, replace_core_skill: bool = False,
              helper_command: list[str] | None = None, new_store: bool = False) -> SetupReport:
    """Bring this machine folder's setup to the state its config describes, and verify the store."""
    from agentmem import config
    from agentmem.machine import settings, verification

    machine = Path(machine).expanduser().resolve()
    report = SetupReport(str(machine))
    cfg = config.load(machine, allow_stale=False)  # setup never acts on a config it cannot read
    if not cfg.data:
        raise NotConfigured(f"no agentmem config in {machine}", hint=config.SETUP_HINT)
    _template_step(report, machine)
    names = enabled_names(cfg.data)
    for unknown in sorted(set(listed_names(cfg.data)) - set(names)):
        report.add(f"runtime {unknown}", "warning", f"unknown runtime; expected one of {', '.join(RUNTIME_NAMES)}")
    helper_cmd = helper_command or default_helper_command()
    report.helper = helper_cmd
    helper = shlex.join(helper_cmd)
    try:
        report.store = store_reach(cfg.store)
    except AgentmemError:
        pass  # a bucket store not provisioned yet: the store step says what happens

    if not _store_step(report, machine, cfg, cfg.network_timeout, new_store):
        return report
    cfg = config.require(machine)  # provisioning may have recorded the bucket
    report.store = store_reach(cfg.store)
    agent = settings.agent_name(cfg) or default_agent(names)
    changed = settings.complete(machine, cfg, agent=agent, helper_command=helper_cmd)
    report.add("config", "changed" if changed else "ok", f"{machine / 'config.toml'} (helper: {helper})")
    _runtime_steps(report, machine, names, helper_cmd, cfg.store, env, replace_core_skill)
    _hooks_step(report, machine, settings.hooks_runtimes(cfg, names), names, helper_cmd, env)
    _mcp_step(report, machine, settings.mcp_enabled(cfg), names, helper_cmd, env)
    _shared_skill_steps(report, machine, cfg, settings.shared_skills(cfg), names, env)
    report.outcome = verification.verification_step(report, machine, env)
    _commit_step(report, machine)
    return report


def _template_step(report: SetupReport, machine: Path) -> None:
    """A template revision recorded that exists nowhere (copied from a checkout with untracked files) is
    replaced by the one it was made from, so `upgrade` works (INV real-template-commit)."""
    from agentmem.machine import template_source

    repaired = template_source.repair(machine)
    if repaired:
        report.add("template", "changed", repaired)


def _commit_step(report: SetupReport, machine: Path) -> None:
    """A machine folder kept in git is committed once setup has checked it, as Copier's task does, so
    a rerun after resolving an upgrade's conflicts completes that upgrade (markers are never committed)."""
    from agentmem.machine import repo

    if (machine / ".git").exists() and repo.commit(
            machine, "agentmem setup"):
        report.add("machine folder", "changed", f"committed {machine} (git)")


def default_agent(runtime_names: list[str]) -> str:
    """`<first runtime>@<short host name>`, cut to a valid agent name."""
    host = re.sub(r"[^A-Za-z0-9._-]+", "-", socket.gethostname().split(".")[0]).strip("-.") or "host"
    return f"{(runtime_names or ['agent'])[0]}@{host}"[:64]
