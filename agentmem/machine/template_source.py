"""The template revision a machine folder came from, and the one an upgrade would move it to.

Copier records the template's revision as `_commit` in `.copier-answers.yml` and `copier update`
checks it out again to merge. Two things make that record lie:

- A copy from a checkout with uncommitted or untracked files: Copier commits the working tree in a
  throwaway clone and records *that* commit (`v1.0.0-1-g<sha>`), which exists nowhere else, so every
  later update fails ("Unknown revision"). `repair` replaces it with the real commit it was made from
  (its parent: the tag plus one fewer commit) and says so; setup runs it on every copy, and
  `agentmem upgrade` before updating, so a machine that already has one is mended too. When those
  changes touch what Copier renders (`copier.yml`, `template/`), mending would record a revision
  whose files the folder does not hold, and the first upgrade would take the difference for the
  owner's edits: setup refuses such a copy first (`check_copy`, INV clean-template-copy).
- Releases: Copier updates to the newest PEP 440 tag (pre-releases aside) unless given a ref; without
  tags, to the checkout's HEAD. `target` computes the same, so `upgrade` can say where it goes, or
  "already at" it without running Copier at all.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from typing import Any

ANSWERS = ".copier-answers.yml"
RENDERED = ("copier.yml", "template")  # what Copier renders a machine folder from (copier.yml: _subdirectory)
HELPER = ("agentmem", "pyproject.toml")  # what the installer (helper_venv.py) builds the helper from
MAX_LISTED = 5  # changed files a message names
_DESCRIBE = re.compile(r"^(?P<tag>.+)-(?P<count>\d+)-g(?P<sha>[0-9a-f]{4,40})$")


def _git(src: str, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", src, *args], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def recorded(machine: Path) -> tuple[str | None, str | None]:
    """(`_src_path`, `_commit`) from the machine folder's answers, each None when absent."""
    try:
        text = (machine / ANSWERS).read_text(encoding="utf-8")
    except OSError:
        return None, None
    found = {k: v.strip().strip("'\"") for k, v in re.findall(r"^(_src_path|_commit):[ \t]*(.*)$", text, re.M)}
    return found.get("_src_path") or None, found.get("_commit") or None


