"""One entry function behind every way the helper starts: the console script, `python -m agentmem`,
and the launcher setup installs (whichever release wrote it)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys

import pytest

from agentmem.machine import helper_venv
from tests.fixtures_core import REPO

# What the v0.1.0 helper_venv.py wrote as `.venv/bin/agentmem` (2026-11-30). Machines set up then
# keep this file until setup reruns, so every later package must still start from it.
V1_LAUNCHER = (
    "#!/bin/sh\nexec {python} -S -P -c {start} \"$@\"\n",
    "import os, sys; sys.path.insert(0, {purelib!r}); os.environ.setdefault('AGENTMEM_HOME', {machine!r}); "
    "from agentmem.launch import main; raise SystemExit(main())",
)


def _env(machine) -> dict:
    return {"PATH": "/usr/bin:/bin", "AGENTMEM_HOME": str(machine), "HOME": str(machine.parent)}


def _hooks_exit_zero(argv0: list[str], machine, cwd) -> None:
    for args, stdin in ((["hook", "reminder", "--runtime", "claude"], ""),
                        (["hook", "reminder", "--runtime", "codex", "--event", "prompt"], ""),
                        (["hook", "stop", "--runtime", "claude"], json.dumps({"stop_hook_active": False}))):
        done = subprocess.run([*argv0, *args], input=stdin, capture_output=True, text=True, cwd=cwd,
                              env=_env(machine), timeout=60)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        assert "invalid choice" not in done.stderr
        if args[1] == "reminder" and "--event" not in args:
            assert "agent-memory skill" in done.stdout


@pytest.mark.slow  # builds a wheel and installs it
def test_the_pip_installed_console_script_runs_the_hooks_and_exits_zero(tmp_path):
    # The test venv's pip installs into a venv without one of its own (`pip --python`): the same
    # build (isolated, from pyproject.toml) and the same console script, without the 5 s of ensurepip.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
                    "--no-deps", str(REPO)], check=True, capture_output=True, timeout=300)
    machine = tmp_path / "machine"
    machine.mkdir()
    script = venv / "bin" / "agentmem"
    assert "agentmem.launch" in script.read_text()
    _hooks_exit_zero([str(script)], machine, tmp_path)
    version = subprocess.run([str(script), "--version"], capture_output=True, text=True, env=_env(machine))
    assert version.returncode == 0 and version.stdout.startswith("agentmem ")


def test_python_m_agentmem_runs_the_hooks_through_the_same_entry(tmp_path):
    machine = tmp_path / "machine"
    machine.mkdir()
    env = {"PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "agentmem", "hook", "reminder", "--runtime", "claude"],
                          capture_output=True, text=True, env=_env(machine) | env, cwd=tmp_path)
    assert done.returncode == 0 and "agent-memory skill" in done.stdout, done.stderr
    bad = subprocess.run([sys.executable, "-m", "agentmem", "hook", "nonsense"], capture_output=True, text=True,
                         env=_env(machine) | env, cwd=tmp_path)
    assert bad.returncode == 0 and "usage: agentmem hook" in bad.stderr  # a hook never fails outward


def test_a_launcher_written_by_the_first_release_still_starts_the_helper_and_setup_rewrites_it(tmp_path):
    src = tmp_path / "template"
    shutil.copytree(REPO / "agentmem", src / "agentmem", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(REPO / "pyproject.toml", src / "pyproject.toml")
    machine = tmp_path / "machine"
    machine.mkdir()
    [launcher] = helper_venv.install(machine, src)
    current = open(launcher, encoding="utf-8").read()
    python = helper_venv.venv_python(machine / ".venv")
    purelib = next((machine / ".venv").rglob("site-packages"))
    template, start = V1_LAUNCHER
    old = template.format(python=shlex.quote(str(python)),
                          start=shlex.quote(start.format(purelib=str(purelib), machine=str(machine.resolve()))))
    with open(launcher, "w", encoding="utf-8") as fh:
        fh.write(old)
    os.chmod(launcher, 0o755)
    _hooks_exit_zero([launcher], machine, tmp_path)  # the old form, the new package
    assert helper_venv.install(machine, src) == [launcher]  # what setup's rerun (copier update) does
    assert open(launcher, encoding="utf-8").read() == current
    _hooks_exit_zero([launcher], machine, tmp_path)
