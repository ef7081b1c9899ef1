"""Install one shared skill revision into each configured runtime's skill folder, safely.

Order: check the name and revision; list the revision and validate every path and
size before downloading anything; download into a temp folder under
`$AGENTMEM_HOME`; check SKILL.md; compare with what each runtime has installed;
only then build the new folder beside the runtime's `<skills_root>/<name>` and
rename it into place. Nothing downloaded is executed; files are written 0644.

A replaced installation (`replace=True`) is moved, whole, to
`$AGENTMEM_HOME/skill-backups/<runtime>/<name>/<time>/` (outside every skill
folder, so runtimes do not load it twice). The installed folder gets a
`.agentmem-skill.json` recording the name, revision and store.

INV skill-install-safe: a rejected or failed installation leaves every existing installation as it was.
INV core-skill-reserved: the core skill `agent-memory` is never installed or replaced from a store.

JSON shape (`install-skill --json`):
    {"status": "ok", "name": str, "revision": str, "dry_run": bool,
     "runtimes": [{"runtime": str, "target": str,
                   "state": "absent" | "same" | "different",      # before this command
                   "action": "installed" | "replaced" | "unchanged" | "none",
                   "backup": str | null, "diff": str | null}]}
    "diff" (unified, installed -> revision) is filled with --diff; "action" is "none" in a dry run.
A refusal (installed copy differs, no --replace) is the error kind "conflict".
"""

from __future__ import annotations

import difflib
import errno
import json
import os
import secrets
import shutil
import stat
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from agentmem import userfiles
from agentmem.errors import Command, Conflict, InvalidInput, NextStep, NotConfigured, NotFound, Option
from agentmem.fsutil import TMP_PREFIX, fsync_dir, write_atomic
from agentmem.skills import spec
from agentmem.skills.spec import INSTALL_MARKER, revision_prefix
from agentmem.store.base import ObjectInfo, Store

TARGET_SELF = "."  # key for the installed entry itself when it is not a folder


def validate_listing(prefix: str, listing: list[ObjectInfo]) -> list[str]:
    """The revision's file paths, relative to `prefix`, if every one is safe; else raise InvalidInput."""
    budget = spec.Budget()
    rels: list[str] = []
    seen: set[str] = set()
    for obj in listing:
        if not obj.path.startswith(prefix + "/"):
            raise InvalidInput(f"the store listed {obj.path!r} outside {prefix}")
        rel = spec.check_file_path(obj.path[len(prefix) + 1:])
        if rel in seen:
            raise InvalidInput(f"the store listed {rel!r} twice in {prefix}")
        seen.add(rel)
        budget.add(rel, obj.size)
        rels.append(rel)
    for rel in rels:
        parts = rel.split("/")
        for i in range(1, len(parts)):
            if "/".join(parts[:i]) in seen:
                raise InvalidInput(f"{'/'.join(parts[:i])!r} is a file where the skill expects a folder")
    if spec.ENTRYPOINT not in seen:
        raise NotFound(f"no published revision {prefix.split('/')[-1]} of skill {prefix.split('/')[1]}",
                       hint=NextStep("`{}` lists published revisions; incomplete ones are not installable",
                                     Command("skills")))
    return sorted(rels)


def check_folder_revision(root: Path, prefix: str) -> None:
    """A folder store can hold what a bucket cannot: symlinks and special files. Its listing
    skips them quietly; a skill revision holding any is refused outright."""
    here = Path(root)
    for part in prefix.split("/"):
        here = here / part
        try:
            mode = os.lstat(here).st_mode
        except FileNotFoundError:
            return  # absent: the listing finds nothing and says so
        if stat.S_ISLNK(mode):
            raise InvalidInput(f"{prefix}: {here} is a symbolic link in the folder store")
        if not stat.S_ISDIR(mode):
            raise InvalidInput(f"{here.relative_to(root).as_posix()!r} is a file where the skill expects a folder")
    for dirpath, dirnames, filenames in os.walk(here):
        for entry in dirnames + filenames:
            mode = os.lstat(Path(dirpath) / entry).st_mode
            rel = (Path(dirpath) / entry).relative_to(here).as_posix()
            if stat.S_ISLNK(mode):
                raise InvalidInput(f"{rel} in {prefix} is a symbolic link; a skill holds only regular files")
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                raise InvalidInput(f"{rel} in {prefix} is not a regular file")


