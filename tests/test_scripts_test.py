"""`scripts/test` under CI=true fails on a missing prerequisite instead of skipping its tests;
outside CI it skips them and says why. So do the tests themselves (missing_prerequisite)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures_core import REPO

TOOLS = ("bash", "dirname", "tr", "cat")  # all scripts/test needs from PATH besides npm and python3


def _checkout(tmp_path, install_clis_status: int | None) -> tuple[Path, Path]:
    """A checkout holding the real scripts/test; stand-ins log each tool they replace and succeed."""
    root, log = tmp_path / "checkout", tmp_path / "calls.log"
    (root / "scripts").mkdir(parents=True)
    shutil.copy2(REPO / "scripts" / "test", root / "scripts" / "test")
    stub = f'#!/bin/sh\necho "$(basename "$0") $*" >> {log}\nexit %d\n'
    bins = root / ".venv" / "bin"
    bins.mkdir(parents=True)
    for name in ("python", "ruff", "mypy"):
        (bins / name).write_text(stub % 0)
    if install_clis_status is not None:
        (root / "scripts" / "install-clis").write_text(stub % install_clis_status)
    for path in [*bins.iterdir(), *(root / "scripts").iterdir()]:
        path.chmod(0o755)
    return root, log


def _path(tmp_path, npm: bool) -> str:
    tools = tmp_path / "tools"
    tools.mkdir(exist_ok=True)
    for name in TOOLS + ("basename",):
        if not (tools / name).exists():
            (tools / name).symlink_to(shutil.which(name))
    if npm:
        (tools / "npm").write_text("#!/bin/sh\nexit 0\n")
        (tools / "npm").chmod(0o755)
    return str(tools)


def _run(root, path, ci):
    env = {"PATH": path, "HOME": str(root)} | ({"CI": ci} if ci is not None else {})
    return subprocess.run([str(root / "scripts" / "test"), "-q"], env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("ci", ["true", "1", "TRUE"])
def test_in_ci_a_missing_npm_fails_the_run_before_anything_is_installed(tmp_path, ci):
    root, log = _checkout(tmp_path, install_clis_status=0)
    done = _run(root, _path(tmp_path, npm=False), ci)
    assert done.returncode != 0 and "npm not found" in done.stderr and "fails" in done.stderr
    assert not log.exists()  # no pip, no pytest: the run stopped at once


def test_in_ci_agent_clis_that_cannot_be_installed_fail_the_run(tmp_path):
    root, log = _checkout(tmp_path, install_clis_status=1)
    done = _run(root, _path(tmp_path, npm=True), "true")
    assert done.returncode != 0 and "could not install the agent CLIs" in done.stderr
    assert log.read_text().splitlines() == ["install-clis "]


def test_outside_ci_a_missing_npm_skips_with_the_reason_and_runs_the_suite(tmp_path):
    root, log = _checkout(tmp_path, install_clis_status=0)
    done = _run(root, _path(tmp_path, npm=False), None)
    assert done.returncode == 0, done.stderr
    assert "warning: npm not found; the real Codex/Claude Code end-to-end tests will be skipped" in done.stderr
    assert log.read_text().splitlines()[-1] == "python -m pytest -n 2 --dist loadfile -q"


def test_the_worker_count_can_be_changed_or_the_suite_run_in_one_process(tmp_path):
    root, log = _checkout(tmp_path, install_clis_status=0)
    env = {"PATH": _path(tmp_path, npm=True), "HOME": str(root)}
    for workers, expected in (("4", "python -m pytest -n 4 --dist loadfile -q"), ("0", "python -m pytest -q")):
        done = subprocess.run([str(root / "scripts" / "test"), "-q"], env=env | {"AGENTMEM_TEST_WORKERS": workers},
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert log.read_text().splitlines()[-1] == expected


def test_in_ci_a_test_whose_prerequisite_is_missing_fails_instead_of_skipping(tmp_path):
    (tmp_path / "test_needs_cli.py").write_text(
        "from tests.fixtures_clis import require_cli\n\n"
        "def test_needs_codex():\n    require_cli('codex')\n")
    env = {k: v for k, v in os.environ.items() if k != "CI"} | {"PYTHONPATH": str(REPO),
                                                               "AGENTMEM_CLI_DIR": str(tmp_path / "no-clis")}
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
            "-c", os.devnull, str(tmp_path / "test_needs_cli.py")]
    outside = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=tmp_path)
    assert outside.returncode == 0 and "1 skipped" in outside.stdout, outside.stdout
    inside = subprocess.run(argv, env=env | {"CI": "true"}, capture_output=True, text=True, cwd=tmp_path)
    assert inside.returncode == 1 and "1 failed" in inside.stdout and "requires every prerequisite" in inside.stdout
