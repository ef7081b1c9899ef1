"""A setup that fails fails the copy, and leaves a machine folder that a rerun completes."""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.template_kit import git, make_machine, make_template_repo


@pytest.fixture
def template_repo(tmp_path):
    return make_template_repo(tmp_path)


def _without_a_token(tmp_path, hub):
    m = make_machine(tmp_path, "laptop")
    m.env.update(HF_ENDPOINT=hub.url, HF_HOME=str(m.user / ".hf"), HF_HUB_DISABLE_PROGRESS_BARS="1",
                 PATH="/usr/bin:/bin")  # neither agentmem nor copier on PATH, as on a fresh machine
    project = m.user / "src" / "app"
    project.mkdir(parents=True)
    return m, project


def _failed_copy(m, template_repo, project):
    proc = m.copy(template_repo, ref="v1.0.0", cwd=project, data={"bucket": "hf"}, args=["--no-cleanup"], check=False)
    assert proc.returncode != 0, proc.stdout[-2000:]  # scripts and agents read the exit status
    assert "auth: failed - no Hugging Face credentials" in proc.stdout and "Setup FAILED" in proc.stdout, proc.stdout[-2000:]
    assert m.helper.is_file() and (m.folder / "config.toml").is_file()  # --no-cleanup kept the folder
    return proc


@pytest.mark.slow  # two copier runs through the Hub stand-in
def test_a_copy_whose_setup_fails_exits_non_zero_and_the_printed_rerun_completes_it(template_repo, hub, tmp_path):
    # INV setup-rerun
    m, project = _without_a_token(tmp_path, hub)
    proc = _failed_copy(m, template_repo, project)
    assert git(m.folder, "status", "--porcelain") == ""  # the rendered folder was committed before setup ran
    rerun = re.search(r"fix its cause, then run `([^`]+)`", proc.stdout).group(1)
    m.env["HF_TOKEN"] = hub.add_user("alice")  # the owner logs in
    done = subprocess.run(["bash", "-c", rerun], cwd=project, env=m.env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    assert "Setup verified" in done.stdout
    assert list(hub.buckets) == ["alice/agent-memory"]


@pytest.mark.slow  # two copier runs through the Hub stand-in
def test_after_a_failed_setup_the_same_copy_command_completes_the_machine(template_repo, hub, tmp_path):
    m, project = _without_a_token(tmp_path, hub)
    _failed_copy(m, template_repo, project)
    m.env["HF_TOKEN"] = hub.add_user("alice")
    proc = m.copy(template_repo, ref="v1.0.0", cwd=project, data={"bucket": "hf"}, args=["--no-cleanup"], check=False)
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-2000:])
    assert "Setup verified" in proc.stdout and list(hub.buckets) == ["alice/agent-memory"]
    assert git(m.folder, "status", "--porcelain") == ""