def fetch(store: Store, name: str, revision: str, dest: Path) -> dict[str, bytes]:
    """Download a complete revision into `dest` (which must not exist) and return its files."""
    prefix = revision_prefix(name, revision)
    if store.description.kind == "folder":
        check_folder_revision(Path(store.description.location), prefix)
    rels = validate_listing(prefix, store.list(prefix))
    budget = spec.Budget()
    files: dict[str, bytes] = {}
    dest.mkdir()
    for rel in rels:
        data = store.get(f"{prefix}/{rel}")
        budget.add(rel, len(data))  # the listing's sizes are not trusted alone
        target = dest / rel
        if not target.resolve().is_relative_to(dest.resolve()):
            raise InvalidInput(f"unsafe file path {rel!r} in skill")
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "xb") as fh:
            fh.write(data)
        os.chmod(target, 0o644)
        files[rel] = data
    meta = spec.parse_skill_md(files[spec.ENTRYPOINT])
    if meta["name"] != name:
        raise InvalidInput(f"revision {revision} of {name} declares the name {meta['name']!r} in SKILL.md")
    return files


def read_installed(target: Path) -> dict[str, bytes | str] | None:
    """What is installed at `target`: relative path -> bytes, or a description for anything not a
    regular file. None when nothing is there. Never follows a symlink."""
    if not os.path.lexists(target):
        return None
    mode = os.lstat(target).st_mode
    if stat.S_ISLNK(mode):
        return {TARGET_SELF: f"<symbolic link to {os.readlink(target)}>"}
    if not stat.S_ISDIR(mode):
        return {TARGET_SELF: "<a file, not a skill folder>"}
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(target):
        for entry in sorted(dirnames + filenames):
            full = Path(dirpath) / entry
            rel = full.relative_to(target).as_posix()
            if rel == INSTALL_MARKER:
                continue
            if len(out) > 4 * spec.MAX_FILES:
                out["..."] = "<more entries not compared>"
                return out
            m = os.lstat(full).st_mode
            if stat.S_ISLNK(m):
                out[rel] = f"<symbolic link to {os.readlink(full)}>"
            elif stat.S_ISREG(m):
                with open(full, "rb") as fh:
                    data = fh.read(spec.MAX_FILE_BYTES + 1)
                out[rel] = data if len(data) <= spec.MAX_FILE_BYTES else "<file over the size limit>"
            elif not stat.S_ISDIR(m):
                out[rel] = "<not a regular file>"
    return out


def _lines(value: bytes | str | None) -> list[str] | None:
    if value is None:
        return []
    if isinstance(value, str):
        return [value + "\n"]
    try:
        return value.decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return None


def unified_diff(old: dict | None, new: dict[str, bytes], old_label: str, new_label: str) -> str:
    """A unified diff from an installed folder to a downloaded revision."""
    old = old or {}
    chunks = []
    for rel in sorted(set(old) | set(new)):
        a, b = old.get(rel), new.get(rel)
        if a == b:
            continue
        la, lb = _lines(a), _lines(b)
        if la is None or lb is None:
            chunks.append(f"Binary files {old_label}/{rel} and {new_label}/{rel} differ\n")
            continue
        chunks.extend(difflib.unified_diff(
            la, lb,
            fromfile=f"{old_label}/{rel}" if a is not None else "/dev/null",
            tofile=f"{new_label}/{rel}" if b is not None else "/dev/null",
        ))
        if chunks and not chunks[-1].endswith("\n"):
            chunks.append("\n\\ No newline at end of file\n")
    return "".join(chunks)


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


STALE_SECONDS = 3600  # a staging folder this old belongs to an installation that crashed


def _remove(path: Path) -> None:
    if os.path.islink(path) or (os.path.lexists(path) and not os.path.isdir(path)):
        os.unlink(path)
    else:
        shutil.rmtree(path, ignore_errors=True)


def _fsync_tree(folder: Path) -> None:
    """Make the staged copy durable before it is renamed into place."""
    for dirpath, _, filenames in os.walk(folder):
        for name in filenames:
            with open(Path(dirpath) / name, "rb") as fh:
                os.fsync(fh.fileno())
        fsync_dir(Path(dirpath))


def _sweep(root: Path) -> None:
    """Remove our own staging folders left in `root` by a crashed installation."""
    now = datetime.now(UTC).timestamp()
    for entry in root.glob(f"{TMP_PREFIX}agentmem-*"):
        try:
            if now - os.lstat(entry).st_mtime > STALE_SECONDS:
                _remove(entry)
        except OSError:
            pass


