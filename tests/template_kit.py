"""Helpers for the template tests: a real git template repo, throwaway homes, real copier runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
USER_AGENTS = "# My Codex rules\n\nAlways answer in French.\n"
USER_CLAUDE = "# Claude rules\r\nNo emojis.\r\n"  # CRLF on purpose
TEMPLATE_FILES = ["copier.yml", "template", "agentmem", "pyproject.toml"]
GIT_ID = ["-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *GIT_ID, *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def make_template_repo(root: Path, tag: str = "v1.0.0", files=TEMPLATE_FILES) -> Path:
    """A git repo holding this checkout's template and helper, committed and tagged like a release."""
    repo = root / "template-repo"
    repo.mkdir(parents=True)
    for name in files:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, repo / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(src, repo / name)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "release")
    git(repo, "tag", tag)
    return repo


def release(repo: Path, tag: str, edits: dict[str, str]) -> None:
    """Commit `edits` (path -> new text) to the template repo and tag them."""
    for rel, text in edits.items():
        (repo / rel).write_text(text, encoding="utf-8")
    git(repo, "commit", "-q", "-am", f"release {tag}")
    git(repo, "tag", tag)


def render_tasks_skipped(template_repo: Path, tmp_path: Path, monkeypatch, **answers) -> tuple[Path, Path, Path]:
    """A machine folder rendered by copier with its tasks skipped (no helper venv, no setup), in a throwaway
    HOME whose app folder `user/app` is mapped to project `app` on a folder store at `tmp_path/store` (not
    created); `answers` adds to or replaces the Copier answers. Returns (machine folder, store, user home)."""
    import copier

    user, folder, store = tmp_path / "user", tmp_path / "user" / "agentmem", tmp_path / "store"
    (user / "app").mkdir(parents=True)
    for key in [k for k in os.environ if k.startswith(("AGENTMEM_", "CODEX_", "XDG_"))]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", str(user))
    data = {"bucket": str(store), "projects": {str(user / "app"): "app"}, "runtimes": ["codex", "claude"]} | answers
    copier.run_copy(str(template_repo), str(folder), vcs_ref="v1.0.0", defaults=True, unsafe=True, skip_tasks=True,
                    quiet=True, data=data)
    return folder, store, user


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@dataclass
class Machine:
    user: Path  # HOME
    env: dict

    @property
    def folder(self) -> Path:  # the default machine folder, which the helper finds without AGENTMEM_HOME
        return self.user / ".config" / "agentmem"

    @property
    def helper(self) -> Path:
        return self.folder / ".venv" / "bin" / "agentmem"

    def copier(self, *args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
        proc = subprocess.run([sys.executable, "-m", "copier", *args], cwd=cwd, env=self.env,
                              capture_output=True, text=True, timeout=300)
        if check:
            assert proc.returncode == 0, (proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:])
        return proc

    def copy(self, src, *, ref: str, cwd: Path, data: dict | None = None, check: bool = True, args=()):
        extra = [f"--data={k}={v}" for k, v in (data or {}).items()]
        return self.copier("copy", "--trust", "--defaults", "-r", ref, *args, *extra, str(src), str(self.folder),
                           cwd=cwd, check=check)

    def update(self, *, ref: str, check: bool = True):
        return self.copier("update", "--trust", "--defaults", "-r", ref, str(self.folder), cwd=self.user, check=check)

    def run(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.helper), *args], cwd=cwd or self.user, env=self.env,
                              capture_output=True, text=True, timeout=120)


def make_machine(root: Path, name: str) -> Machine:
    user = root / name
    user.mkdir(parents=True)
    drop = ("AGENTMEM_", "HF_", "CODEX_", "XDG_", "PYTHON", "COPIER_", "GIT_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(HOME=str(user), HF_HUB_DISABLE_PROGRESS_BARS="1", GIT_CONFIG_NOSYSTEM="1")
    return Machine(user, env)


def plant_user_files(user: Path) -> None:
    """A user's own instructions and skills, there before agentmem arrives."""
    (user / ".codex").mkdir()
    (user / ".codex" / "AGENTS.md").write_text(USER_AGENTS)
    (user / ".claude").mkdir()
    (user / ".claude" / "CLAUDE.md").write_bytes(USER_CLAUDE.encode())
    for root in (user / ".agents" / "skills", user / ".claude" / "skills"):
        (root / "my-skill" / "scripts").mkdir(parents=True)
        (root / "my-skill" / "SKILL.md").write_text("---\nname: my-skill\ndescription: mine\n---\nbody\n")
        (root / "my-skill" / "scripts" / "run.sh").write_text("echo hi\n")


@dataclass
class SetUp:
    """A machine as `copier copy` left it, and the world around it."""

    m: Machine
    template_repo: Path  # tagged v1.0.0, the revision the machine was copied from
    project: Path  # the directory the copy ran in, mapped to project "app"
    store: Path  # the machine's folder store


def copy_laptop(root: Path) -> SetUp:
    """Under `root`: the user's own files (`plant_user_files`), then a real `copier copy` of v1.0.0 for
    Codex and Claude Code, run in ~/app, onto the folder store <root>/store."""
    template_repo = make_template_repo(root)
    m = make_machine(root, "laptop")
    plant_user_files(m.user)
    project, store = m.user / "app", root / "store"
    project.mkdir()
    m.copy(template_repo, ref="v1.0.0", cwd=project, data={"bucket": str(store), "runtimes": '["codex", "claude"]'})
    return SetUp(m, template_repo, project, store)
