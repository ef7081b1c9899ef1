"""Shared skills: publish an immutable revision, resume an interrupted one, discover, read.

Installation lives in `skill_install.py`; names, limits and SKILL.md parsing in `skillfmt.py`.

A publication first freezes the source folder into
`$AGENTMEM_HOME/pending-skills/<name>/<revision>/` (files under `files/`, the
record in `entry.json` with the destination store), then uploads every supporting
file to `skills/<name>/<revision>/...` and `SKILL.md` last. The frozen copy is
removed only after the store confirmed `SKILL.md`. Readers treat a revision as
existing only once its `SKILL.md` does.

INV skill-entrypoint-last: SKILL.md of a revision is uploaded only after every other file of it.
INV skill-immutable: a published revision is never modified; an update is a new revision.

JSON shapes (`--json`):

publish-skill / publish-skill --resume:
    {"status": "published" | "pending", "name": str, "revision": str, "store": str,
     "files": [str, ...], "skipped": [str, ...], "pending": str | null, "message": str}
    "skipped": hidden entries of the source, left out. "pending": the frozen folder kept for
    `--resume` (null once published).
skills [QUERY]:
    {"status": "ok", "store": str, "query": str | null,
     "skills": [{"name": str, "installed": [{"runtime": str, "revision": str | null}],
                 "revisions": [{"revision": str, "description": str | null, "files": int,
                                "bytes": int, "problem": str | null}]}],   # newest revision first
     "pending": [{"name": str, "revision": str, "store": str, "created": str}]}
read-skill NAME REVISION [PATH]:
    {"status": "ok", "name": str, "revision": str, "path": str, "content": str,
     "files": [str, ...]}
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from agentmem import skillfmt
from agentmem.errors import TRANSIENT, AgentmemError, InvalidInput, NotFound
from agentmem.fsutil import TMP_PREFIX, write_atomic
from agentmem.home import cache_root
from agentmem.store.base import Store, StoreDescription

ENTRY = "entry.json"
FILES = "files"
INSTALL_MARKER = ".agentmem-skill.json"  # written into each installed skill folder by skill_install


def pending_root(home: Path) -> Path:
    return Path(home) / "pending-skills"


def revision_prefix(name: str, revision: str) -> str:
    return f"skills/{name}/{revision}"


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

    budget = skillfmt.Budget()
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
            skillfmt.check_file_path(rel)
            if stat.S_ISDIR(mode):
                walk(Path(entry.path), rel_parts + [entry.name])
            elif stat.S_ISREG(mode):
                fd = _open_regular(Path(entry.path))
                with os.fdopen(fd, "rb") as fh:
                    data = fh.read(skillfmt.MAX_FILE_BYTES + 1)
                budget.add(rel, len(data))
                write_atomic(dest / rel, data)
                files.append({"path": rel, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
            else:
                raise InvalidInput(f"{rel} is not a regular file or folder")

    walk(source, [])
    return files, skipped


def _refuse_secrets(folder: Path, files: list[dict]) -> None:
    """INV no-credentials: a skill whose text files carry a credential is not published (binary files are skipped)."""
    from agentmem import secrets_scan

    found = secrets_scan.scan_files([folder / f["path"] for f in files], folder, known=secrets_scan.env_secrets())
    if found:
        places = [f"{path} {f.describe()}" for path, f in found]
        secrets_scan.raise_for(places, action="publish", redact_option=False)


def freeze(source: Path, home: Path, store: StoreDescription) -> Frozen:
    """Validate `source` and freeze it, with a fresh revision, as a pending publication."""
    source = Path(os.path.abspath(source))
    if not source.is_dir():
        raise InvalidInput(f"{source} is not a folder holding a skill")
    dir_name = source.name
    if dir_name == skillfmt.CORE_SKILL:
        skillfmt.check_name(dir_name)  # raises: the reserved core skill
    revision = skillfmt.new_revision()
    root = pending_root(home)
    root.mkdir(parents=True, exist_ok=True)
    staging = root / f"{TMP_PREFIX}{revision}"
    try:
        files, skipped = _copy_tree(source, staging / FILES)
        if not (staging / FILES / skillfmt.ENTRYPOINT).is_file():
            raise InvalidInput(f"{source} has no {skillfmt.ENTRYPOINT}")
        meta = skillfmt.parse_skill_md((staging / FILES / skillfmt.ENTRYPOINT).read_bytes())
        name = skillfmt.check_name(meta["name"])
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
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
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


def load_frozen(home: Path, name: str, revision: str) -> Frozen:
    """Read a pending publication back and check its frozen files are still the ones recorded."""
    import hashlib

    skillfmt.check_name(name)
    skillfmt.check_revision(revision)
    folder = pending_root(home) / name / revision
    try:
        entry = json.loads((folder / ENTRY).read_text())
        files, store = entry["files"], StoreDescription.from_dict(entry["store"])
        paths = [skillfmt.check_file_path(item["path"]) for item in files]
    except FileNotFoundError:
        raise NotFound(
            f"no pending publication {name} {revision}",
            hint="`agentmem skills` lists pending publications and published revisions",
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


def pending_publications(home: Path) -> list[dict]:
    out = []
    root = pending_root(home)
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
    prefix = revision_prefix(frozen.name, frozen.revision)
    paths = [f["path"] for f in frozen.files]
    supporting = [p for p in paths if p != skillfmt.ENTRYPOINT]
    resume = f"agentmem publish-skill --resume {frozen.name} {frozen.revision}"
    try:
        for rel in supporting:
            store.put(f"{prefix}/{rel}", frozen.data(rel))
        store.put(f"{prefix}/{skillfmt.ENTRYPOINT}", frozen.data(skillfmt.ENTRYPOINT))  # INV skill-entrypoint-last
    except TRANSIENT as exc:
        return _result("pending", frozen, paths, str(frozen.folder),
                       f"not confirmed by the store ({exc.one_line()}); kept locally, retry with `{resume}`")
    except AgentmemError as exc:
        exc.hint = f"kept locally; retry with `{resume}`" + (f"; {exc.hint}" if exc.hint else "")
        raise
    _discard(frozen.folder)
    return _result("published", frozen, paths, None,
                   f"published {frozen.name} revision {frozen.revision} to {frozen.store.label()}")


def _result(status: str, frozen: Frozen, paths: list[str], pending: str | None, message: str) -> dict:
    if frozen.skipped:
        message += f" (left out hidden: {', '.join(frozen.skipped)})"
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


def publish(source: Path, home: Path, store: Store) -> dict:
    """Freeze `source` as a fresh revision and upload it to `store`."""
    return upload(freeze(source, home, store.description), store)


def resume(home: Path, name: str, revision: str, *, opener=None, timeout: float | None = None) -> dict:
    """Finish an interrupted publication: same frozen files, same revision, the store it recorded."""
    from agentmem.store import open_store

    frozen = load_frozen(home, name, revision)
    store = (opener or open_store)(frozen.store, timeout=timeout)
    return upload(frozen, store)


# ---------------------------------------------------------------- discovery and reading


def _skill_md(store: Store, home: Path | None, name: str, revision: str) -> bytes:
    """A revision's SKILL.md, from the local cache when present (revisions never change)."""
    cached = None
    if home is not None:
        cached = Path(cache_root(home)) / store.description.key / "skills" / name / revision / skillfmt.ENTRYPOINT
        try:
            return cached.read_bytes()
        except OSError:
            pass
    data = store.get(f"{revision_prefix(name, revision)}/{skillfmt.ENTRYPOINT}")
    if cached is not None and len(data) <= skillfmt.MAX_FILE_BYTES:
        write_atomic(cached, data)
    return data


