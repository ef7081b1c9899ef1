"""Machine setup: what Copier's task runs, and what `agentmem setup` reruns at any time.

Every run checks real state and adds what is missing; there is no progress
ledger. Steps: store (auth, connect or create), config, then one loop over the
runtimes (runtimes/registry.py): each enabled one gets its core skill, managed
block, permissions, hooks (optional) and the MCP server's registration (optional);
each other one has all of those that agentmem put there taken out again. Then
shared skills, the verification note, every note of each mapped project (what
`agentmem sync` does) and, when hybrid is the search mode, the sentence vectors
of every cached note (what `agentmem sync --embed` does).

INV setup-rerun: rerunning setup, whole or after an interruption, creates no
second store, note or skill copy, and changes nothing already in place.
"""

from __future__ import annotations

import re
import shlex
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentmem.errors import AgentmemError, Command, InvalidInput, NotConfigured
from agentmem.machine import blocks, core_skill, team_access
from agentmem.machine.reach import store_reach
from agentmem.machine.setup_report import SetupReport, Step  # noqa: F401  (Step: setup.Step, as before)
from agentmem.paths import config_path, helper_command
from agentmem.runtimes import registry
from agentmem.runtimes.base import hooked
from agentmem.runtimes.registry import enabled_names, listed_names, runtime
from agentmem.status import CHANGED, FAILED, OK, SKIPPED, WARNING, Status

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agentmem.config import Config
    from agentmem.runtimes.base import Runtime
    from agentmem.store.base import StoreDescription

BLOCK_SOURCE = "instructions-block.md"


def default_helper_command() -> list[str]:
    """The command that runs this very helper: the installed launcher when it started us."""
    return helper_command()


def _store_step(report: SetupReport, machine: Path, cfg: Config, timeout: float, new_store: bool = False) -> bool:
    """Authenticate and connect to (or create) the store, and record its identity. False when setup cannot go on.

    INV store-identity: a folder store is created only on this machine's first setup for
    it, or with `new_store`; a store this machine knew is never replaced by another one at
    its location unless `new_store` says so.
    """
    raw = cfg.data.get("store") or {}
    if raw.get("kind") == "bucket":
        return _bucket_step(report, machine, str(raw.get("location") or ""), timeout, new_store)
    report.add("auth", SKIPPED, "folder store: no account needed")
    try:
        step = _folder_store(machine, cfg.store, new_store)
    except AgentmemError as exc:
        report.add("store", FAILED, exc.one_line())
        report.exit_code = exc.exit_code
        return False
    report.add("store", *step)
    return True


def _pending_stores(machine: Path) -> list:
    from agentmem.uploads import pending

    return [entry.store for entry in pending.list_entries(machine)]


def _folder_store(machine: Path, desc: StoreDescription, new_store: bool) -> tuple[Status, str]:
    """Connect to, mark or create the folder store; (status, detail) for the report."""
    import os

    from agentmem.errors import Offline
    from agentmem.store import folder, identity

    root, known = desc.location, identity.recorded(machine, desc)
    if not os.path.lexists(root):
        if not new_store and identity.has_trace(machine, desc, lambda: _pending_stores(machine)):
            raise Offline(f"folder store {root} is not there (an unmounted drive or a moved folder?); "
                          "this machine used a store there before, so no new one was created",
                          hint=folder.new_store_hint())
        _accept(machine, desc, folder.create_store(root))
        return CHANGED, f"created folder store {root}"
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
        return CHANGED, f"connected to folder {root} and marked it as an agentmem store ({folder.MARKER})"
    _accept(machine, desc, found)
    return OK, f"connected to folder {root}"


def _accept(machine: Path, desc: StoreDescription, found: str) -> None:
    """Record `found` as the store at `desc`. INV store-identity: when that is another store than the
    one recorded, what the cache knew of the old one's changes goes, so the next search lists the new
    one whole and prunes the old one's notes."""
    from agentmem.memory import sync
    from agentmem.store import identity

    if identity.recorded(machine, desc) != found:
        sync.forget_changes(machine, desc)
    identity.record(machine, desc, found)


