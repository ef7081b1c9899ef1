"""Machines in throwaway folders: each has its own AGENTMEM_HOME, like a separate computer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests import inprocess

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


def _launcher() -> str | None:
    """This venv's `agentmem` console script, which the tests' CLI passes to `launch.main` as the installed
    launcher passes its own path (machine/helper_venv.py); None outside a venv."""
    script = os.path.join(sys.prefix, "bin", "agentmem")
    return script if sys.prefix != sys.base_prefix and os.path.isfile(script) else None


def _cli() -> list[str]:
    """How the tests start the real CLI: as the installed launcher does (machine/helper_venv.py), `python -S`
    calling `launch.main` with the launcher's path, here this venv's `agentmem` console script, which
    every printed command names as before. Without `site`, a call skips this venv's .pth files (the
    editable install's import hook among them: ~15 ms of each of the suite's many thousand calls);
    a command that needs a dependency runs `site` itself (agentmem/launch.py)."""
    if LAUNCHER is None:
        return [sys.executable, "-m", "agentmem"]
    return [sys.executable, "-S", "-c", f"from agentmem.launch import main; raise SystemExit(main(launcher={LAUNCHER!r}))"]


LAUNCHER = _launcher()
CLI = _cli()
SITE_CLI = [sys.executable, "-m", "agentmem"]  # with `site`: for a test that plants a sitecustomize
# The interpreter-start variables every machine's environment has (make_machine): one that differs starts its
# CLI in a child, where they take effect (tests/inprocess.py).
_START = inprocess.start_variables(os.environ) | {"PYTHONPATH": str(REPO)}
# Set for each test by `_cli_tier` (below): a test marked `child` runs every Machine's CLI in a child.
_test_wants_child = False
# AGENTMEM_TEST_CLI=child: every call in a child, as before the in-process runner (to compare, or to rule it out).
_ALL_CHILD = os.environ.get("AGENTMEM_TEST_CLI", "") == "child"


def use_child(cli: list, env: dict, args: tuple) -> bool:
    """Whether a call starts the CLI as a child rather than in this process (tests/inprocess.py): the test or
    machine asks for it; the command is not the standard launcher's; the interpreter would start differently;
    the machine talks to a Hub (huggingface_hub and hf_xet keep their settings per process); or the command
    is the MCP server, which serves over the process's own stdio."""
    return (_ALL_CHILD or _test_wants_child or cli != CLI or inprocess.start_variables(env) != _START
            or "HF_ENDPOINT" in env or (args[:1] == ("mcp",)))


@pytest.fixture(autouse=True)
def _cli_tier(request):
    """`@pytest.mark.child`: this test's Machine calls start the CLI as a child process."""
    global _test_wants_child
    _test_wants_child = request.node.get_closest_marker("child") is not None
    yield
    _test_wants_child = False


@dataclass
class Machine:
    home: Path  # AGENTMEM_HOME
    user_home: Path  # HOME
    env: dict
    cli: list = field(default_factory=lambda: list(CLI))  # SITE_CLI where a test needs a sitecustomize
    child: bool = False  # True: every call starts the CLI as a child process (else see use_child)

    def write_config(self, text: str) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "config.toml").write_text(text, encoding="utf-8")

    def run(self, *args, input: bytes | str | None = None, cwd: Path | None = None, check_status=None):
        """Run the real CLI, in this process as a child would (tests/inprocess.py) unless `use_child` says a
        child process; returns (status, stdout, stderr)."""
        if isinstance(input, str):
            input = input.encode()
        argv = [str(a) for a in args]
        if self.child or use_child(self.cli, self.env, tuple(argv)):
            proc = subprocess.run(
                [*self.cli, *argv],
                input=input if input is not None else b"",
                capture_output=True,
                cwd=cwd or self.user_home,
                env=self.env,
                timeout=120,
            )
            returncode, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
        else:
            returncode, stdout, stderr = inprocess.run(argv, self.env, cwd or self.user_home,
                                                       input if input is not None else b"", LAUNCHER)
        out, err = stdout.decode(), stderr.decode()
        if check_status is not None:
            assert returncode == check_status, (returncode, out, err)
        return returncode, out, err

    def run_on_terminal(self, *args, cwd: Path, timeout: float = 120) -> tuple[int, str, bytes]:
        """The CLI in a child whose stderr is a terminal (a pty) and stdout a pipe, as a person runs it: what
        only a child shows (a progress bar drawn for a terminal). Returns (status, stdout, what the terminal showed)."""
        import pty

        primary, secondary = pty.openpty()
        proc = subprocess.Popen([sys.executable, "-m", "agentmem", *map(str, args)], cwd=cwd, env=self.env,
                                stdout=subprocess.PIPE, stderr=secondary, stdin=subprocess.DEVNULL)
        os.close(secondary)
        shown = b""
        while True:
            try:
                chunk = os.read(primary, 4096)
            except OSError:  # EIO once the child has closed its end
                break
            if not chunk:
                break
            shown += chunk
        stdout = proc.communicate(timeout=timeout)[0].decode()
        os.close(primary)
        return proc.returncode, stdout, shown

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