def resolve(src: str, ref: str) -> str | None:
    """The full commit `ref` names in the template repository, or None when it names none there."""
    return _git(src, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")


def _made_from(src: str, ref: str) -> str | None:
    """The real commit a throwaway one (`TAG-N-g<sha>`) was made on: N-1 first-parent commits after TAG."""
    found = _DESCRIBE.match(ref)
    if found is None or resolve(src, found["tag"]) is None:
        return None
    count = int(found["count"])
    if count == 1:
        return resolve(src, found["tag"])
    later = (_git(src, "rev-list", "--first-parent", "--reverse", f"{found['tag']}..HEAD") or "").split()
    return later[count - 2] if len(later) >= count - 1 else None


def describe(src: str, commit: str) -> str:
    """How Copier names a commit: `git describe --tags --always`."""
    return _git(src, "describe", "--tags", "--always", commit) or commit


def _draft(machine: Path) -> tuple[str, str, str] | None:
    """(template checkout, the recorded `_commit`, the real commit it was made from) when the recorded one
    exists nowhere (Copier's commit of a checkout's uncommitted files); None when the record is sound or
    cannot be checked (no answers, no source repository)."""
    src, commit = recorded(machine)
    if not src or not commit or _git(src, "rev-parse", "--git-dir") is None or resolve(src, commit):
        return None
    base = _made_from(src, commit) or _git(src, "rev-parse", "HEAD")
    return (src, commit, base) if base is not None else None


def _changed(src: str, base: str, paths: tuple[str, ...]) -> list[str]:
    """The files under `paths` in which the checkout's working tree differs from `base`, new ones included."""
    tracked = (_git(src, "diff", "--name-only", base, "--", *paths) or "").splitlines()
    new = (_git(src, "ls-files", "--others", "--exclude-standard", "--", *paths) or "").splitlines()
    return sorted({p for p in tracked + new if p})


def _listed(paths: list[str]) -> str:
    return ", ".join(paths[:MAX_LISTED]) + (f" and {len(paths) - MAX_LISTED} more" if len(paths) > MAX_LISTED else "")


def check_copy(machine: Path) -> str | None:
    """A copy Copier made from a checkout with uncommitted changes (its `_commit` exists nowhere): refused
    (InvalidInput) when they touch what Copier renders, since the folder then holds files its recorded
    revision lacks, which the first upgrade takes for the owner's own edits and conflicts on; else what
    the helper took from them (a warning), or None. Setup runs it first; `repair` then records the base."""
    found = _draft(machine)
    if found is None:
        return None
    src, commit, base = found
    name = describe(src, base)
    rendered = _changed(src, base, RENDERED)
    if rendered:
        from agentmem.errors import InvalidInput

        raise InvalidInput(
            f"this machine folder was copied from uncommitted changes in the template checkout {src} "
            f"({_listed(rendered)}); it holds them but would record {name}, which lacks them, so the first "
            "upgrade would take them for your own edits and conflict in files you never touched; nothing "
            "else was set up",
            hint=f"commit those changes in {src} (or undo them), then run the same copy again, adding --overwrite "
                 "(the folder's cache and pending notes stay)")
    helper = _changed(src, base, HELPER)
    if not helper:
        return None
    return (f"the helper was installed from uncommitted changes in the template checkout {src} ({_listed(helper)}); "
            f"this machine records {name}, which lacks them; `upgrade` installs a committed revision")


def repair(machine: Path) -> str | None:
    """Replace a recorded `_commit` that exists nowhere with the commit it was made from; what was done,
    in one line, or None when the record is sound (or cannot be checked: no answers, no source repo)."""
    found = _draft(machine)
    if found is None:
        return None
    src, commit, base = found
    name = describe(src, base)
    path = machine / ANSWERS
    text = path.read_text(encoding="utf-8")
    fixed = re.sub(r"^_commit:.*$", lambda _: f"_commit: {name}", text, count=1, flags=re.M)
    from agentmem.fsutil import write_atomic

    write_atomic(path, fixed.encode("utf-8"))
    return (f"the template revision recorded, {commit}, exists nowhere (Copier made it from a checkout with "
            f"uncommitted or untracked files); recorded {name}, the commit it was made from, so upgrades work")


def _versions(tags: list[str]) -> list[tuple[Any, str]]:
    """(version, tag) of each tag that is a PEP 440 release (pre-releases aside), oldest first."""
    from packaging.version import InvalidVersion, Version

    out = []
    for tag in tags:
        try:
            version = Version(tag)
        except InvalidVersion:
            continue
        if not version.is_prerelease:
            out.append((version, tag))
    return sorted(out)


def release_tags(src: str) -> list[str]:
    """The template's release tags, oldest first: a local checkout's, else the remote's (`git ls-remote`)."""
    if is_local_repo(src):
        return [tag for _, tag in _versions((_git(src, "tag", "--list") or "").split())]
    refs = remote_refs(src)
    return [tag for _, tag in _versions([r[len("refs/tags/"):] for r in refs or () if r.startswith("refs/tags/")])]


def _newest_tag(src: str) -> str | None:
    found = _versions((_git(src, "tag", "--list") or "").split())
    return found[-1][1] if found else None


def is_local_repo(src: str) -> bool:
    return os.path.isdir(src) and _git(src, "rev-parse", "--git-dir") is not None


def remote_refs(src: str) -> set[str] | None:
    """The tag and branch names (`refs/tags/v1.0.0`, `refs/heads/main`) a remote template offers, or None
    when it cannot be asked (offline, not a git URL)."""
    try:
        done = subprocess.run(["git", "ls-remote", "--tags", "--heads", "--", src], capture_output=True, text=True,
                              timeout=60, stdin=subprocess.DEVNULL, env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return {line.split("\t", 1)[1].removesuffix("^{}") for line in done.stdout.splitlines() if "\t" in line}


def has_revision(src: str, ref: str) -> bool | None:
    """Does the template at `src` have the revision `ref`? None when that cannot be told here (a remote
    that does not answer, a commit ID only a clone would know, a source that is no git repository)."""
    if is_local_repo(src):
        return resolve(src, ref) is not None
    if os.path.exists(src):
        return None
    refs = remote_refs(src)
    if refs is None or re.fullmatch(r"[0-9a-f]{4,40}", ref):
        return None
    return bool({ref, f"refs/tags/{ref}", f"refs/heads/{ref}"} & refs)


def file_at(src: str, commit: str, rel: str) -> str | None:
    """The text of `rel` at `commit` in a local template checkout, or None."""
    return _git(src, "show", f"{commit}:{rel}") if is_local_repo(src) else None


def target(src: str, ref: str | None) -> tuple[str, str, str] | None:
    """(the ref an update goes to, its commit, why that one), as Copier chooses it; None if unresolvable."""
    if ref:
        commit = resolve(src, ref)
        return (ref, commit, "as asked") if commit else None
    tag = _newest_tag(src)
    if tag is not None:
        commit = resolve(src, tag)
        return (tag, commit, "the newest release tag") if commit else None
    commit = resolve(src, "HEAD")
    if commit is None:
        return None
    return (describe(src, commit), commit, "the template checkout's HEAD: it has no release tags")
