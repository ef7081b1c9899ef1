"""Install the core `agent-memory` skill into a runtime's skill folder, never over local edits.

The skill's source is the copy Copier rendered into the machine folder (so it
comes from the installed template revision and nowhere else). Installed file
hashes are recorded in `installed.json` in the machine folder; an installed
skill whose files no longer match that record has local edits and is kept.

INV core-skill-edits: a locally edited core skill is never replaced silently;
replacing it takes an explicit request and keeps a backup.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from agentmem import userfiles
from agentmem.errors import Command, InvalidInput
from agentmem.fsutil import TMP_PREFIX, write_atomic
from agentmem.skills.spec import CORE_SKILL

MANIFEST = "installed.json"
HELPER_TOKEN = "@AGENTMEM@"  # replaced by the recorded helper command at install time
HELPER_DIR_TOKEN = "@AGENTMEM_DIR@"  # the folder of the helper's executable (Copilot's --add-dir), quoted


@dataclass(frozen=True)
class SkillInstall:
    runtime: str
    path: Path
    status: str  # installed | updated | unchanged | kept-local-edits | not-ours
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status in ("installed", "updated", "unchanged")


def skill_source(machine: Path) -> Path:
    return machine / CORE_SKILL


def render_files(source: Path, helper: str) -> dict[str, bytes]:
    """The skill's files, relative path -> bytes, with the helper command filled in."""
    if not (source / "SKILL.md").is_file():
        raise InvalidInput(f"the core skill is missing from {source}", hint="rerun copier update or copier copy")
    import shlex

    words = shlex.split(helper)
    folder = shlex.quote(os.path.dirname(words[0])) if words else ""
    files = {}
    for path in sorted(source.rglob("*")):
        if path.is_symlink() or not path.is_file() or path.name.startswith(TMP_PREFIX):
            continue
        data = path.read_bytes()
        if path.suffix == ".md":
            data = data.replace(HELPER_TOKEN.encode(), helper.encode()).replace(HELPER_DIR_TOKEN.encode(),
                                                                                folder.encode())
        files[path.relative_to(source).as_posix()] = data
    return files


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _hashes_on_disk(dest: Path) -> dict[str, str]:
    out = {}
    for path in dest.rglob("*"):
        if path.is_symlink():
            out[path.relative_to(dest).as_posix()] = "symlink"
        elif path.is_file():
            out[path.relative_to(dest).as_posix()] = _digest(path.read_bytes())
    return out


def compare(files: dict[str, bytes], dest: Path) -> str:
    """How the skill at `dest` stands against `files`: "current", "missing" or "different"."""
    if dest.is_symlink() and not dest.exists():
        return "missing"
    if not dest.is_dir():
        return "missing"
    wanted = {rel: _digest(data) for rel, data in files.items()}
    return "current" if _hashes_on_disk(dest) == wanted else "different"


def load_manifest(machine: Path) -> dict:
    try:
        data = json.loads((machine / MANIFEST).read_text("utf-8"))
    except FileNotFoundError:
        return {}
    except (ValueError, UnicodeDecodeError):
        raise InvalidInput(f"{machine / MANIFEST} is not valid JSON; move it away and rerun setup") from None
    return data if isinstance(data, dict) else {}


def _save_manifest(machine: Path, manifest: dict) -> None:
    write_atomic(machine / MANIFEST, (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode())


def _write_tree(dest: Path, files: dict[str, bytes]) -> None:
    """Replace `dest` by a folder holding exactly `files`, swapping whole folders by rename."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    stamp = f"{os.getpid()}-{time.time_ns()}"
    fresh = dest.with_name(f"{TMP_PREFIX}{dest.name}-new-{stamp}")
    for rel, data in files.items():
        write_atomic(fresh / rel, data)
    if dest.exists():
        old = dest.with_name(f"{TMP_PREFIX}{dest.name}-old-{stamp}")
        os.replace(dest, old)
        os.replace(fresh, dest)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(fresh, dest)


def _backup(machine: Path, dest: Path, runtime: str) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = machine / "backups" / f"{CORE_SKILL}-{runtime}-{stamp}-{os.getpid()}"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(dest), str(target))
    return target


def install_core_skill(
    files: dict[str, bytes], dest: Path, machine: Path, runtime: str, *, replace: bool = False
) -> SkillInstall:
    """Install `files` as the core skill at `dest`, unless that would overwrite someone's edits.

    `replace=True` moves an edited or foreign folder into `<home>/backups/` first. The skill
    folder above `dest` follows INV user-files: through a link, never through a dangling one,
    never into a read-only folder (InvalidInput, NoAccess).
    """
    userfiles.prepare_folder(dest.parent)  # INV user-files: no folders through a dangling link
    manifest = load_manifest(machine)
    installs = manifest.setdefault("core-skill", {})
    key = str(dest)
    wanted = {rel: _digest(data) for rel, data in files.items()}
    recorded = (installs.get(key) or {}).get("files")
    detail = ""

    if dest.is_symlink() or (dest.exists() and not dest.is_dir()):
        current = None
    elif dest.exists():
        current = _hashes_on_disk(dest)
    else:
        current = {}

    if current == wanted and recorded == wanted:
        return SkillInstall(runtime, dest, "unchanged")
    if current == wanted:  # same bytes, not recorded yet: adopt it
        installs[key] = {"files": wanted}
        _save_manifest(machine, manifest)
        return SkillInstall(runtime, dest, "unchanged")

    foreign = current is None or (current and recorded is None)
    edited = bool(current) and recorded is not None and current != recorded
    if foreign or edited:
        status = "not-ours" if foreign else "kept-local-edits"
        if not replace:
            why = "is not an installation agentmem recorded" if foreign else "has local edits"
            return SkillInstall(
                runtime, dest, status,
                f"{dest} {why}; it was kept. Compare it with {skill_source(machine)}, then rerun "
                f"`{Command('setup', '--replace-core-skill').line()}` to replace it (a backup is kept)",
            )
        detail = f"previous copy backed up to {_backup(machine, dest, runtime)}"

    existed = dest.exists()
    _write_tree(dest, files)
    installs[key] = {"files": wanted}
    _save_manifest(machine, manifest)
    return SkillInstall(runtime, dest, "updated" if existed or detail else "installed", detail)


def remove_core_skill(dest: Path, machine: Path, runtime: str) -> SkillInstall:
    """Take out the core skill agentmem installed at `dest` (a runtime no longer enabled).

    Only an installation recorded in `installed.json` whose files are still exactly the
    recorded ones is removed; an edited or foreign folder is kept (INV core-skill-edits).
    """
    manifest = load_manifest(machine)
    installs = manifest.get("core-skill") or {}
    recorded = (installs.get(str(dest)) or {}).get("files")
    if recorded is None or dest.is_symlink() or not dest.is_dir():
        return SkillInstall(runtime, dest, "absent")
    if _hashes_on_disk(dest) != recorded:
        return SkillInstall(runtime, dest, "kept-local-edits", f"{dest} has local edits; it was kept")
    userfiles.check_writable(dest.parent, folder=True)  # INV user-files: a read-only skill folder is left alone
    old = dest.with_name(f"{TMP_PREFIX}{dest.name}-old-{os.getpid()}-{time.time_ns()}")
    os.replace(dest, old)  # one rename: a runtime never sees half a skill
    shutil.rmtree(old, ignore_errors=True)
    del installs[str(dest)]
    _save_manifest(machine, manifest)
    return SkillInstall(runtime, dest, "removed")