def _bucket_step(report: SetupReport, machine: Path, bucket_id: str, timeout: float, new_store: bool = False) -> bool:
    """Connect to the configured bucket; with none configured, create or reuse `<user>/agent-memory`."""
    from agentmem.machine import provision  # imports huggingface_hub
    from agentmem.store import identity, rights
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
        report.add("auth" if exc.kind == "not-authenticated" else "store", FAILED, exc.one_line())
        report.exit_code = exc.exit_code
        return False
    rights.remember_user(machine, done.user)  # the user's name, for author stamps without the network
    report.add("auth", OK, f"Hugging Face user {done.user}")
    report.add("store", CHANGED if done.action == "created" else OK, done.text())
    return True


@dataclass
class _Plan:
    """What every runtime step of one setup run shares."""

    machine: Path
    helper: list[str]
    store: StoreDescription
    replace: bool
    hooks: set[str]  # the enabled runtimes that get our hooks
    mcp: bool  # register the MCP server with the runtimes that take one
    trust: list[str] | None  # [trust] projects on: the mapped folders to trust; None: off
    skill_files: dict[str, bytes]
    block_body: str


def _runtime_steps(report: SetupReport, plan: _Plan, names: list[str], env: Mapping[str, str] | None) -> None:
    """The one loop: every enabled runtime gets all of agentmem's parts, every other has them taken out."""
    enabled = [runtime(n, env) for n in names]
    for rt in enabled:
        _enable(report, plan, rt)
    for name in registry.NAMES:
        if name not in names:
            _withdraw(report, plan, runtime(name, env), enabled)
    if plan.mcp:
        from agentmem.mcp import extra

        problem = extra.problem()
        if problem is not None:
            report.add("mcp server", WARNING, f"{problem}; add it with: {extra.install_command(str(plan.machine))}")


def _enable(report: SetupReport, plan: _Plan, rt: Runtime) -> None:
    """Core skill, managed block, permissions, hooks and MCP registration for one enabled runtime."""
    name = rt.name
    if rt.skills_root is not None:  # a CLI that reads no skill folder gets none
        _skill_step(report, plan, rt, rt.skills_root)
    existed = rt.instructions.exists()
    try:
        changed = blocks.apply_block(rt.instructions, plan.block_body)
    except AgentmemError as exc:  # malformed markers, a dangling link, a read-only file
        report.add(f"instructions {name}", WARNING, exc.one_line())
    else:
        report.add(f"instructions {name}", CHANGED if changed else OK, str(rt.instructions))
        follow = rt.after_instructions(plan.machine, existed)
        if follow is not None:
            report.add(f"instructions {name}: {follow[0]}", follow[1], follow[2])
        _permissions_step(report, plan, rt)
    _trust_step(report, plan, rt)
    on = name in plan.hooks
    if hooked(rt):  # a CLI that runs no hooks of ours has none to install or remove
        _entry_step(report, f"hooks {name}", on, lambda: rt.install_hooks(plan.machine, plan.helper) if on
                    else rt.remove_hooks(plan.machine), rt.trust.hint(plan.helper) if rt.trust else "")
    if rt.mcp is not None:
        from agentmem.mcp import registration

        _entry_step(report, f"mcp {name}", plan.mcp, lambda: registration.register(plan.machine, rt, plan.helper)
                    if plan.mcp else registration.unregister(plan.machine, rt))


def _skill_step(report: SetupReport, plan: _Plan, rt: Runtime, skills_root: Path) -> None:
    """The core skill in the runtime's skill folder."""
    try:
        result = core_skill.install_core_skill(plan.skill_files, skills_root / core_skill.CORE_SKILL,
                                               plan.machine, rt.name, replace=plan.replace)
    except AgentmemError as exc:  # a dangling link or a read-only folder (INV user-files)
        report.add(f"skill {rt.name}", WARNING, exc.one_line())
    else:
        status = {"installed": CHANGED, "updated": CHANGED, "unchanged": OK}.get(result.status, WARNING)
        report.add(f"skill {rt.name}", status, result.detail or f"{result.status}: {result.path}")


