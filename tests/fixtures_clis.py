"""Fixtures that run the real agent CLIs (Codex, Claude Code, Gemini CLI, OpenCode, GitHub
Copilot CLI) offline against `modelstub`.

The CLIs come from `scripts/install-clis` (pinned versions, in `.cache/clis` or
`$AGENTMEM_CLI_DIR`); tests that need one skip, naming the reason, when it is
not installed, and fail instead under CI (`CI=true`), where a missing CLI is a
broken install step. Each run gets a throwaway HOME and a clean environment:
nothing from the developer's own home or credentials reaches the CLI, and the
only network address it is given is the loopback stand-in.

How each is pointed at the stand-in (shared/reference/more-clis.md, checked 2026-12-01):
Gemini CLI by `GOOGLE_GEMINI_BASE_URL` plus `security.auth.selectedType` in its
settings.json; OpenCode by an `@ai-sdk/openai-compatible` provider in its
opencode.json; Copilot CLI by its BYOK variables (`COPILOT_PROVIDER_*`).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.fixtures_core import missing_prerequisite
from tests.modelstub import ModelStub

ROOT = Path(__file__).resolve().parent.parent
# Seconds per CLI run, many times what a healthy scripted run takes (docs/benchmarks.md). OpenCode with a
# plugin and no pre-seeded dependency folder waits ~70 s for npm offline: that would show as slow.
CLI_TIMEOUT = 120
ALL_CLIS = ("codex", "claude", "gemini", "opencode", "copilot")


def pinned_versions() -> dict[str, str]:
    """{"codex": "0.171.0", ...}: the pins in scripts/install-clis."""
    text = (ROOT / "scripts" / "install-clis").read_text()
    return {name: re.search(rf'^{name.upper()}_VERSION="([^"]+)"', text, re.M).group(1) for name in ALL_CLIS}


PINNED = pinned_versions()


def runtime_params(names=ALL_CLIS) -> list:
    """Parametrize over this to get test IDs naming the CLI version: test_x[codex@0.171.0]."""
    return [pytest.param(name, id=f"{name}@{PINNED[name]}") for name in names]


RUNTIME_PARAMS = runtime_params(("codex", "claude"))


def cli_dir() -> Path:
    return Path(os.environ.get("AGENTMEM_CLI_DIR") or ROOT / ".cache" / "clis")


def cli_binary(name: str) -> Path | None:
    path = cli_dir() / name / "node_modules" / ".bin" / name
    return path if os.access(path, os.X_OK) else None


_versions: dict[str, str] = {}


def cli_version(name: str) -> str:
    """`codex-cli 0.171.0` / `2.1.332 (Claude Code)` / `0.61.0`..., as the binary reports it."""
    if name not in _versions:
        with tempfile.TemporaryDirectory() as home:  # --version must not touch the developer's home
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "LANG": "C.UTF-8",
                   "COPILOT_PKG_CACHE_HOME": str(copilot_pkg_cache())}
            out = subprocess.run([str(cli_binary(name)), "--version"], capture_output=True, text=True,
                                 timeout=60, env=env, stdin=subprocess.DEVNULL)
        _versions[name] = out.stdout.strip().splitlines()[0] if out.stdout.strip() else out.stderr.strip()
    return _versions[name]


def copilot_pkg_cache() -> Path:
    """Where Copilot CLI unpacks its 235 MB package once, shared by every throwaway home."""
    return cli_dir() / "copilot" / "pkg-cache"


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
            # The XDG folders OpenCode uses, at their defaults but explicit, so nothing leaks from outside.
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "GEMINI_API_KEY": "dummy",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "COPILOT_PROVIDER_TYPE": "openai",
            "COPILOT_PROVIDER_API_KEY": "dummy",
            "COPILOT_MODEL": "fake-model",
            "COPILOT_OFFLINE": "true",
            "COPILOT_AUTO_UPDATE": "false",
            "COPILOT_PKG_CACHE_HOME": str(copilot_pkg_cache()),
        }
        if stub is not None:
            env["ANTHROPIC_BASE_URL"] = stub.url
            env["GOOGLE_GEMINI_BASE_URL"] = stub.url
            env["COPILOT_PROVIDER_BASE_URL"] = f"{stub.url}/v1"
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

    # -- Gemini CLI, OpenCode, Copilot CLI ----------------------------------------------------
    def _merge_json(self, path: Path, change) -> None:
        """Edit a CLI's JSON settings in place, keeping what setup (our hooks) put there."""
        data = json.loads(path.read_text()) if path.exists() else {}
        change(data)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2) + "\n")

    def point_gemini_at(self, stub: ModelStub, cwd: Path | None) -> None:
        """API-key auth (the base URL comes from the environment), no usage statistics, and the
        working folder trusted, as a user of Gemini CLI has it after the first run in a project."""
        def change(data):
            data.setdefault("security", {}).setdefault("auth", {})["selectedType"] = "gemini-api-key"
            data.setdefault("privacy", {})["usageStatisticsEnabled"] = False

        gemini = self.home / ".gemini"
        self._merge_json(gemini / "settings.json", change)
        self._merge_json(gemini / "trustedFolders.json",
                         lambda d: d.__setitem__(str(cwd or self.home), "TRUST_FOLDER"))

    def gemini(self, stub: ModelStub, prompt: str, *, cwd: Path | None = None, tools: bool = False) -> Run:
        self.point_gemini_at(stub, cwd)
        argv = [str(require_cli("gemini")), "-m", "fake-model", "-p", prompt]
        if tools:
            argv += ["--approval-mode", "yolo"]
        return self._run(argv, self.env(stub), cwd)

    def point_opencode_at(self, stub: ModelStub) -> None:
        """An OpenAI-compatible provider at the stand-in. Also pre-seeds the config folder's
        dependency install (test-only, see docs/hooks.md): offline, OpenCode would otherwise
        wait ~70 s for `npm install @opencode-ai/plugin` whenever a plugin is present."""
        config = self.home / ".config" / "opencode"

        def change(data):
            data["provider"] = {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "Fake",
                                         "options": {"baseURL": f"{stub.url}/v1", "apiKey": "dummy"},
                                         "models": {"fake-model": {"name": "Fake Model"}}}}
            data.update({"model": "fake/fake-model", "small_model": "fake/fake-model",
                         "autoupdate": False, "share": "disabled"})

        self._merge_json(config / "opencode.json", change)
        (config / "node_modules").mkdir(exist_ok=True)
        lock = config / "package-lock.json"
        if not lock.exists():
            lock.write_text(json.dumps({"lockfileVersion": 3, "packages": {"": {
                "dependencies": {"@opencode-ai/plugin": "*"}}}}))

    def opencode(self, stub: ModelStub, prompt: str, *, cwd: Path | None = None, tools: bool = False) -> Run:
        # OpenCode allows its bash tool by default: `tools` needs no flag.
        self.point_opencode_at(stub)
        return self._run([str(require_cli("opencode")), "run", prompt], self.env(stub), cwd)

    def copilot(self, stub: ModelStub, prompt: str, *, cwd: Path | None = None, tools: bool = False,
                allow: list[str] | None = None) -> Run:
        argv = [str(require_cli("copilot")), "-p", prompt]
        if tools:
            argv += ["--allow-all-tools", "--allow-all-paths"]
        for pattern in allow or []:
            argv += pattern.split("=", 1) if pattern.startswith("--") else ["--allow-tool", pattern]
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
