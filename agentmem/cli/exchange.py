"""The exchange commands: `export` (memory as plain Markdown) and `import` (from an export or another tool)."""

from __future__ import annotations

from agentmem.cli import common
from agentmem.cli.result import Result
from agentmem.errors import EXIT_OK, EXIT_PENDING

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    import argparse


def add_export(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("dir", metavar="DIR", help="the folder to write (new, empty, or an earlier export: updated "
                    "in place, unchanged files left alone)")
    sp.add_argument("--project", help="only this configured project (default: every project mapped on this machine)")


def run_export(args: argparse.Namespace) -> Result:
    from agentmem.exchange import export

    cfg = common.config()
    projects = [cfg.resolve_project(explicit=args.project)] if args.project else sorted(cfg.project_names())
    out = export.export(common.machine(), cfg, args.dir, projects, timeout=common.timeout(cfg))
    lines = [f"exported {out['notes']} note(s) of {len(projects)} project(s) to {out['path']} "
             f"({out['written']} file(s) written, {out['unchanged']} unchanged, {out['removed']} removed)"]
    for project, count in out["projects"].items():
        lines.append(f"  {project}: {count} note(s), index {out['path']}/{project}/index.md")
    for w in out["withheld"]:
        lines.append(f"note: {w['id']} holds a credential ({w['kind']}); exported as [REDACTED:{w['kind']}]")
    for project, reason in out["stale_projects"].items():
        lines.append(f"warning: {project} may be stale - {reason}")
    return Result(out, "\n".join(lines))


def add_import(sp: argparse.ArgumentParser) -> None:
    from agentmem.exchange.native import FORMATS

    sp.epilog = (
        "Formats, as each tool's own code or documentation describes them (checked 2026-12-01): claude-code, "
        "Claude Code 2.1.332's auto memory (its binary's memory-file template: name, description, metadata.type; "
        "MEMORY.md the index; the project folder named by the directory with non-alphanumerics as '-'); codex, "
        "Codex 0.171.0's memories (its MEMORY.md format: blocks opened by '# Task Group:'; ad hoc notes under "
        "extensions/ad_hoc/notes; the folder's location under CODEX_HOME is the documented one, not read from "
        "the binary); gemini, the '## Gemini Added Memories' section save_memory wrote (Gemini CLI's docs; "
        "0.61.0 keeps a private MEMORY.md folder instead, read when given as PATH); cline, the memory bank "
        "convention of Cline's docs (Cline is not one of the five CLIs installed here).")
    sp.add_argument("--from", dest="fmt", required=True, choices=FORMATS,
                    help="what to read: an agentmem export, or another tool's own memory files")
    sp.add_argument("path", nargs="?", metavar="PATH",
                    help="the export folder, or the tool's memory folder/file (default: where that tool keeps "
                    "it for this user and directory; required for agentmem)")
    sp.add_argument("--project", help="the configured project to save into (default: from the current directory; "
                    "with --from agentmem: only that project's notes)")
    sp.add_argument("--apply", action="store_true", help="save the items (default: a dry run that saves nothing)")
    sp.add_argument("--redact", action="store_true",
                    help="save an item that holds a credential with [REDACTED:<kind>] instead of refusing it")


def run_import(args: argparse.Namespace) -> Result:
    from agentmem.exchange import importing, native

    cfg = common.config()
    if args.project is not None:
        project = cfg.resolve_project(explicit=args.project)
    elif args.fmt == "agentmem":
        project = None
    else:
        project = cfg.resolve_project()
    if args.path is None and args.fmt == "agentmem":
        from agentmem.errors import InvalidInput

        raise InvalidInput("import --from agentmem needs PATH: the folder an export wrote")
    path = args.path if args.path is not None else native.default_path(args.fmt)
    import os

    path = os.path.abspath(os.path.expanduser(path))
    result = importing.plan(common.machine(), cfg, args.fmt, path, project, redact=args.redact,
                            timeout=common.timeout(cfg))
    outcomes = importing.apply(common.machine(), cfg, result["items"], redact=args.redact,
                               timeout=common.timeout(cfg)) if args.apply else []
    out = importing.summary(result) | {"applied": args.apply, "saved": outcomes}
    waiting = any(o.get("status") != "saved" for o in outcomes)
    if waiting:
        out["status"] = "pending"
    return Result(out, _import_text(out), EXIT_PENDING if waiting else EXIT_OK)


def _import_text(out: dict) -> str:
    c = out["counts"]
    verb = "saved" if out["applied"] else "would save"
    lines = [f"{out['format']} memories in {out['path']}: {verb} {c['save']}, already present {c['present']}, "
             f"refused {c['refused']}"]
    for item in out["items"]:
        what = {"save": verb, "present": "present", "refused": "refused"}[item["action"]]
        why = f" - {item['reason']}" if item.get("reason") else ""
        ident = f" {item['id']}" if item.get("id") else ""
        lines.append(f"  {what}{ident} [{item['project']}] {item['title']} ({item['source']}){why}")
    if not out["applied"] and c["save"]:
        lines.append("dry run: nothing was saved; add --apply to save")
    for project, reason in out["stale_projects"].items():
        lines.append(f"warning: {project} may be stale - {reason} (an item reported new may already be there)")
    return "\n".join(lines)