def _permissions_step(report: SetupReport, plan: _Plan, rt: Runtime) -> None:
    """Let the runtime run the helper in its default permission mode (its grant_permissions)."""
    try:
        changed, detail = rt.grant_permissions(plan.machine, plan.helper, plan.store)
    except AgentmemError as exc:
        report.add(f"permissions {rt.name}", WARNING, exc.one_line())
        return
    status = CHANGED if changed else (OK if rt.permission_setting else SKIPPED)
    report.add(f"permissions {rt.name}", status, detail)


def _trust_step(report: SetupReport, plan: _Plan, rt: Runtime) -> None:
    """`[trust] projects`: the mapped folders get what the runtime's own trust prompt writes; off, only
    the entries agentmem wrote come out (the user's own stay)."""
    try:
        if plan.trust is None:
            if rt.untrust_projects(plan.machine):
                report.add(f"trust {rt.name}", CHANGED, "removed the trust entries agentmem had written "
                           "([trust] projects is off)")
            return
        changed, detail = rt.trust_projects(plan.machine, plan.trust, plan.helper)
    except AgentmemError as exc:
        report.add(f"trust {rt.name}", WARNING, exc.one_line())
        return
    report.add(f"trust {rt.name}", CHANGED if changed else OK, detail)


def _entry_step(report: SetupReport, label: str, on: bool, apply: Callable[[], Any], note: str = "") -> None:
    """Put our entries in (`on`) or take them out; report where they are wanted or something changed."""
    try:
        change = apply()
    except AgentmemError as exc:
        report.add(label, WARNING, exc.one_line())
        return
    if on or change.changed:
        report.add(label, CHANGED if change.changed else OK,
                   f"{change.detail}: {change.path}{' ' + note if on and note else ''}")


def _withdraw(report: SetupReport, plan: _Plan, rt: Runtime, enabled: list[Runtime]) -> None:
    """A runtime no longer enabled: take out everything agentmem put there for it, and nothing else, in
    the reverse order of `_enable` (a file agentmem created for its first entry goes with its last).
    A skill folder or instruction file an enabled runtime also uses (`~/.agents/skills`) stays."""
    name, machine = rt.name, plan.machine
    if rt.mcp is not None:
        from agentmem.mcp import registration

        _withdraw_entries(report, f"mcp {name}", lambda: registration.unregister(machine, rt))
    if hooked(rt):
        _withdraw_entries(report, f"hooks {name}", lambda: rt.remove_hooks(machine))
    try:
        if rt.untrust_projects(machine):
            report.add(f"trust {name}", CHANGED, "removed the trust entries agentmem had written (runtime disabled)")
    except AgentmemError as exc:
        report.add(f"trust {name}", WARNING, exc.one_line())
    try:
        if rt.withdraw_permissions(machine):
            report.add(f"permissions {name}", CHANGED, "removed the entries agentmem had added (runtime disabled)")
    except AgentmemError as exc:
        report.add(f"permissions {name}", WARNING, exc.one_line())
    if all(other.instructions != rt.instructions for other in enabled):
        try:
            if blocks.remove_block(rt.instructions):
                report.add(f"instructions {name}", CHANGED,
                           f"removed agentmem's block (runtime disabled): {rt.instructions}")
        except AgentmemError as exc:
            report.add(f"instructions {name}", WARNING, exc.one_line())
    if rt.skills_root is not None and all(other.skills_root != rt.skills_root for other in enabled):
        try:
            gone = core_skill.remove_core_skill(rt.skills_root / core_skill.CORE_SKILL, machine, name)
        except AgentmemError as exc:
            report.add(f"skill {name}", WARNING, exc.one_line())
        else:
            if gone.status != "absent":
                report.add(f"skill {name}", CHANGED if gone.status == "removed" else WARNING,
                           gone.detail or f"removed {gone.path} (runtime disabled)")


