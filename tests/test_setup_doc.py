"""The README's set-up command, run as written on a fresh machine (folder store)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.template_kit import REPO, git, make_machine, make_template_repo


def _documented_copy_command() -> str:
    text = (REPO / "README.md").read_text()
    quick = text.split("## Quick start", 1)[1]
    block = re.search(r"```sh\n(.*?)```", quick, re.S).group(1)
    [line] = [ln for ln in block.splitlines() if ".venv/bin/copier copy" in ln]
    # The install steps before the copy need the package index; the test's own environment stands in.
    return line[line.index(".venv/bin/copier copy"):]


@pytest.mark.slow  # a copier copy
def test_the_documented_setup_command_completes_and_prints_the_verification(tmp_path):
    checkout = make_template_repo(tmp_path, files=["copier.yml", "template", "agentmem", "pyproject.toml", "README.md"])
    m = make_machine(tmp_path, "fresh")
    command = _documented_copy_command().replace(".venv/bin/copier", f"{sys.executable} -m copier", 1)
    proc = subprocess.run(["bash", "-c", command], cwd=checkout, env=m.env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Setup verified: the note was saved, read back from the store and found by search." in proc.stdout
    assert (m.user / "agent-memory" / "projects" / "template-repo" / "notes").is_dir()
    assert git(m.folder, "status", "--porcelain") == ""


def test_bootstrap_says_which_store_a_copy_without_a_store_answer_gets():
    # The answer's default is a local folder; bootstrap.md once said a bucket would be created.
    import yaml

    default = yaml.safe_load((REPO / "copier.yml").read_text())["bucket"]["default"]
    text = " ".join((REPO / "bootstrap.md").read_text().split())
    assert default == "~/agent-memory"
    assert f"Without a store answer, setup uses the local folder `{default}`" in text
    assert "**only this machine reaches those notes**" in text
    assert "Without one, setup creates" not in text
