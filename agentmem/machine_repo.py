"""Keep the machine folder a git repository so `copier update` can merge template changes.

Run by Copier's last task: `python -m agentmem.machine_repo "message"`. Machine data
(cache, pending, venv) is gitignored by the template, so a commit never holds a note.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# Used only when the user has no git identity configured.
FALLBACK_IDENTITY = ["-c", "user.name=agentmem setup", "-c", "user.email=agentmem@localhost"]


def _git(home: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=home, check=check, text=True, capture_output=True)


def commit(home: Path, message: str) -> bool:
    """`git init` if needed, then commit everything not ignored. True if a commit was made."""
    if not (home / ".git").exists():
        _git(home, "init", "-q")
    _git(home, "add", "-A")
    if _git(home, "diff", "--cached", "--quiet", check=False).returncode == 0:
        return False
    has_identity = _git(home, "config", "user.email", check=False).stdout.strip()
    _git(home, *([] if has_identity else FALLBACK_IDENTITY), "commit", "-q", "--no-verify", "-m", message)
    return True


if __name__ == "__main__":
    msg = sys.argv[1] if len(sys.argv) > 1 else "Update agentmem machine folder"
    made = commit(Path.cwd(), msg)
    print("agentmem: machine folder committed" if made else "agentmem: machine folder already committed")
