"""The shared-skill commands: publish-skill, skills, read-skill, install-skill."""

from __future__ import annotations

from agentmem.cli import common
from agentmem.cli.result import Result
from agentmem.errors import EXIT_PENDING, InvalidInput
from agentmem.shell import line as shell_line

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from agentmem.config import Config
    from agentmem.store.base import Store


def _add_team(sp: argparse.ArgumentParser, what: str) -> None:
    sp.add_argument("--team", action="store_true", help=f"{what} the team's store ([team] in config.toml)")


def _in_either(cfg: Config, team: bool, act: Callable[[Store], Any]) -> tuple[Any, str]:
    """`act(store)` on the team's store with `team`; else on the member's own, then (with a team on this
    machine) the team's when the member's own has no such revision. (its answer, the scope that gave it)."""
    from agentmem.errors import NotFound

    scopes = ["team"] if team else cfg.scopes()
    missing: NotFound | None = None
    for scope in scopes:
        try:
            return act(common.store(cfg.scoped(scope))), scope
        except NotFound as exc:
            missing = missing or exc
    assert missing is not None
    raise missing


def _scoped(cfg: Config, scope: str) -> dict:
    return {"scope": scope} if cfg.team is not None else {}


def add_publish_skill(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("directory", nargs="?", help="the skill's folder (holding SKILL.md)")
    sp.add_argument("--resume", nargs=2, metavar=("NAME", "REVISION"),
                    help="finish an interrupted publication with its frozen files and revision")
    _add_team(sp, "publish it into")


def run_publish_skill(args: argparse.Namespace) -> Result:
    from agentmem.skills import publish

    machine = common.machine_path()
    if args.resume:
        if args.directory or args.team:
            raise InvalidInput("--resume takes NAME REVISION only: the frozen files are sent as they were, to the "
                               "store they were bound for")
        out = publish.resume(machine, *args.resume, timeout=common.timeout(common.load_config(machine)))
    else:
        if not args.directory:
            raise InvalidInput("publish-skill needs the skill's folder (or --resume NAME REVISION)")
        from pathlib import Path

        cfg = common.config()
        scope = "team" if args.team else "personal"
        out = publish.publish(Path(args.directory), machine, common.store(cfg.scoped(scope)),
                              team=args.team) | _scoped(cfg, scope)
    out["message"] = str(out["message"])  # words with the command that resumes it, as a line to run
    text = out["message"] + (f"\nfrozen copy kept in {out['pending']}" if out["pending"] else "")
    return Result(out, text) if out["status"] == "published" else Result(out, text, EXIT_PENDING)


def add_skills(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("query", nargs="*")
    _add_team(sp, "only")


def _one_line(value: object) -> str:
    """Store-supplied text for one line of output: controls, line breaks and invisible characters shown
    as `<U+XXXX>`, so a description cannot add lines or rewrite the terminal (as recalled notes, framing.py)."""
    from agentmem.safety.framing import clean

    return clean(str(value))


def run_skills(args: argparse.Namespace) -> Result:
    from agentmem.safety import credentials, screening
    from agentmem.skills import catalog, publish

    machine = common.machine_path()
    cfg = common.config()
    query = " ".join(args.query or []) or None
    found: list[dict] = []
    scopes = ["team"] if args.team else cfg.scopes()
    for scope in scopes:  # each store's skills, the member's own first; with a team each says its scope
        where = cfg.scoped(scope)
        found += [s | _scoped(cfg, scope) for s in catalog.discover(common.store(where), query, machine=machine,
                                                                     runtimes=common.runtimes(cfg))]
    labels = " and ".join(cfg.scoped(scope).store.label() for scope in scopes)
    waiting = publish.pending_publications(machine)
    shown, withheld = screening.withhold(query or "", credentials.env_secrets())  # INV no-credentials
    out: dict = {"status": "ok", "store": cfg.scoped(scopes[0]).store.label(), "query": shown or None,
                 "skills": found, "pending": waiting}
    if cfg.team is not None:
        out["stores"] = {scope: cfg.scoped(scope).store.label() for scope in scopes}
    if withheld:
        out["withheld"] = [{"where": "query", "kind": kind} for kind in withheld]
    what = f" matching {_one_line(shown)!r}" if query else ""
    lines = [f"{len(found)} skill(s){what} in {labels}:"]
    for skill in found:
        have = ", ".join(f"{i['runtime']} {_one_line(i['revision'] or '(not from the store)')}"
                         for i in skill["installed"])
        mark = "  [team]" if skill.get("scope") == "team" else ""
        lines.append(f"{skill['name']}{mark}" + (f"  [installed: {have}]" if have else ""))
        for rev in skill["revisions"]:
            about = rev["description"] if rev["problem"] is None else f"(unusable: {rev['problem']})"
            lines.append(f"  {_one_line(rev['revision'])}  {_one_line(about)}")
    for p in waiting:
        name, revision, store = _one_line(p["name"]), _one_line(p["revision"]), _one_line(p["store"])
        lines.append(f"pending publication {name} {revision} -> {store}; "
                     f"finish with: {shell_line('publish-skill', '--resume', p['name'], p['revision'])}")
    usable = [(s["name"], r["revision"]) for s in found for r in s["revisions"] if r["problem"] is None]
    if usable:
        name, revision = usable[0]
        lines.append(f"Read one with: {shell_line('read-skill', name, revision)}; "
                     f"install it with: {shell_line('install-skill', name, revision)}")
    return Result(out, "\n".join(lines))


def add_read_skill(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("name")
    sp.add_argument("revision")
    sp.add_argument("path", nargs="?", default="SKILL.md")
    _add_team(sp, "read it from")


def run_read_skill(args: argparse.Namespace) -> Result:
    """The file framed as quoted data under review (framing.py: it is instructions only once installed);
    --json gives the exact text."""
    from agentmem.safety.framing import frame_skill_file
    from agentmem.skills import catalog

    cfg = common.config()
    out, scope = _in_either(cfg, args.team, lambda store: catalog.read_file(store, args.name, args.revision,
                                                                            args.path))
    out |= _scoped(cfg, scope)
    label = f"{out['name']} {out['revision']} {out['path']}"
    return Result(out, frame_skill_file(out["content"].rstrip("\n"), label=label).rstrip("\n"))


def _diff_lines(diff: str) -> list[str]:
    """A unified diff of store-supplied files, one printed line per diff line: a line break other than
    `\n` inside or ending a line (`\r`, U+2028) and every control or invisible character is shown as
    `<U+XXXX>`, so no file can hide a change or forge a line of this output."""
    from agentmem.safety.framing import clean

    return [clean(line.removesuffix("\n")) for line in diff.splitlines(keepends=True)]


def add_install_skill(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("name")
    sp.add_argument("revision")
    sp.add_argument("--replace", action="store_true", help="replace a differing installation (a backup is kept)")
    sp.add_argument("--diff", action="store_true", help="show the difference; without --replace, change nothing")
    _add_team(sp, "install it from")


def run_install_skill(args: argparse.Namespace) -> Result:
    from agentmem.skills import install

    cfg = common.config()
    out, scope = _in_either(cfg, args.team, lambda store: install.install(
        store, args.name, args.revision, common.runtimes(cfg), machine=common.machine_path(), replace=args.replace,
        diff=args.diff, dry_run=args.diff and not args.replace))
    out |= _scoped(cfg, scope)
    lines = []
    for item in out["runtimes"]:
        if item["diff"]:
            lines.extend(_diff_lines(item["diff"]))
        if out["dry_run"]:
            state = {"absent": "not installed", "same": "identical", "different": "differs (shown above)"}
            lines.append(f"{item['runtime']}: {item['target']} {state[item['state']]}")
        else:
            backup = f" (previous copy kept in {item['backup']})" if item["backup"] else ""
            lines.append(f"{item['runtime']}: {item['action']} {item['target']}{backup}")
    if out["dry_run"] and any(i["state"] == "different" for i in out["runtimes"]):
        replace = shell_line("install-skill", args.name, args.revision, *(["--team"] if scope == "team" else []),
                             "--replace")
        lines.append(f"nothing changed; replace with: {replace}")
    return Result(out, "\n".join(lines))