def discover(store: Store, query: str | None = None, *, home: Path | None = None,
             runtimes: list | None = None) -> list[dict]:
    """Skills in the store with their complete revisions (those whose SKILL.md exists), newest first.

    `query` keeps skills whose name or a revision's description contains it (case-insensitive).
    """
    revisions: dict[tuple[str, str], dict] = {}
    for obj in store.list("skills"):
        parts = obj.path.split("/")
        if len(parts) < 4 or not skillfmt.is_valid_name(parts[1]) or parts[1] == skillfmt.CORE_SKILL:
            continue
        rev = revisions.setdefault((parts[1], parts[2]), {"files": 0, "bytes": 0, "entry_size": None})
        rev["files"] += 1
        rev["bytes"] += obj.size
        if len(parts) == 4 and parts[3] == skillfmt.ENTRYPOINT:
            rev["entry_size"] = obj.size
    needle = query.casefold() if query else None
    skills: dict[str, list[dict]] = {}
    for (name, revision), rev in sorted(revisions.items()):
        if rev["entry_size"] is None:
            continue  # incomplete: SKILL.md not written yet
        description, problem = None, None
        if rev["entry_size"] > skillfmt.MAX_FILE_BYTES:
            problem = "SKILL.md is too large"
        else:
            try:
                meta = skillfmt.parse_skill_md(_skill_md(store, home, name, revision))
                description = meta["description"]
                if meta["name"] != name:
                    problem = f"SKILL.md declares name {meta['name']!r}"
            except (InvalidInput, NotFound) as exc:
                problem = exc.one_line()
        skills.setdefault(name, []).append({"revision": revision, "description": description,
                                            "files": rev["files"], "bytes": rev["bytes"], "problem": problem})
    out = []
    for name, revs in sorted(skills.items()):
        if needle and needle not in name.casefold() and not any(
            needle in (r["description"] or "").casefold() for r in revs
        ):
            continue
        revs.sort(key=lambda r: r["revision"], reverse=True)
        out.append({"name": name, "installed": installed_revisions(name, runtimes or []), "revisions": revs})
    return out


def installed_revisions(name: str, runtimes: list) -> list[dict]:
    """Which revision of `name` each runtime has installed (revision None: installed by other means)."""
    out = []
    for rt in runtimes:
        folder = Path(rt.skills_root) / name
        if not os.path.lexists(folder):
            continue
        revision = None
        try:
            revision = json.loads((folder / INSTALL_MARKER).read_text()).get("revision")
        except (OSError, ValueError, AttributeError):
            pass
        out.append({"runtime": rt.name, "revision": revision})
    return out


def read_file(store: Store, name: str, revision: str, path: str = skillfmt.ENTRYPOINT) -> dict:
    """One file of a complete revision, and the revision's file list."""
    skillfmt.check_name(name)
    skillfmt.check_revision(revision)
    skillfmt.check_file_path(path)
    prefix = revision_prefix(name, revision)
    listing = store.list(prefix)
    files = sorted(o.path[len(prefix) + 1:] for o in listing)
    if skillfmt.ENTRYPOINT not in files:
        raise NotFound(f"no published revision {revision} of skill {name}",
                       hint="`agentmem skills` lists published revisions")
    if path not in files:
        raise NotFound(f"skill {name} revision {revision} has no file {path}")
    size = next(o.size for o in listing if o.path == f"{prefix}/{path}")
    if size > skillfmt.MAX_FILE_BYTES:
        raise InvalidInput(f"{path} is {size} bytes, over the {skillfmt.MAX_FILE_BYTES}-byte skill file limit")
    data = store.get(f"{prefix}/{path}")
    return {"status": "ok", "name": name, "revision": revision, "path": path,
            "content": data.decode("utf-8", errors="replace"), "files": files}
