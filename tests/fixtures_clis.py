"""Fixtures that run the real Codex and Claude Code CLIs offline against `modelstub`.

The CLIs come from `scripts/install-clis` (pinned versions, in `.cache/clis` or
`$AGENTMEM_CLI_DIR`); tests that need one skip, naming the reason, when it is
not installed. Each run gets a throwaway HOME and a clean environment: nothing
from the developer's own home or credentials reaches the CLI, and the only
network address it is given is the loopback stand-in.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.fixtures_core import missing_prerequisite
from tests.modelstub import ModelStub

ROOT = Path(__file__).resolve().parent.parent
CLI_TIMEOUT = 120  # seconds per CLI run; a healthy scripted run takes 2-10 s here (2026-11-30)


def pinned_versions() -> dict[str, str]:
    """{"codex": "0.171.0", "claude": "2.1.332"}: the pins in scripts/install-clis."""
    text = (ROOT / "scripts" / "install-clis").read_text()
    return {
        "codex": re.search(r'^CODEX_VERSION="([^"]+)"', text, re.M).group(1),
        "claude": re.search(r'^CLAUDE_VERSION="([^"]+)"', text, re.M).group(1),
    }


PINNED = pinned_versions()
# Parametrize over this to get test IDs naming the CLI version: test_x[codex@0.171.0].
RUNTIME_PARAMS = [pytest.param(name, id=f"{name}@{PINNED[name]}") for name in ("codex", "claude")]


def cli_dir() -> Path:
    return Path(os.environ.get("AGENTMEM_CLI_DIR") or ROOT / ".cache" / "clis")


def cli_binary(name: str) -> Path | None:
    path = cli_dir() / name / "node_modules" / ".bin" / name
    return path if os.access(path, os.X_OK) else None


_versions: dict[str, str] = {}


def cli_version(name: str) -> str:
    """`codex-cli 0.171.0` / `2.1.332 (Claude Code)`, as the binary reports it."""
    if name not in _versions:
        out = subprocess.run([str(cli_binary(name)), "--version"], capture_output=True, text=True, timeout=60)
        _versions[name] = out.stdout.strip() or out.stderr.strip()
    return _versions[name]


def require_cli(name: str) -> Path:
    path = cli_binary(name)
    if path is None:
        missing_prerequisite(f"{name} CLI not installed in {cli_dir()} (run scripts/install-clis; needs npm)")
    version = cli_version(name)
    assert PINNED[name] in version, f"{name} reports {version!r}, pinned {PINNED[name]}: rerun scripts/install-clis"
    print(f"[{name}: {version}]")
    return path


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    seconds: float


@dataclass
class Machine:
    """A throwaway HOME (plus AGENTMEM_HOME) in which the real CLIs run."""

    home: Path
    agentmem_home: Path
    extra_env: dict = field(default_factory=dict)

    @property
    def codex_home(self) -> Path:
        return self.home / ".codex"

    def env(self, stub: ModelStub | None = None) -> dict:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            "TMPDIR": str(self.home / "tmp"),
            "CODEX_HOME": str(self.codex_home),
            "AGENTMEM_HOME": str(self.agentmem_home),
            "FAKE_API_KEY": "x",
            "ANTHROPIC_API_KEY": "x",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
        }
        if stub is not None:
            env["ANTHROPIC_BASE_URL"] = stub.url
        env.update(self.extra_env)
        return env

    def point_codex_at(self, stub: ModelStub) -> None:
        """Point `$CODEX_HOME/config.toml` at the stand-in, changing only the provider's URL if it is there.

        Codex rewrites this file itself (e.g. when trusting hooks), so keep every other line.
        """
        self.codex_home.mkdir(parents=True, exist_ok=True)
        cfg = self.codex_home / "config.toml"
        text = cfg.read_text() if cfg.exists() else ""
        url = f'base_url = "{stub.url}/v1"'
        if "[model_providers.fake]" in text:
            text = re.sub(r'^base_url = "http://127\.0\.0\.1:\d+/v1"$', url, text, count=1, flags=re.M)
        else:
            text = (
                'model = "fake-model"\nmodel_provider = "fake"\n'
                + text
                + '\n[model_providers.fake]\nname = "Fake"\n'
                + url
                + '\nwire_api = "responses"\nenv_key = "FAKE_API_KEY"\n'
            )
        cfg.write_text(text)

    def _run(self, argv: list[str], env: dict, cwd: Path | None) -> Run:
        (self.home / "tmp").mkdir(parents=True, exist_ok=True)
        start = time.monotonic()
        proc = subprocess.run(
            argv,
            cwd=str(cwd or self.home),
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=CLI_TIMEOUT,
        )
        return Run(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start)

    def codex(self, stub: ModelStub, prompt: str, *, cwd: Path | None = None, tools: bool = False,
              trust_hooks: bool = False) -> Run:
        self.point_codex_at(stub)
        argv = [str(require_cli("codex")), "exec", "--skip-git-repo-check"]
        if tools:
            argv.append("--dangerously-bypass-approvals-and-sandbox")
        if trust_hooks:
            argv.append("--dangerously-bypass-hook-trust")
        return self._run(argv + [prompt], self.env(stub), cwd)

    def claude(self, stub: ModelStub, prompt: str, *, cwd: Path | None = None, tools: bool = False) -> Run:
        # The prompt goes right after -p: --allowedTools takes several values and would swallow it.
        argv = [str(require_cli("claude")), "-p", prompt]
        if tools:
            argv += ["--allowedTools", "Bash"]
        return self._run(argv, self.env(stub), cwd)


def make_machine(base: Path, name: str = "m1") -> Machine:
    home = base / name / "home"
    home.mkdir(parents=True)
    return Machine(home=home, agentmem_home=home / ".config" / "agentmem")


@pytest.fixture
def model_stub():
    stub = ModelStub().start()
    yield stub
    stub.stop()


@pytest.fixture
def machine(tmp_path) -> Machine:
    return make_machine(tmp_path)
