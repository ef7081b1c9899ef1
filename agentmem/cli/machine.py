"""The machine commands: setup, map, where, bucket."""

from __future__ import annotations

from agentmem.cli import common
from agentmem.cli.result import Result
from agentmem.errors import EXIT_OK, EXIT_PENDING, EXIT_UNEXPECTED, InvalidInput


def add_map(sp) -> None:
    sp.add_argument("directory")
    sp.add_argument("project")


def run_map(args) -> Result:
    import subprocess

    from agentmem import config
    from agentmem.machine import repo

    machine = common.machine_path()
    root = config.add_mapping(machine, args.directory, args.project)
    try:
        repo.commit_config(machine, f"Map {root} to project {args.project}")
    except (OSError, subprocess.CalledProcessError):
        pass  # the mapping is saved; only the convenience commit failed
    out = {"directory": str(root), "project": args.project}
    return Result(out, f"mapped {root} -> project {args.project}")


def add_where(sp) -> None:
    sp.add_argument("--project")


def run_where(args) -> Result:
    cfg = common.config()
    project = cfg.resolve_project(explicit=args.project)
    machine = common.machine()
    out = {"home": machine, "project": project, "store": cfg.store.to_dict(), "agent": cfg.agent}
    return Result(out, f"project {project} in {cfg.store.label()} (machine folder {machine}, agent {cfg.agent})")


def add_setup(sp) -> None:
    sp.add_argument("--replace-core-skill", action="store_true",
                    help="replace a locally edited agent-memory skill (a backup is kept)")
    sp.add_argument("--exit-zero", action="store_true",
                    help="exit 0 even when verification fails (Copier's task uses it to keep the folder)")
    sp.add_argument("--new-store", action="store_true",
                    help="the store at the configured location is new on purpose: create a missing folder store, "
                    "and accept a store there that differs from the one this machine used")


def run_setup(args) -> Result:
    from agentmem.machine import setup

    report = setup.run_setup(common.machine_path(), replace_core_skill=args.replace_core_skill,
                             new_store=args.new_store)
    status = {"confirmed": EXIT_OK, "pending": EXIT_PENDING}.get(report.outcome, report.exit_code)
    return Result(report.to_dict(), report.text(), EXIT_OK if args.exit_zero else status)


def add_bucket(sp) -> None:
    sp.add_argument("action", choices=["connect", "create", "ensure", "verify"],
                    help="connect: verify an existing bucket; create: make a private one (or verify and reuse); "
                    "ensure: connect to a supplied/configured bucket, else create <you>/agent-memory; "
                    "verify: save, read back and search the setup verification note")
    sp.add_argument("--bucket", metavar="NAMESPACE/NAME",
                    help="the bucket ID (default: configured, else <you>/agent-memory)")
    sp.add_argument("--save", action="store_true", help="record the verified bucket as this machine's store")
    sp.add_argument("--project", help="verify: a configured project name (default: from the current directory)")


def run_bucket(args) -> Result:
    from agentmem import config
    from agentmem.machine import provision

    machine = common.machine_path()
    if args.action == "verify":
        return _verify(machine, args)
    timeout = common.timeout(config.load(machine))
    if args.action == "connect":
        configured = None if args.bucket else config.require(machine).store
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


def _verify(machine, args) -> Result:
    from agentmem.machine import verification

    cfg = common.config()
    project = cfg.resolve_project(explicit=args.project)
    result = verification.verify(machine, cfg.store, project, cfg.agent, timeout=common.timeout(cfg))
    out = result.to_json()
    text = (f"setup verification note {result.id}: upload {result.upload}, read back {result.read_back}, "
            f"found by search {result.found_by_search}" + (f" ({result.problem})" if result.problem else ""))
    if result.ok:
        return Result(out, text)
    return Result(out, text, EXIT_PENDING if result.upload == "pending" else EXIT_UNEXPECTED)
