"""The README's set-up command, run as written on a fresh machine (folder store)."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from agentmem.version import __version__
from tests.template_kit import REPO, git, make_machine, make_template_repo


def _documented_copy_command() -> str:
    text = (REPO / "README.md").read_text()
    quick = text.split("## Quick start", 1)[1]
    block = re.search(r"```sh\n(.*?)```", quick, re.S).group(1)
    [line] = [ln for ln in block.splitlines() if ".venv/bin/copier copy" in ln]
    # The install steps before the copy need the package index; the test's own environment stands in.
    return line[line.index(".venv/bin/copier copy"):]


def _quick_start(root):
    """A fresh machine as the README's quick start leaves it: its copy command run as written, from a checkout."""
    checkout = make_template_repo(root, files=["copier.yml", "template", "agentmem", "pyproject.toml", "README.md"])
    m = make_machine(root, "fresh")
    command = _documented_copy_command().replace(".venv/bin/copier", f"{sys.executable} -m copier", 1)
    proc = subprocess.run(["bash", "-c", command], cwd=checkout, env=m.env, capture_output=True, text=True, timeout=300)
    return checkout, m, proc


@pytest.fixture
def quick_start(machine_snapshots):
    """(checkout, machine, the copy's process): one real quick start per session, put back for each test."""
    return machine_snapshots.restore("quick-start", _quick_start)


@pytest.mark.slow  # a copier copy
def test_the_documented_setup_command_completes_and_prints_the_verification(quick_start):
    checkout, m, proc = quick_start
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Setup verified: the note was saved, read back from the store and found by search." in proc.stdout
    assert (m.user / "agent-memory" / "projects" / "template-repo" / "notes").is_dir()
    assert git(m.folder, "status", "--porcelain") == ""


def _doctor(m, checkout, helper=None) -> dict:
    proc = subprocess.run([str(helper or m.helper), "doctor", "--json"], cwd=checkout, env=m.env, capture_output=True,
                          text=True, timeout=120)
    out = json.loads(proc.stdout)
    return {c["name"]: c for c in out["checks"]} | {"": {"status": "ok", "exit": proc.returncode}}


@pytest.mark.slow  # a copier copy (the fixture)
def test_a_machine_the_quick_start_made_passes_every_doctor_check(quick_start):
    checkout, m, proc = quick_start
    assert proc.returncode == 0, proc.stderr[-2000:]
    checks = _doctor(m, checkout)
    assert {name: c["detail"] for name, c in checks.items() if c["status"] != "ok"} == {}
    assert checks[""]["exit"] == 0 and checks["helper"]["detail"].startswith(f"agentmem {__version__}: {m.helper}")
    done = m.run("doctor", cwd=checkout)
    assert "WARN" not in done.stdout and done.stdout.rstrip().endswith("check(s): all ok"), done.stdout


def _printed_fix(checks: dict) -> list[str]:
    return shlex.split(checks["helper"]["command"])


@pytest.mark.slow  # a copier copy (the fixture), a helper reinstalled
def test_each_helper_warning_doctor_gives_is_cleared_by_running_its_fix_as_printed(quick_start):
    checkout, m, _ = quick_start
    cli = [sys.executable, "-m", "agentmem"]  # another helper: this checkout's, on the same machine folder
    env = m.env | {"AGENTMEM_HOME": str(m.folder), "PYTHONPATH": str(REPO)}

    def doctor_here() -> dict:
        proc = subprocess.run([*cli, "doctor", "--json"], cwd=checkout, env=env, capture_output=True, text=True)
        return {c["name"]: c for c in json.loads(proc.stdout)["checks"]}

    version = next((m.folder / ".venv").glob("lib/python*/site-packages/agentmem/version.py"))
    version.write_text(version.read_text().replace(__version__, "0.0.1"))  # the machine's helper is older
    check = doctor_here()["helper"]
    assert check["status"] == "warn" and "agents run the machine folder's helper, agentmem 0.0.1" in check["detail"]
    assert _printed_fix(doctor_here()) == [str(m.helper), "doctor"]
    fixed = subprocess.run(_printed_fix(doctor_here()) + ["--json"], cwd=checkout, env=m.env, capture_output=True,
                           text=True)
    assert {c["name"]: c for c in json.loads(fixed.stdout)["checks"]}["helper"]["status"] == "ok", fixed.stdout

    shutil.rmtree(m.folder / ".venv")  # the helper agents run is gone
    check = doctor_here()["helper"]
    assert check["status"] == "fail" and f"{m.helper}, is missing" in check["detail"]
    again = subprocess.run(_printed_fix(doctor_here()), cwd=checkout, env=m.env, capture_output=True, text=True,
                           timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    assert doctor_here()["helper"]["status"] == "ok"
    assert {name: c["detail"] for name, c in _doctor(m, checkout).items() if c["status"] != "ok"} == {}


def test_bootstrap_says_which_store_a_copy_without_a_store_answer_gets():
    # The answer's default is a local folder; bootstrap.md once said a bucket would be created.
    import yaml

    default = yaml.safe_load((REPO / "copier.yml").read_text())["bucket"]["default"]
    text = " ".join((REPO / "bootstrap.md").read_text().split())
    assert default == "~/agent-memory"
    assert f"Without a store answer, setup uses the local folder `{default}`" in text
    assert "**only this machine reaches those notes**" in text
    assert "Without one, setup creates" not in text


@pytest.mark.slow  # a copier copy per answer
@pytest.mark.parametrize("answer,why", [
    ("projects=notjson", "Validation error for question 'projects'"),  # a copier.yml check
    ("runtimes=codex", "Not a YAML list"),  # Copier's own type conversion, before any check
    ("projects={a: [1", "expected ',' or ']'"),  # malformed YAML
])
def test_a_refused_data_answer_stops_the_copy_before_any_write_as_bootstrap_md_tells_the_reader(tmp_path, answer, why):
    # Copier prints its own traceback for a refused --data answer (not ours to change): bootstrap.md says so.
    text = " ".join((REPO / "bootstrap.md").read_text().split())
    assert "prints its own traceback for every refused `--data` answer" in text and "`Not a YAML list`" in text
    template = make_template_repo(tmp_path / "src", files=["copier.yml", "template", "agentmem", "pyproject.toml",
                                                            "README.md"])
    m = make_machine(tmp_path, "laptop")
    proc = m.copier("copy", "--trust", "--defaults", "-r", "v1.0.0", f"--data=bucket={tmp_path / 'store'}",
                    f"--data={answer}", str(template), str(m.folder), cwd=m.user, check=False)
    assert proc.returncode != 0 and why in proc.stderr[-600:], proc.stderr[-2000:]
    assert not m.folder.exists() and not (tmp_path / "store").exists()
