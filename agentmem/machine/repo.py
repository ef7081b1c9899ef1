"""Keep the machine folder a git repository so `copier update` can merge template changes.

Run by Copier's last task: `python -m agentmem.machine.repo "message"`. Machine data
(cache, pending, venv) is gitignored by the template, so a commit never holds a note.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# Used only when the user has no git identity configured.
FALLBACK_IDENTITY = ["-c", "user.name=agentmem setup", "-c", "user.email=agentmem@localhost"]


def _git(machine: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=machine, check=check, text=True, capture_output=True)


def commit(machine: Path, message: str) -> bool:
    """`git init` if needed, then commit everything not ignored. True if a commit was made."""
    if not (machine / ".git").exists():
        _git(machine, "init", "-q")
    _git(machine, "add", "-A")
    if _git(machine, "diff", "--cached", "--quiet", check=False).returncode == 0:
        return False
    has_identity = _git(machine, "config", "user.email", check=False).stdout.strip()
    _git(machine, *([] if has_identity else FALLBACK_IDENTITY), "commit", "-q", "--no-verify", "-m", message)
    return True


def commit_config(machine: Path, message: str) -> bool:
    """Commit config.toml alone, when the machine folder is a git repository (set up by Copier).

    `agentmem map` calls this so a new mapping does not leave the tree dirty, which would
    make the next `copier update` refuse to run. Nothing else in the folder is touched.
    """
    if not (machine / ".git").exists():
        return False
    _git(machine, "add", "--", "config.toml")
    if _git(machine, "diff", "--cached", "--quiet", "--", "config.toml", check=False).returncode == 0:
        return False
    has_identity = _git(machine, "config", "user.email", check=False).stdout.strip()
    _git(machine, *([] if has_identity else FALLBACK_IDENTITY), "commit", "-q", "--no-verify", "-m", message,
         "--", "config.toml")
    return True


if __name__ == "__main__":
    msg = sys.argv[1] if len(sys.argv) > 1 else "Update agentmem machine folder"
    made = commit(Path.cwd(), msg)
    print("agentmem: machine folder committed" if made else "agentmem: machine folder already committed")
