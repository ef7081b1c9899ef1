"""Shared skills: publish an immutable revision, and resume an interrupted one.

Discovery and reading live in `skills/catalog.py`, installation in `skills/install.py`;
names, limits and SKILL.md parsing in `skills/spec.py`.

A publication first freezes the source folder into
`$AGENTMEM_HOME/pending-skills/<name>/<revision>/` (files under `files/`, the
record in `entry.json` with the destination store), then uploads every supporting
file to `skills/<name>/<revision>/...` and `SKILL.md` last. The frozen copy is
removed only after the store confirmed `SKILL.md`. Readers treat a revision as
existing only once its `SKILL.md` does.

INV skill-entrypoint-last: SKILL.md of a revision is uploaded only after every other file of it.
INV skill-immutable: a published revision is never modified; an update is a new revision.

The JSON shapes of the skill commands are written once, in `cli/reference.py` (docs/cli.md).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from agentmem.errors import TRANSIENT, AgentmemError, Command, InvalidInput, NextStep, NotFound
from agentmem.fsutil import TMP_PREFIX, write_atomic
from agentmem.paths import PENDING_SKILL_ENTRY, PENDING_SKILLS_DIR
from agentmem.skills import spec
from agentmem.store.base import Store, StoreDescription

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable

ENTRY = PENDING_SKILL_ENTRY
FILES = "files"


def pending_root(machine: Path) -> Path:
    return Path(machine) / PENDING_SKILLS_DIR


@dataclass(frozen=True)
class Frozen:
    """A frozen publication: the exact files and revision a (resumed) upload sends."""

    name: str
    revision: str
    store: StoreDescription
    folder: Path
    files: list  # [{"path", "size", "sha256"}], SKILL.md included
    skipped: list  # hidden entries of the source (".git", ".DS_Store"), not published

    def data(self, rel: str) -> bytes:
        return (self.folder / FILES / rel).read_bytes()


# ---------------------------------------------------------------- freezing


def _open_regular(path: Path) -> int:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InvalidInput(f"{path} is not a regular file")
    return fd


def _copy_tree(source: Path, dest: Path) -> tuple[list[dict], list[str]]:
    """Copy `source` into `dest`, refusing symlinks, special files, unsafe names and oversized content.
    Hidden entries (names starting with '.') are left out and returned as skipped."""
    import hashlib

    budget = spec.Budget()
    files: list[dict] = []
    skipped: list[str] = []

    def walk(folder: Path, rel_parts: list[str]) -> None:
        with os.scandir(folder) as entries:
            ordered = sorted(entries, key=lambda e: e.name)
        for entry in ordered:
            rel = "/".join(rel_parts + [entry.name])
            if entry.name.startswith("."):
                skipped.append(rel)
                continue
            mode = entry.stat(follow_symlinks=False).st_mode
            if stat.S_ISLNK(mode):
                raise InvalidInput(f"{rel} is a symbolic link; a skill may hold only regular files and folders")
            spec.check_file_path(rel)
            if stat.S_ISDIR(mode):
                walk(Path(entry.path), rel_parts + [entry.name])
            elif stat.S_ISREG(mode):
                fd = _open_regular(Path(entry.path))
                with os.fdopen(fd, "rb") as fh:
                    data = fh.read(spec.MAX_FILE_BYTES + 1)
                budget.add(rel, len(data))
                write_atomic(dest / rel, data)
                files.append({"path": rel, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
            else:
                raise InvalidInput(f"{rel} is not a regular file or folder")

    walk(source, [])
    return files, skipped


def _refuse_secrets(folder: Path, files: list[dict]) -> None:
    """INV no-credentials: a skill whose text files carry a credential is not published (binary files are skipped)."""
    from agentmem.safety import credentials

    found = credentials.scan_files([folder / f["path"] for f in files], folder, known=credentials.env_secrets())
    if found:
        places = [f"{path} {f.describe()}" for path, f in found]
        credentials.raise_for(places, action="publish", redact_option=False)


def freeze(source: Path, machine: Path, store: StoreDescription) -> Frozen:
    """Validate `source` and freeze it, with a fresh revision, as a pending publication."""
    source = Path(os.path.abspath(source))
    if not source.is_dir():
        raise InvalidInput(f"{source} is not a folder holding a skill")
    dir_name = source.name
    if dir_name == spec.CORE_SKILL:
        spec.check_name(dir_name)  # raises: the reserved core skill
    revision = spec.new_revision()
    root = pending_root(machine)
    root.mkdir(parents=True, exist_ok=True)
    staging = root / f"{TMP_PREFIX}{revision}"
    try:
        files, skipped = _copy_tree(source, staging / FILES)
        if not (staging / FILES / spec.ENTRYPOINT).is_file():
            raise InvalidInput(f"{source} has no {spec.ENTRYPOINT}")
        meta = spec.parse_skill_md((staging / FILES / spec.ENTRYPOINT).read_bytes())
        name = spec.check_name(meta["name"])
        if name != dir_name:
            raise InvalidInput(
                f"SKILL.md declares name {name!r} but the folder is named {dir_name!r}",
                hint="the Agent Skills format requires them to match",
            )
        _refuse_secrets(staging / FILES, files)
        entry = {
            "name": name,
            "revision": revision,
            "store": store.to_dict(),
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "files": files,
            "skipped": skipped,
        }
        write_atomic(staging / ENTRY, json.dumps(entry, indent=2).encode())
        final = root / name / revision
        final.parent.mkdir(parents=True, exist_ok=True)
        os.rename(staging, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return Frozen(name, revision, store, final, files, skipped)


def load_frozen(machine: Path, name: str, revision: str) -> Frozen:
    """Read a pending publication back and check its frozen files are still the ones recorded."""
    import hashlib

    spec.check_name(name)
    spec.check_revision(revision)
    folder = pending_root(machine) / name / revision
    try:
        entry = json.loads((folder / ENTRY).read_text())
        files, store = entry["files"], StoreDescription.from_dict(entry["store"])
        paths = [spec.check_file_path(item["path"]) for item in files]
    except FileNotFoundError:
        raise NotFound(
            f"no pending publication {name} {revision}",
            hint=NextStep("`{}` lists pending publications and published revisions", Command("skills")),
        ) from None
    except (ValueError, KeyError, TypeError, AgentmemError):
        raise InvalidInput(f"pending publication record {folder / ENTRY} is unreadable") from None
    for rel, item in zip(paths, files):
        try:
            data = (folder / FILES / rel).read_bytes()
        except OSError:
            data = None
        if data is None or hashlib.sha256(data).hexdigest() != item.get("sha256"):
            raise InvalidInput(f"frozen file {rel} of {name} {revision} is missing or was changed")
    return Frozen(name, revision, store, folder, files, list(entry.get("skipped") or []))


def pending_publications(machine: Path) -> list[dict]:
    out = []
    root = pending_root(machine)
    for entry_file in sorted(root.glob(f"*/*/{ENTRY}")):
        if entry_file.parent.name.startswith(TMP_PREFIX) or entry_file.parent.parent.name.startswith(TMP_PREFIX):
            continue  # a publication being frozen or discarded
        try:
            entry = json.loads(entry_file.read_text())
            store = StoreDescription.from_dict(entry["store"]).label()
        except (OSError, ValueError, KeyError, AgentmemError):
            continue
        out.append({"name": entry["name"], "revision": entry["revision"], "store": store,
                    "created": entry.get("created")})
    return out


# ---------------------------------------------------------------- uploading


def upload(frozen: Frozen, store: Store) -> dict:
    """Upload a frozen publication, SKILL.md last; drop the frozen copy once confirmed.

    A transient failure (offline, remote error) returns status "pending"; any other
    failure is raised. In both cases the frozen copy stays for `--resume`.
    """
    prefix = spec.revision_prefix(frozen.name, frozen.revision)
    paths = [f["path"] for f in frozen.files]
    supporting = [p for p in paths if p != spec.ENTRYPOINT]
    resume = Command("publish-skill", "--resume", frozen.name, frozen.revision)
    try:
        for rel in supporting:
            store.put(f"{prefix}/{rel}", frozen.data(rel))
        store.put(f"{prefix}/{spec.ENTRYPOINT}", frozen.data(spec.ENTRYPOINT))  # INV skill-entrypoint-last
    except TRANSIENT as exc:
        return _result("pending", frozen, paths, str(frozen.folder),
                       NextStep.of(f"not confirmed by the store ({exc.one_line()}); kept locally, retry with `", resume,
                                   "`"))
    except AgentmemError as exc:
        exc.hint = [NextStep("kept locally; retry with `{}`", resume), *exc.next]
        raise
    _discard(frozen.folder)
    return _result("published", frozen, paths, None,
                   f"published {frozen.name} revision {frozen.revision} to {frozen.store.label()}")


def _result(status: str, frozen: Frozen, paths: list[str], pending: str | None,
            message: str | NextStep) -> dict:
    """The outcome; `message`: words for a person, with the command that resumes it as data (a NextStep: the
    front end spells it)."""
    if frozen.skipped:
        message = NextStep.of(*(message.pieces if isinstance(message, NextStep) else [message]),
                              f" (left out hidden: {', '.join(frozen.skipped)})")
    return {"status": status, "name": frozen.name, "revision": frozen.revision, "store": frozen.store.label(),
            "files": paths, "skipped": frozen.skipped, "pending": pending, "message": message}


def _discard(folder: Path) -> None:
    """Remove a frozen copy: rename it aside first, so a crash never leaves a half record."""
    trash = folder.with_name(f"{TMP_PREFIX}{folder.name}")
    os.rename(folder, trash)
    shutil.rmtree(trash, ignore_errors=True)
    try:
        folder.parent.rmdir()
    except OSError:
        pass


def publish(source: Path, machine: Path, store: Store, *, team: bool = False) -> dict:
    """Freeze `source` as a fresh revision and upload it to `store`. `team`: the store is the team's, which
    refuses a member it lets only read in the one line every team write gives, keeping nothing
    (memory/team_writes.py)."""
    frozen = freeze(source, machine, store.description)
    try:
        return upload(frozen, store)
    except AgentmemError as exc:
        from agentmem.memory import team_writes

        if not (team and team_writes.refused(exc)):
            raise
        _discard(frozen.folder)
        raise team_writes.read_only(store.description, "published") from None


def resume(machine: Path, name: str, revision: str, *, opener: Callable[..., Store] | None = None,
           timeout: float | None = None) -> dict:
    """Finish an interrupted publication: same frozen files, same revision, the store it recorded."""
    from agentmem.store.opening import open_store

    frozen = load_frozen(machine, name, revision)
    store = (opener or open_store)(frozen.store, timeout=timeout)
    return upload(frozen, store)
