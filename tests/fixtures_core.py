"""Machines in throwaway folders: each has its own AGENTMEM_HOME, like a separate computer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def in_ci(env=None) -> bool:
    """CI=true (or 1, yes), as CI services set it."""
    return (os.environ if env is None else env).get("CI", "").strip().lower() in ("true", "1", "yes")


def missing_prerequisite(reason: str):
    """Skip a test whose prerequisite (an agent CLI, an optional extra) is missing, naming the reason;
    under CI fail it instead, so a CI run never passes without having run everything."""
    if in_ci():
        pytest.fail(f"{reason}; CI={os.environ.get('CI')} requires every prerequisite", pytrace=False)
    pytest.skip(reason)


def _cli() -> list[str]:
    """How the tests start the real CLI: as the installed launcher does (machine/helper_venv.py), `python -S`
    calling `launch.main` with the launcher's path, here this venv's `agentmem` console script, which
    every printed command names as before. Without `site`, a call skips this venv's .pth files (the
    editable install's import hook among them: ~15 ms of each of the suite's many thousand calls);
    a command that needs a dependency runs `site` itself (agentmem/launch.py)."""
    script = os.path.join(sys.prefix, "bin", "agentmem")
    if sys.prefix == sys.base_prefix or not os.path.isfile(script):
        return [sys.executable, "-m", "agentmem"]
    return [sys.executable, "-S", "-c", f"from agentmem.launch import main; raise SystemExit(main(launcher={script!r}))"]


CLI = _cli()
SITE_CLI = [sys.executable, "-m", "agentmem"]  # with `site`: for a test that plants a sitecustomize


@dataclass
class Machine:
    home: Path  # AGENTMEM_HOME
    user_home: Path  # HOME
    env: dict
    cli: list = field(default_factory=lambda: list(CLI))  # SITE_CLI where a test needs a sitecustomize

    def write_config(self, text: str) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "config.toml").write_text(text, encoding="utf-8")

    def run(self, *args, input: bytes | str | None = None, cwd: Path | None = None, check_status=None):
        """Run the real CLI in a child process; returns (status, stdout, stderr)."""
        if isinstance(input, str):
            input = input.encode()
        proc = subprocess.run(
            [*self.cli, *map(str, args)],
            input=input if input is not None else b"",
            capture_output=True,
            cwd=cwd or self.user_home,
            env=self.env,
            timeout=120,
        )
        out, err = proc.stdout.decode(), proc.stderr.decode()
        if check_status is not None:
            assert proc.returncode == check_status, (proc.returncode, out, err)
        return proc.returncode, out, err

    def json(self, *args, **kw):
        status, out, err = self.run(*args, "--json", **kw)
        try:
            return status, json.loads(out), err
        except ValueError:
            raise AssertionError(f"not JSON (status {status}): {out!r} {err!r}") from None


def make_machine(root: Path, name: str, store: Path | None = None, projects: dict | None = None, agent=None) -> Machine:
    user_home = root / name / "user"
    home = root / name / "agentmem"
    user_home.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTMEM_", "HF_", "CODEX_"))}
    env.update(
        HOME=str(user_home),
        AGENTMEM_HOME=str(home),
        PYTHONPATH=str(REPO),
        HF_HOME=str(root / name / "hf"),
        HF_HUB_DISABLE_PROGRESS_BARS="1",
    )
    m = Machine(home, user_home, env)
    if store is not None:
        lines = [f'agent = "{agent or name}"', "", "[store]", 'kind = "folder"', f'location = "{store}"', "", "[projects]"]
        for directory, project in (projects or {}).items():
            lines.append(f'"{directory}" = "{project}"')
        m.write_config("\n".join(lines) + "\n")
    return m


def new_folder_store(path: Path):
    """A new folder store at `path`, created (and marked) as `agentmem setup` creates one."""
    from agentmem.store.folder import FolderStore, create_store

    create_store(str(path))
    return FolderStore(path)


@pytest.fixture
def store_dir(tmp_path) -> Path:
    path = tmp_path / "shared-store"
    path.mkdir()
    return path


@pytest.fixture
def machines(tmp_path, store_dir):
    """Factory: machines("laptop", {checkout: project}) sharing one folder store."""

    def factory(name: str, projects: dict | None = None, agent: str | None = None) -> Machine:
        return make_machine(tmp_path, name, store_dir, projects, agent)

    return factory


@pytest.fixture
def laptop(machines, tmp_path):
    """One machine with `src/app` mapped to project `app` (its path is `laptop.checkout`)."""
    checkout = tmp_path / "src" / "app"
    checkout.mkdir(parents=True)
    m = machines("laptop", {checkout: "app"})
    m.checkout = checkout
    return m


@pytest.fixture
def offline_machine(tmp_path):
    """A machine whose folder store's parent is missing (an unmounted drive): saves stay pending."""
    checkout = tmp_path / "app"
    checkout.mkdir()
    store = tmp_path / "drive" / "store"
    m = make_machine(tmp_path, "laptop", store, {checkout: "app"})
    m.checkout, m.store = checkout, store
    return m


def save_pending(m, text="a finding worth keeping", title="t") -> str:
    """Save `text` on `m`, whose store is out of reach; return the pending note's ID."""
    status, out, err = m.json("save", "--title", title, input=text, cwd=m.checkout)
    assert status == 10, (out, err)
    return out["id"]
