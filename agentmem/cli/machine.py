"""The machine commands: setup, map, unmap, where, bucket, upgrade."""

from __future__ import annotations

from agentmem.cli import common
from agentmem.cli.result import Result
from agentmem.errors import EXIT_OK, EXIT_PENDING, EXIT_UNEXPECTED, AgentmemError, Command, InvalidInput, NextStep

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from pathlib import Path

    from agentmem.cli.memory import _Progress


def add_map(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("directory")
    sp.add_argument("project")
    sp.add_argument("--replace", action="store_true",
                    help="remap a directory that is already mapped to another project")


def run_map(args: argparse.Namespace) -> Result:
    from agentmem import config_edit

    done = config_edit.map_directory(common.machine_path(), args.directory, args.project, replace=args.replace,
                                     commit=True)
    out = {"directory": done.root, "project": done.project, "changed": done.changed, "replaced": done.previous,
           "committed": done.committed}
    if not done.changed:
        text = f"{done.root} is already mapped to project {done.project}; nothing changed"
    else:
        text = f"mapped {done.root} -> project {done.project}" + (f" (was {done.previous})" if done.previous else "")
    if done.commit_problem:
        out["commit_problem"] = done.commit_problem
        text += (f"\nthe mapping is saved but was not committed ({done.commit_problem}); commit config.toml "
                 "before the next `copier update`")
    return Result(out, text)


def add_unmap(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("directory", help="a mapped directory, as mapped or any spelling of it (it need not exist)")


def run_unmap(args: argparse.Namespace) -> Result:
    from agentmem import config_edit

    done = config_edit.unmap_directory(common.machine_path(), args.directory, commit=True)
    out = {"directory": done.root, "project": done.project, "changed": done.changed, "committed": done.committed}
    text = f"unmapped {done.root} (was project {done.project}; its notes stay in the store)"
    if done.commit_problem:
        out["commit_problem"] = done.commit_problem
        text += (f"\nthe change is saved but was not committed ({done.commit_problem}); commit config.toml "
                 "before the next `copier update`")
    return Result(out, text)


def add_where(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--project", help="a configured project name (default: the project of the current directory)")


def run_where(args: argparse.Namespace) -> Result:
    cfg = common.config()
    project = cfg.resolve_project(explicit=args.project)
    machine = common.machine()
    out = {"home": machine, "project": project, "store": cfg.store.to_dict(), "agent": cfg.agent}
    return Result(out, f"project {project} in {cfg.store.label()} (machine folder {machine}, agent {cfg.agent})")


def add_setup(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--replace-core-skill", action="store_true",
                    help="replace a locally edited agent-memory skill (a backup is kept)")
    sp.add_argument("--pending-ok", action="store_true",
                    help="exit 0 when the verification note is only pending (Copier's tasks use it: a "
                    "failed setup still exits non-zero)")
    sp.add_argument("--exit-zero", action="store_true", help="exit 0 whatever the outcome")
    trust = sp.add_mutually_exclusive_group()
    trust.add_argument("--trust-projects", dest="trust_projects", action="store_const", const=True,
                       help="record [trust] projects = true, then set up: the [projects] folders get what the CLIs' "
                       "own trust prompts write (Codex: workspace-write there; Gemini CLI: trusted; Copilot CLI: "
                       "the helper's commands approved there)")
    trust.add_argument("--no-trust-projects", dest="trust_projects", action="store_const", const=False,
                       help="record [trust] projects = false, then set up: only the trust entries agentmem wrote are "
                       "taken out")
    sp.add_argument("--new-store", action="store_true",
                    help="the store at the configured location is new on purpose: create a missing folder store, "
                    "and accept a store there that differs from the one this machine used")


def run_setup(args: argparse.Namespace) -> Result:
    from agentmem.machine import settings
    from agentmem.setup import runner

    if args.trust_projects is not None:
        settings.record_trust_projects(common.machine_path(), args.trust_projects)
    bars = _EmbedBars(args.json)
    try:
        report = runner.run_setup(common.machine_path(), replace_core_skill=args.replace_core_skill,
                                  new_store=args.new_store, embed_progress=bars, sync_progress=bars.syncing)
    finally:
        bars.finish()
    try:  # the config as setup left it: its parsed copy is kept if setup succeeded
        common.load_config()
    except AgentmemError:
        pass
    status = {"confirmed": EXIT_OK, "pending": EXIT_OK if args.pending_ok else EXIT_PENDING}.get(
        report.outcome, report.exit_code)
    return Result(report.to_dict(), report.text(), EXIT_OK if args.exit_zero else status)


class _EmbedBars:
    """Setup's embedding of each project: a progress bar each on a terminal (cli/memory.py's), else nothing."""

    def __init__(self, as_json: bool):
        self.as_json = as_json
        self.bar: _Progress | None = None

    def __call__(self, project: str) -> _Progress | None:
        return self._new(f"notes of {project} embedded")

    def syncing(self, project: str) -> tuple[_Progress | None, Callable[[int, int], None]]:
        """A bar for the notes of `project` arriving, then one for them being indexed (setup's catch-up)."""
        here = self._new(f"notes of {project} here")

        def indexed(done: int, total: int) -> None:
            if self.bar is here:
                self._new(f"notes of {project} indexed")
            if self.bar is not None:
                self.bar(done, total)

        return here, indexed

    def _new(self, what: str) -> _Progress | None:
        from agentmem.cli.memory import _Progress

        self.finish()
        self.bar = _Progress.for_terminal(self.as_json, bar=True, what=what)
        return self.bar

    def finish(self) -> None:
        if self.bar is not None:
            self.bar.finish()


def add_upgrade(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--vcs-ref", metavar="REF", help="the template revision to upgrade to (default: its newest tag)")
    sp.add_argument("--data", metavar="KEY=VALUE", action="append", default=[],
                    help="change an answer, e.g. --data hybrid=true (repeatable)")


def run_upgrade(args: argparse.Namespace) -> Result:
    import sys

    from agentmem.machine import upgrade

    for item in args.data:
        if "=" not in item or not item.partition("=")[0].strip():
            raise InvalidInput(f"--data takes KEY=VALUE, not {item!r}")
    machine = common.machine_path()
    plan = upgrade.prepare(machine, args.vcs_ref, args.data)
    lines = [f"note: {plan.repaired}"] if plan.repaired else []
    if plan.argv is None:
        out = {"status": "current", "home": str(machine), **plan.to_json()}
        lines.append(f"already at {plan.target} ({plan.why}): nothing to upgrade")
        return Result(out, "\n".join(lines))
    sys.stdout.flush()  # Copier's output goes straight through; to stderr when stdout carries JSON

    def echo(line: str) -> None:
        sys.stderr.write(line)
        sys.stderr.flush()

    ran = upgrade.run(machine, plan, echo, stdout=sys.stderr if args.json else None)
    out = {"status": "updated" if ran.code == 0 else "failed", "home": str(machine), **plan.to_json(),
           "copier_exit_status": ran.code}
    if ran.code:
        from agentmem import repo

        found = repo.conflicted(machine)
        if found:  # the one instruction that works (copier's and the migration's lines say the same)
            raise repo.conflicts_error(machine, found)
        why = (f"copier update stopped: {ran.error}" if ran.error
               else f"copier update exited with status {ran.code} (its output is above)")
        kept = ("; nothing was changed (the folder's own edits are uncommitted again, as before)" if ran.undone
                else " (the folder's own edits were committed first)" if plan.committed else "")
        again = Command("upgrade", *(["--vcs-ref", args.vcs_ref] if args.vcs_ref else []),
                        *[f"--data={item}" for item in args.data])
        raise AgentmemError(f"upgrade FAILED: {why}{kept}", hint=NextStep("fix the cause, then run `{}` again", again))
    where = f" to {plan.target} ({plan.why})" if plan.target else ""
    lines.append(f"upgraded {machine}{where}" + (" (its local edits were committed first)" if plan.committed else ""))
    return Result(out, "\n".join(lines))


def add_bucket(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("action", choices=["connect", "create", "ensure", "verify"],
                    help="connect: verify an existing bucket; create: make a private one (or verify and reuse); "
                    "ensure: connect to a supplied/configured bucket, else create <you>/agent-memory; "
                    "verify: save, read back and search the setup verification note")
    sp.add_argument("--bucket", metavar="NAMESPACE/NAME",
                    help="the bucket ID (default: configured, else <you>/agent-memory)")
    sp.add_argument("--save", action="store_true", help="record the verified bucket as this machine's store")
    sp.add_argument("--project", help="verify: a configured project name (default: from the current directory)")


def run_bucket(args: argparse.Namespace) -> Result:
    from agentmem.machine import provision

    machine = common.machine_path()
    if args.action == "verify":
        return _verify(machine, args)
    timeout = common.timeout(common.load_config(machine))
    if args.action == "connect":
        configured = None if args.bucket else common.config().store
        if configured is not None and configured.kind != "bucket":
            raise InvalidInput("no bucket to connect to: pass --bucket NAMESPACE/NAME "
                               "(this machine uses a folder store)")
        bucket_id, _ = provision.resolve_bucket_id(args.bucket, configured, None)
        result = provision.connect(bucket_id, timeout=timeout)
    elif args.action == "create":
        result = provision.create(args.bucket, timeout=timeout)
    else:
        result = provision.ensure(machine, args.bucket, timeout=timeout)
    if args.save:
        provision.save_to_config(machine, result.bucket_id)
    out = result.to_json() | {"saved_to_config": bool(args.save)}
    return Result(out, result.text() + ("; saved to config.toml" if args.save else ""))


def _verify(machine: Path, args: argparse.Namespace) -> Result:
    from agentmem.setup import verification

    cfg = common.config()
    project = cfg.resolve_project(explicit=args.project)
    result = verification.verify(machine, cfg.store, project, cfg.agent, timeout=common.timeout(cfg))
    out = result.to_json()
    text = (f"setup verification note {result.id}: upload {result.upload}, read back {result.read_back}, "
            f"found by search {result.found_by_search}" + (f" ({result.problem})" if result.problem else ""))
    if result.ok:
        return Result(out, text)
    return Result(out, text, EXIT_PENDING if result.upload == "pending" else EXIT_UNEXPECTED)