def _withdraw_entries(report: SetupReport, label: str, remove: Callable[[], Any]) -> None:
    try:
        change = remove()
    except AgentmemError:
        return  # a file of a runtime this machine does not use: not ours to report on
    if change.changed:
        report.add(label, CHANGED, f"{change.detail} (runtime disabled): {change.path}")


def _reflect_step(report: SetupReport, cfg: Config, names: list[str], env: Mapping[str, str] | None) -> None:
    """With `[hooks] reflect` on: in which runtimes the stop hook asks for the end-of-session turn."""
    from agentmem.machine import settings

    if not settings.reflect_on(cfg):
        return
    for name, state in _reflection(cfg, names).items():
        if state == "on":
            report.add(f"reflect {name}", OK, f"on: once per session ({registry.reflection_how(name)})")
        elif state == "needs hooks":
            report.add(f"reflect {name}", WARNING, "[hooks] reflect is on but needs the hooks, which are off "
                       f"for {name}: `{Command('hooks', 'install', '--runtime', name, helper=report.helper).line()}`")
        else:
            report.add(f"reflect {name}", SKIPPED, state)


def _shared_skill_steps(report: SetupReport, machine: Path, cfg: Config, wanted: list[str], names: list[str],
                        env: Mapping[str, str] | None) -> None:
    """Install each listed shared skill revision; an edited local copy is kept."""
    if not wanted:
        return
    from agentmem.skills import install
    from agentmem.store.opening import open_store

    rts = [runtime(n, env) for n in names]
    for item in wanted:
        name, _, revision = item.partition("@")
        try:
            store = open_store(cfg.store, timeout=cfg.network_timeout)
            out = install.install(store, name, revision, rts, machine=machine)
        except AgentmemError as exc:
            report.add(f"shared skill {item}", WARNING, exc.one_line())
            continue
        actions = sorted({r["action"] for r in out["runtimes"]})
        report.add(f"shared skill {item}", OK if actions == ["unchanged"] else CHANGED, ", ".join(actions))


def run_setup(machine: Path, *, env: dict | None = None, replace_core_skill: bool = False,
              helper_command: list[str] | None = None, new_store: bool = False,
              embed_progress: Callable[[str], Callable[[int, int], None] | None] | None = None,
              sync_progress: Callable[[str], tuple] | None = None) -> SetupReport:
    """Bring this machine folder's setup to the state its config describes, verify the store, and catch up.

    `embed_progress(project)`: what hears (done, total) while that project's notes are embedded;
    `sync_progress(project)`: what hears them arrive and be indexed (memory/sync.py catch_up_all)."""
    from agentmem import config
    from agentmem.machine import settings
    from agentmem.setup import verification

    machine = Path(machine).expanduser().resolve()
    report = SetupReport(str(machine))
    cfg = config.load(machine, allow_stale=False)  # setup never acts on a config it cannot read
    if not cfg.data:
        raise NotConfigured(f"no agentmem config in {machine}", hint=config.SETUP_HINT)
    if not _template_step(report, machine):
        return report
    names = enabled_names(cfg.data)
    for unknown in sorted(set(listed_names(cfg.data)) - set(names)):
        report.add(f"runtime {unknown}", WARNING, f"unknown runtime; expected one of {', '.join(registry.NAMES)}")
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
    report.add("config", CHANGED if changed else OK, f"{config_path(machine)} (helper: {helper})")
    team_access.setup_step(report, machine, cfg, new_store)  # with [team]: reach and rights, never the verdict
    plan = _Plan(machine, helper_cmd, cfg.store, replace_core_skill, settings.hooks_runtimes(cfg, names),
                 settings.mcp_enabled(cfg), settings.trusted_folders(cfg),
                 core_skill.render_files(core_skill.skill_source(machine), helper),
                 (machine / BLOCK_SOURCE).read_text("utf-8").replace(core_skill.HELPER_TOKEN, helper))
    _runtime_steps(report, plan, names, env)
    _reflect_step(report, cfg, names, env)
    _shared_skill_steps(report, machine, cfg, settings.shared_skills(cfg), names, env)
    report.outcome = verification.verification_step(report, machine, env)
    _catch_up_step(report, machine, sync_progress)
    _embed_step(report, machine, embed_progress)
    _wiring_step(report, machine, env)
    _commit_step(report, machine)
    return report