def _move_aside(target: Path, backup: Path, work: Path) -> Path | None:
    """Move the installed entry to `backup`. When the backup folder is on another filesystem, copy
    it there and move the original into `work` instead, returning that path."""
    backup.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.rename(target, backup)
        return None
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
    staging = backup.with_name(f"{TMP_PREFIX}{backup.name}")
    if os.path.islink(target) or not os.path.isdir(target):
        shutil.copy2(target, staging, follow_symlinks=False)
    else:
        shutil.copytree(target, staging, symlinks=True)
    os.rename(staging, backup)
    aside = work / "previous"
    os.rename(target, aside)
    return aside


def _place(tree: Path, target: Path, marker: bytes, backup: Path | None) -> None:
    """Build the new folder beside `target`, then rename it into place (moving the old one to `backup`).

    The copy is built one level down (`<root>/.tmp-agentmem-*/<name>/`), so a runtime scanning
    `<root>/*/SKILL.md` never sees a half-built or leftover copy as a second skill.
    """
    root = target.parent
    root.mkdir(parents=True, exist_ok=True)
    _sweep(root)
    work = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}agentmem-", dir=root))
    staged = work / target.name
    try:
        shutil.copytree(tree, staged)
        write_atomic(staged / INSTALL_MARKER, marker)
        _fsync_tree(staged)
        aside = _move_aside(target, backup, work) if backup is not None else None
        try:
            os.rename(staged, target)
        except OSError:
            if backup is not None:  # put the previous installation back
                os.rename(aside or backup, target)
            raise
    finally:
        _remove(work)


def install(store: Store, name: str, revision: str, runtimes: list, *, machine: Path,
            replace: bool = False, diff: bool = False, dry_run: bool = False) -> dict:
    """Install `name` at `revision` into every runtime in `runtimes` (see module docstring)."""
    spec.check_name(name)  # INV core-skill-reserved
    spec.check_revision(revision)
    if not runtimes:
        raise NotConfigured("no agent runtime is enabled to install skills into",
                            hint=NextStep("set [runtimes] enabled in config.toml, then run `{}`", Command("setup")))
    machine = Path(machine)
    machine.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}install-", dir=machine))
    try:
        tree = work / "tree"
        files = fetch(store, name, revision, tree)
        report: list[dict] = []
        differing: list[str] = []
        for rt in runtimes:
            if rt.skills_root is None:
                continue  # a CLI that reads no skill folder
            userfiles.prepare_folder(rt.skills_root)  # INV user-files, checked for all before any write
            target = Path(rt.skills_root) / name
            if any(item["target"] == str(target) for item in report):
                continue  # two runtimes sharing one skill folder: install once
            installed = read_installed(target)
            state = "absent" if installed is None else ("same" if installed == files else "different")
            if state == "different":
                differing.append(f"{rt.name} ({target})")
            report.append({"runtime": rt.name, "target": str(target), "state": state, "action": "none",
                           "backup": None,
                           "diff": unified_diff(installed, files, "installed", revision) if diff else None})
        if differing and not replace and not dry_run:
            raise Conflict(f"skill {name} is already installed and differs from revision {revision} for "
                           + ", ".join(differing),
                           hint=NextStep("inspect with {}, then use {} (the old copy is kept as a backup)",
                                         Option("diff"), Option("replace")))
        if dry_run:
            return {"status": "ok", "name": name, "revision": revision, "dry_run": True, "runtimes": report}
        marker = json.dumps({"name": name, "revision": revision, "store": store.description.label(),
                             "installed": datetime.now(UTC).isoformat(timespec="seconds")},
                            indent=2).encode()
        for item in report:
            target = Path(item["target"])
            if item["state"] == "same":
                write_atomic(target / INSTALL_MARKER, marker)
                item["action"] = "unchanged"
                continue
            backup = None
            if item["state"] == "different":
                backup = machine / "skill-backups" / item["runtime"] / name / _stamp()
            _place(tree, target, marker, backup)
            item["action"] = "replaced" if backup else "installed"
            item["backup"] = str(backup) if backup else None
        return {"status": "ok", "name": name, "revision": revision, "dry_run": False, "runtimes": report}
    finally:
        shutil.rmtree(work, ignore_errors=True)
