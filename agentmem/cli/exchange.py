"""The exchange commands: `export` (memory as plain Markdown) and `import` (from an export or another tool)."""

from __future__ import annotations

from agentmem.cli import common
from agentmem.cli.result import Result
from agentmem.errors import EXIT_ATTENTION, EXIT_OK, EXIT_PENDING

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
    lines = [f"exported {out['notes']} note(s) and {out['records']} record(s) of {len(projects)} project(s) to "
             f"{out['path']} ({out['written']} file(s) written, {out['unchanged']} unchanged, "
             f"{out['removed']} removed)"]
    for project, count in out["projects"].items():
        lines.append(f"  {project}: {count} note(s), index {out['path']}/{project}/index.md")
    for project, count in out.get("team_projects", {}).items():
        lines.append(f"  {project}, the team's: {count} note(s), index {out['path']}/{export.TEAM_FOLDER}/{project}/"
                     "index.md")
    for w in out["withheld"]:
        lines.append(f"note: {w['id']} holds a credential ({w['kind']}); exported as [REDACTED:{w['kind']}]")
    for project, reason in out["stale_projects"].items():
        lines.append(f"warning: {project} may be stale - {reason}")
    return Result(out, "\n".join(lines))


def add_import(sp: argparse.ArgumentParser) -> None:
    from agentmem.exchange.sources import FORMATS

    sp.epilog = (
        "Formats, as each tool's own code or documentation describes them (checked 2026-12-01; Gemini CLI and "
        "Codex again 2026-12): claude-code, Claude Code 2.1.332's auto memory (its binary's memory-file "
        "template: name, description, metadata.type; MEMORY.md the index; the project folder named by the "
        "directory with non-alphanumerics as '-'); codex, Codex 0.171.0's memories (its memory prompts: "
        "MEMORY.md blocks opened by '# Task Group:' with 'applies_to: cwd=', memory_summary.md's User Profile, "
        "User preferences and General Tips, ad hoc notes under extensions/ad_hoc/notes; the folder under "
        "CODEX_HOME is the documented one); gemini, Gemini CLI 0.61.0 (its bundle: no save_memory; the global "
        "~/.gemini/GEMINI.md, and each project's private memory in ~/.gemini/tmp/<project id>/memory, "
        "MEMORY.md and sibling notes or a legacy GEMINI.md, the id's folder named in .project_root and "
        "projects.json); cline, the memory bank convention of Cline's docs (Cline is not one of the five CLIs "
        "installed here). A memory goes to the project its folder is mapped to; a global one (Gemini's "
        "GEMINI.md, Codex's summary and ad hoc notes) only to the project --project names.")
    sp.add_argument("--from", dest="fmt", required=True, choices=FORMATS,
                    help="what to read: an agentmem export, or another tool's own memory files")
    sp.add_argument("path", nargs="?", metavar="PATH",
                    help="the export folder, or the tool's memory folder/file (default: where that tool keeps "
                    "it for this user and directory; required for agentmem)")
    sp.add_argument("--project", help="the configured project for the memories that belong to no mapped project "
                    "(global ones; for claude-code and cline, default: from the current directory); memories of "
                    "another project are refused. With --from agentmem: only that project's notes and records")
    sp.add_argument("--apply", action="store_true", help="save the items (default: a dry run that saves nothing)")
    sp.add_argument("--team", action="store_true",
                    help="with --from agentmem: put an export's team notes and records back into the team's store "
                    "([team] in config.toml), and nothing else (without it: only your own, never into the team's)")
    sp.add_argument("--redact", action="store_true",
                    help="save an item that holds a credential with [REDACTED:<kind>] instead of refusing it")


def run_import(args: argparse.Namespace) -> Result:
    import os

    from agentmem.errors import InvalidInput, NotConfigured
    from agentmem.exchange import importing, sources
    from agentmem.render import next_data

    cfg = common.config()
    project = common.project(cfg, args, "import") if args.project is not None else None
    here = project
    mine = args.fmt in ("cline", "claude-code") and args.path is None
    if here is None and mine:  # their memories are the current directory's
        here = cfg.resolve_project()
    elif here is None and args.fmt != "agentmem":
        try:
            here = cfg.resolve_project()  # for a project memory folder given as PATH, whose tool names no owner
            # (Claude Code's own folder names its directory, which `importing` maps to its project)
        except NotConfigured:
            here = None
    if args.path is None and args.fmt == "agentmem":
        raise InvalidInput("import --from agentmem needs PATH: the folder an export wrote")
    if args.team and args.fmt != "agentmem":
        raise InvalidInput(f"--team takes an agentmem export's team notes; {args.fmt} memories are your own: import "
                           "them without --team (a note reaches the team by promote or save --team)")
    if args.team:
        cfg = cfg.scoped("team")
    path = args.path if args.path is not None else sources.default_path(args.fmt)
    path = os.path.abspath(os.path.expanduser(path))
    result = importing.plan(common.machine(), cfg, args.fmt, path, project, here=here, redact=args.redact,
                            timeout=common.timeout(cfg))
    outcomes = importing.apply(common.machine(), cfg, result["items"], fmt=args.fmt, redact=args.redact,
                               timeout=common.timeout(cfg)) if args.apply else []
    out = importing.summary(result) | {"applied": args.apply, "saved": outcomes, "next": next_data(result["next"])}
    waiting = any(o.get("status") != "saved" for o in outcomes)
    if waiting:
        out["status"] = "pending"
    # A refused item needs a person (its reason says what), whatever was saved beside it: that outranks
    # an upload still pending, which the next save or the Stop hook retries on its own.
    status = EXIT_ATTENTION if out["counts"]["refused"] else EXIT_PENDING if waiting else EXIT_OK
    return Result(out, _import_text(out, result["next"]), status)


def _import_text(out: dict, steps: list) -> str:
    from agentmem.errors import Command
    from agentmem.exchange.importing import shown

    c = out["counts"]
    verb = "saved" if out["applied"] else "would save"
    lines = [f"{out['format']} memories in {out['path']}: {verb} {c['save']}, already present {c['present']}, "
             f"refused {c['refused']}"]
    for item in out["items"]:
        what = {"save": verb, "present": "present", "refused": "refused"}[item["action"]]
        why = f" - {item['reason']}" if item.get("reason") else ""
        ident = f" {item['id']}" if item.get("id") else ""
        where = item["project"] or "no project"
        lines.append(f"  {what}{ident} [{where}] {item['title']} ({item['source']}){why}")
    for done in out["saved"]:
        if done.get("next"):
            lines.append(f"finish the purge of {done['note']} with: {Command(*done['next']).line()}")
    if not out["applied"] and c["save"]:
        lines.append("dry run: nothing was saved; add --apply to save")
    for project, reason in out["stale_projects"].items():
        lines.append(f"warning: {project} may be stale - {reason} (an item reported new may already be there)")
    if c["refused"]:
        rest = "the rest were imported" if out["applied"] else "nothing was saved"
        lines.append(f"refused {c['refused']} item(s), each with its reason above; {rest}")
    lines.extend(shown(step.text()) for step in steps)  # an export's other scope, left for its own import
    return "\n".join(lines)