def _catch_up_step(report: SetupReport, machine: Path, progress: Callable[[str], tuple] | None) -> None:
    """Every note of each mapped project is fetched and indexed now (memory/sync.py catch_up_all), so a
    machine joining a big store is caught up when setup ends, not after dozens of searches."""
    from agentmem import config
    from agentmem.memory import sync

    for project, got in sync.catch_up_all(machine, config.load(machine, allow_stale=False), progress=progress):
        name = f"catch up {project}" if project else "catch up"
        if isinstance(got, str) or got["stale"]:
            report.add(name, WARNING, got if isinstance(got, str) else str(got["stale_reason"]))
        else:
            report.add(name, CHANGED if got["added"] or got["removed"] else OK,
                       f"{got['notes']} note(s) here ({got['added']} downloaded, {got['removed']} removed)")


def _embed_step(report: SetupReport, machine: Path,
                progress: Callable[[str], Callable[[int, int], None] | None] | None) -> None:
    """With hybrid the search mode (the `hybrid` answer sets it), every cached note of each mapped project
    gets its sentence vectors now (memory/sync.py embed_cached), so no search ranks notes by words alone."""
    from agentmem import config
    from agentmem.memory import sync

    for project, got in sync.embed_cached(machine, config.load(machine, allow_stale=False), progress=progress):
        name = f"embed {project}" if project else "embed"
        if isinstance(got, str):
            report.add(name, WARNING, got)
            continue
        now = f" ({got['embedded']} embedded now)" if got["embedded"] else ""
        report.add(name, CHANGED if got["embedded"] else OK,
                   f"{got['done']} of {got['total']} note(s) have sentence vectors for hybrid search{now}")


def _wiring_step(report: SetupReport, machine: Path, env: Mapping[str, str] | None) -> None:
    """Setup ends with doctor's own runtime checks: what it could not put in place is said."""
    from agentmem import config
    from agentmem.setup import wiring

    for check in wiring.checks(str(machine), config.load(machine, allow_stale=False), env):
        if check.status != OK:
            report.add(f"check {check.name}", WARNING, check.detail)


def _template_step(report: SetupReport, machine: Path) -> bool:
    """A template revision recorded that exists nowhere (copied from a checkout with untracked files) is
    replaced by the one it was made from, so `upgrade` works (INV real-template-commit); unless the
    checkout's changes are in what Copier renders: then setup stops (INV clean-template-copy)."""
    from agentmem.machine import template_source

    try:
        warning = template_source.check_copy(machine)
    except AgentmemError as exc:
        report.add("template", FAILED, exc.one_line())
        report.exit_code = exc.exit_code
        return False
    if warning:
        report.add("template helper", WARNING, warning)
    repaired = template_source.repair(machine)
    if repaired:
        report.add("template", CHANGED, repaired)
    return True


def _commit_step(report: SetupReport, machine: Path) -> None:
    """A machine folder kept in git is committed once setup has checked it, as Copier's task does, so
    a rerun after resolving an upgrade's conflicts completes that upgrade (markers are never committed)."""
    from agentmem import repo

    if (machine / ".git").exists() and repo.commit(
            machine, "agentmem setup"):
        report.add("machine folder", CHANGED, f"committed {machine} (git)")


def default_agent(runtime_names: list[str]) -> str:
    """`<first runtime>@<short host name>`, cut to a valid agent name."""
    host = re.sub(r"[^A-Za-z0-9._-]+", "-", socket.gethostname().split(".")[0]).strip("-.") or "host"
    return f"{(runtime_names or ['agent'])[0]}@{host}"[:64]


def _reflection(cfg: Config, names: list[str]) -> dict[str, str]:
    """Where the end-of-session reflection is on, off, waits for hooks, or is not available."""
    from agentmem.machine import settings

    return registry.reflection(names, on=settings.reflect_on(cfg), hooked=settings.hooks_runtimes(cfg, names))
