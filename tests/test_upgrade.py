"""Upgrading a machine as the docs and the copy's own message say, on a machine as it really is:
local edits in the machine folder, no git identity, no `copier` on PATH, no terminal."""

from __future__ import annotations

import re
import subprocess
import tomllib

import pytest

from tests.template_kit import REPO, git, make_machine, make_template_repo, release

NO_IDENTITY = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_COUNT": "1",
               "GIT_CONFIG_KEY_0": "user.useConfigOnly", "GIT_CONFIG_VALUE_0": "true"}  # git may not guess one


def _edited_machine(root):
    template = make_template_repo(root)
    m = make_machine(root, "laptop")
    m.env.update(NO_IDENTITY, PATH="/usr/bin:/bin")
    project = m.user / "src" / "app"
    project.mkdir(parents=True)
    proc = m.copy(template, ref="v1.0.0", cwd=project, data={"bucket": str(root / "store")})
    assert subprocess.run(["git", "var", "GIT_AUTHOR_IDENT"], cwd=m.folder, env=m.env,
                          capture_output=True).returncode != 0  # really no identity
    config = m.folder / "config.toml"
    config.write_text(config.read_text().replace("max_age = 0", "max_age = 99  # my tuning"))
    block = template / "template" / "instructions-block.md"
    release(template, "v2.0.0", {"template/instructions-block.md": block.read_text() + "Release two.\n"})
    m.copy_output = proc.stdout + proc.stderr
    return m


@pytest.fixture
def edited_machine(machine_snapshots):
    """A machine set up from v1.0.0, its config.toml edited and not committed; v2.0.0 released since.
    One real copy per session, put back fresh for each test (tests/fixtures_machines.py)."""
    return machine_snapshots.restore("upgrade-edited-machine", _edited_machine)


def _upgraded(m, proc):
    assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-3000:])
    assert tomllib.loads((m.folder / "config.toml").read_text())["cache"]["max_age"] == 99  # the edit survived
    assert "Release two." in (m.user / ".codex" / "AGENTS.md").read_text()
    assert "_commit: v2.0.0" in (m.folder / ".copier-answers.yml").read_text()
    assert git(m.folder, "status", "--porcelain") == ""
    assert "Local edits, committed by agentmem upgrade" in git(m.folder, "log", "--format=%s")


def _sh(m, line):
    return subprocess.run(["bash", "-c", line], cwd=m.user, env=m.env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow  # a copier copy and a copier update
def test_the_upgrade_command_printed_after_the_copy_runs_as_printed(edited_machine):
    m = edited_machine
    [line] = re.findall(r"Upgrade later .* with `([^`]+)`", m.copy_output)
    _upgraded(m, _sh(m, line))  # no --vcs-ref: the newest tag


@pytest.mark.slow  # a copier copy and a copier update each
@pytest.mark.parametrize("doc", ["README.md", "bootstrap.md"])
def test_the_documented_upgrade_command_works_as_written(edited_machine, doc):
    m = edited_machine
    [line] = [ln.strip() for ln in (REPO / doc).read_text().splitlines()
              if "agentmem upgrade" in ln and "NEW" in ln and not ln.lstrip().startswith(("-", "#"))]
    line = re.sub(r"\bNEW(TAG|REV)\b", "v2.0.0", line.split("#")[0]).strip().strip("`")
    _upgraded(m, _sh(m, line))


def test_the_copier_an_upgrade_falls_back_to_is_the_one_pyproject_pins():
    from agentmem.machine import helper_venv, upgrade

    assert helper_venv._pinned(REPO, ["copier"]) == [f"copier=={upgrade.COPIER_VERSION}"]


@pytest.mark.slow  # a copier copy (the fixture)
def test_an_upgrade_without_a_copier_anywhere_says_what_to_install_and_changes_nothing(edited_machine):
    m = edited_machine
    record = m.folder / ".venv" / "agentmem-install.json"
    record.write_text(record.read_text().replace('"copier_python": "', '"copier_python": "/gone'))
    before = git(m.folder, "log", "--format=%H")
    proc = m.run("upgrade")
    assert proc.returncode == 3 and proc.stderr.count("\n") == 1, proc.stderr
    assert "no Copier to run the upgrade with" in proc.stderr and "pip install copier==9.19.1" in proc.stderr
    assert git(m.folder, "log", "--format=%H") == before  # nothing committed when nothing can follow


def _untouched(m, before: str) -> None:
    """The machine folder as the test found it: no new commit, its own edit to config.toml still uncommitted."""
    assert git(m.folder, "log", "--format=%H") == before
    assert git(m.folder, "status", "--porcelain").splitlines() == [" M config.toml"]


@pytest.mark.slow  # a copier copy (the fixture)
def test_an_upgrade_to_a_revision_the_template_lacks_names_it_lists_the_release_tags_and_commits_nothing(
        edited_machine):
    m = edited_machine
    before = git(m.folder, "log", "--format=%H")
    proc = m.run("upgrade", "--vcs-ref", "v9.9.9")
    assert proc.returncode == 4 and proc.stderr.count("\n") == 1 and proc.stdout == "", (proc.stdout, proc.stderr)
    assert "has no revision 'v9.9.9'" in proc.stderr and "its release tags: v1.0.0, v2.0.0" in proc.stderr
    assert "Traceback" not in proc.stderr
    _untouched(m, before)


@pytest.mark.slow  # a copier copy (the fixture), a copier update that stops
@pytest.mark.parametrize(("answer", "said"), [
    ("bucket=not a bucket", "Validation error for question 'bucket'"),  # Copier's own validator says no
    ("runtimes=[\"nope\"]", "Invalid choice for 'runtimes'"),
    ("hybrid=maybe", "--data hybrid=maybe: hybrid is yes or no"),  # Copier would have taken it for yes
    ("projects={\"/a\": [", "--data projects={\"/a\": [: it is not YAML"),
    ("nosuchquestion=1", "the template asks no question 'nosuchquestion'"),  # Copier would have ignored it
])
def test_a_bad_answer_stops_the_upgrade_with_one_line_and_no_traceback_and_commits_nothing(edited_machine, answer,
                                                                                          said):
    m = edited_machine
    before = git(m.folder, "log", "--format=%H")
    proc = m.run("upgrade", f"--data={answer}")
    assert proc.returncode != 0 and "Traceback" not in proc.stdout + proc.stderr, (proc.stdout, proc.stderr)
    [line] = [ln for ln in proc.stderr.splitlines() if ln.startswith("agentmem: ")]
    assert said in line and proc.stderr.count("\n") <= 3, proc.stderr  # Copier's own lines, at most a couple
    _untouched(m, before)
