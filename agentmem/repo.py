"""Keep the machine folder a git repository so `copier update` can merge template changes.

Run by Copier's tasks: `python -m agentmem.repo "message"`. Machine data
(cache, pending, venv) is gitignored by the template, so a commit never holds a note.
INV no-markers-committed: nothing holding a merge-conflict marker is committed; a conflicted
upgrade ends with one instruction (resolve the markers, then `setup`, which commits).

These commits are agentmem's own bookkeeping in its own folder, so they must work on a
machine where git has no identity (a fresh CI runner, a container): when git cannot
name an author or committer, the commit uses a local identity for that one command
(`-c user.name=... -c user.email=...`), and no git configuration is changed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from agentmem.errors import InvalidInput

# Used only when git cannot determine an identity (no user.name/user.email, no GIT_* variables).
FALLBACK_IDENTITY = ["-c", "user.name=agentmem setup", "-c", "user.email=agentmem@localhost"]


def _git(machine: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=machine, check=check, text=True, capture_output=True)


def commit(machine: Path, message: str) -> bool:
    """`git init` if needed, then commit everything not ignored. True if a commit was made.

    Never commits merge-conflict markers (a `copier update` that met the owner's edits): it stages
    nothing and raises InvalidInput with the one way out (INV no-markers-committed)."""
    if not (machine / ".git").exists():
        _git(machine, "init", "-q")
    _git(machine, "add", "-A")
    if _git(machine, "diff", "--cached", "--quiet", check=False).returncode == 0:
        return False
    found = conflicted(machine, staged=True)
    if found:
        _git(machine, "reset", "-q", check=False)
        raise conflicts_error(machine, found)
    _git(machine, *identity(machine), "commit", "-q", "--no-verify", "-m", message)
    return True


def head(machine: Path) -> str | None:
    """The commit the folder's HEAD names, or None (no repository, no commit yet)."""
    done = _git(machine, "rev-parse", "--verify", "--quiet", "HEAD", check=False)
    return done.stdout.strip() or None if done.returncode == 0 else None


def uncommit(machine: Path, commit: str) -> bool:
    """Take back `commit`, the last one made here, when HEAD is still it and nothing changed since: its changes
    stay in the files, uncommitted, as before it was made. True if it was taken back."""
    if head(machine) != commit or _git(machine, "status", "--porcelain", check=False).stdout.strip():
        return False
    if _git(machine, "rev-parse", "--verify", "--quiet", f"{commit}~1", check=False).returncode != 0:
        return False
    return _git(machine, "reset", "-q", f"{commit}~1", check=False).returncode == 0


def conflicted(machine: Path, *, staged: bool = False) -> list[tuple[str, int]]:
    """(file, line of its first conflict marker) for each file of the folder's that holds one: the staged
    changes with `staged`, else every tracked or new file."""
    from agentmem.config import conflict_line

    if staged:
        names = _git(machine, "diff", "--cached", "--name-only", "-z", check=False).stdout.split("\0")
    else:
        names = _git(machine, "ls-files", "-c", "-o", "--exclude-standard", "-z", check=False).stdout.split("\0")
    out = []
    for rel in sorted(n for n in names if n):
        try:
            text = (machine / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        line = conflict_line(text)
        if line:
            out.append((rel, line))
    return out


def conflicts_error(machine: Path, found: list[tuple[str, int]]) -> InvalidInput:
    """The one instruction for a folder holding conflict markers: resolve them, then run setup (which
    checks the machine again and commits it)."""
    from agentmem.errors import Command, InvalidInput, NextStep

    where = ", ".join(f"{rel} (line {line})" for rel, line in found)
    return InvalidInput(
        f"{machine} holds unresolved conflicts from `copier update` in {where}; nothing was committed",
        hint=NextStep("edit each file: keep one side of each conflict and delete the <<<<<<<, ======= and "
                      ">>>>>>> lines; then run `{}`, which checks the machine again and commits it",
                      Command("setup", helper=_helper(machine))))


def _helper(machine: Path) -> list[str] | None:
    """The machine folder's own helper, when it has one (the command a person should run)."""
    launcher = machine / ".venv" / "bin" / "agentmem"
    return [str(launcher)] if launcher.is_file() else None


def identity(machine: Path) -> list[str]:
    """Nothing when git can name both author and committer here; else the local fallback identity.

    `git var` applies git's own rules (config, GIT_AUTHOR_*/GIT_COMMITTER_* variables, and the
    strict check that refuses an auto-detected `user@host.(none)`), so a set email without a
    name, or a name without an email, is caught too.
    """
    for who in ("GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"):
        if _git(machine, "var", who, check=False).returncode != 0:
            return list(FALLBACK_IDENTITY)
    return []


def committed_text(machine: str | os.PathLike, rel: str) -> str | None:
    """The text of `rel` at the machine folder's HEAD, or None when the folder is no git
    repository, has no commit yet, or HEAD has no such file."""
    machine = Path(machine)
    if not (machine / ".git").exists():
        return None
    shown = _git(machine, "show", f"HEAD:{rel}", check=False)
    return shown.stdout if shown.returncode == 0 else None


def _plumbing(machine: Path, *args: str, env: dict | None = None, stdin: str | None = None) -> str:
    return subprocess.run(["git", *args], cwd=machine, env=env, input=stdin, check=True, text=True,
                          capture_output=True).stdout.strip()


def commit_text(machine: str | os.PathLike, rel: str, text: str, message: str) -> bool:
    """Commit `text` as the content of `rel` on top of HEAD, and nothing else. True if a commit was made.

    Built in a private index, so what the user staged or edited stays as it was: `map` commits
    its own line of config.toml, not the user's unrelated edits. The real index entry of `rel`
    follows the commit only where it still matched HEAD (nothing of the user's was staged there).
    """
    machine = Path(machine)
    head = _plumbing(machine, "rev-parse", "--verify", "HEAD")
    listed = _plumbing(machine, "ls-tree", "HEAD", "--", rel).split()  # mode, "blob", id, path
    mode, old_blob = (listed[0], listed[2]) if len(listed) >= 3 else ("100644", "")
    blob = _plumbing(machine, "hash-object", "-w", "--stdin", stdin=text)
    private = machine / ".git" / f"agentmem-index-{os.getpid()}"
    env = {**os.environ, "GIT_INDEX_FILE": str(private)}
    try:
        _plumbing(machine, "read-tree", "HEAD", env=env)
        _plumbing(machine, "update-index", "--add", "--cacheinfo", f"{mode},{blob},{rel}", env=env)
        tree = _plumbing(machine, "write-tree", env=env)
    finally:
        private.unlink(missing_ok=True)
    if tree == _plumbing(machine, "rev-parse", "HEAD^{tree}"):
        return False
    has_identity = _git(machine, "config", "user.email", check=False).stdout.strip()
    made = _plumbing(machine, *([] if has_identity else FALLBACK_IDENTITY), "commit-tree", tree, "-p", head,
                     "-m", message)
    _plumbing(machine, "update-ref", "-m", f"commit: {message}", "HEAD", made, head)
    staged = _plumbing(machine, "ls-files", "--stage", "--", rel).split()  # mode, id, stage, path
    if len(staged) >= 2 and staged[1] == old_blob:
        _plumbing(machine, "update-index", "--cacheinfo", f"{staged[0]},{blob},{rel}")
    return True


if __name__ == "__main__":
    from agentmem.errors import AgentmemError

    msg = sys.argv[1] if len(sys.argv) > 1 else "Update agentmem machine folder"
    try:
        made = commit(Path.cwd(), msg)
    except AgentmemError as exc:  # conflicts: one line, and Copier stops before setup adds another
        sys.stderr.write(f"agentmem: {exc.one_line()}\n")
        raise SystemExit(exc.exit_code) from None
    print("agentmem: machine folder committed" if made else "agentmem: machine folder already committed")
