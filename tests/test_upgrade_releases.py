"""Upgrades that stay true: a template revision that exists, where an upgrade goes and "already at",
and a conflicting upgrade that leaves one instruction and commits no markers."""

from __future__ import annotations

import subprocess

import pytest

from tests.template_kit import git, make_machine, make_template_repo, release

pytestmark = pytest.mark.slow  # real copier copies and updates


def _machine(tmp_path, ref="v1.0.0", dirty=False):
    template = make_template_repo(tmp_path)
    if dirty:
        (template / "notes-to-self.txt").write_text("an untracked file in the checkout\n")
    m = make_machine(tmp_path, "laptop")
    project = m.user / "src" / "app"
    project.mkdir(parents=True)
    m.copy(template, ref=ref, cwd=project, data={"bucket": str(tmp_path / "store")})
    return template, m


@pytest.fixture
def copied_machine(machine_snapshots):
    """(template, machine): `_machine`'s copy of v1.0.0, made once per session and put back for each test
    (tests/fixtures_machines.py)."""
    return machine_snapshots.restore("upgrade-releases-v1", _machine)


def _recorded(m) -> str:
    text = (m.folder / ".copier-answers.yml").read_text()
    return next(line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("_commit:"))


def _exists(template, ref) -> bool:
    return subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd=template,
                          capture_output=True).returncode == 0


def test_a_copy_from_a_checkout_with_untracked_files_records_a_commit_that_exists(tmp_path):  # INV real-template-commit
    template, m = _machine(tmp_path, ref="HEAD", dirty=True)
    assert _exists(template, _recorded(m)), _recorded(m)
    assert git(m.folder, "status", "--porcelain") == ""
    release(template, "v1.1.0", {"template/instructions-block.md":
                                 (template / "template" / "instructions-block.md").read_text() + "Release 1.1.\n"})
    proc = m.run("upgrade")
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-2000:])
    assert "Release 1.1." in (m.user / ".codex" / "AGENTS.md").read_text()


def test_upgrade_mends_a_machine_that_recorded_a_commit_that_exists_nowhere_and_says_so(copied_machine):
    template, m = copied_machine
    answers = m.folder / ".copier-answers.yml"
    answers.write_text(answers.read_text().replace("_commit: v1.0.0", "_commit: v1.0.0-1-g0123abc"))
    git(m.folder, "commit", "-qam", "as an older release left it")
    release(template, "v1.1.0", {"template/instructions-block.md":
                                 (template / "template" / "instructions-block.md").read_text() + "Release 1.1.\n"})
    proc = m.run("upgrade")
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-2000:])
    assert "v1.0.0-1-g0123abc, exists nowhere" in proc.stdout and "recorded v1.0.0" in proc.stdout
    assert _recorded(m) == "v1.1.0" and "Traceback" not in proc.stderr


def test_an_upgrade_with_nothing_newer_says_already_at_and_runs_no_copier(copied_machine):
    template, m = copied_machine
    proc = m.run("upgrade", "--json")
    assert proc.returncode == 0, proc.stderr
    import json

    out = json.loads(proc.stdout)
    assert out["status"] == "current" and out["to"] == "v1.0.0" and out["command"] is None
    assert "already at v1.0.0 (the newest release tag)" in m.run("upgrade").stdout


def test_a_conflicting_upgrade_prints_one_instruction_commits_no_markers_and_setup_finishes_it(copied_machine):  # INV no-markers-committed
    template, m = copied_machine
    config = m.folder / "config.toml"
    config.write_text(config.read_text().replace("timeout = 20", "timeout = 30", 1))
    jinja = template / "template" / "config.toml.jinja"
    release(template, "v1.1.0", {"template/config.toml.jinja": jinja.read_text().replace("timeout = 20", "timeout = 25", 1)})
    proc = m.run("upgrade", "--json")
    assert proc.returncode == 2, (proc.stdout[-2000:], proc.stderr[-2000:])
    import json

    out = json.loads(proc.stdout)
    assert out["status"] == "error" and out["error"] == "invalid-input" and "config.toml (line" in out["message"]
    said = proc.stdout + proc.stderr
    import re

    told = set(re.findall(r"then run `([^`]*)`", said))
    assert told == {f"{m.helper} setup"}, told  # one instruction, however often Copier's steps repeat it
    assert "upgrade` again" not in said and "Resolve config.toml" not in said  # the old, contradictory advice
    assert "<<<<<<<" not in git(m.folder, "log", "-p", "--format=")  # INV no-markers-committed
    text = config.read_text()
    head, rest = text.split("<<<<<<<", 1)
    ours = rest.split("\n", 1)[1].split("=======", 1)[0]
    config.write_text(head + ours + rest.split(">>>>>>>", 1)[1].split("\n", 1)[1])
    proc = m.run("setup")
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-2000:])
    assert git(m.folder, "status", "--porcelain") == "" and "timeout = 30" in config.read_text()


def test_a_copy_from_uncommitted_changes_to_the_template_is_refused_and_once_committed_upgrades_cleanly(tmp_path):
    # INV clean-template-copy: else the machine folder holds them as its owner's edits, and the first upgrade
    # that touches the same lines conflicts in a file the owner never edited.
    template = make_template_repo(tmp_path)
    block = template / "template" / "instructions-block.md"
    block.write_text(block.read_text() + "A draft line.\n")
    m = make_machine(tmp_path, "laptop")
    project = m.user / "src" / "app"
    project.mkdir(parents=True)
    data = {"bucket": str(tmp_path / "store")}
    proc = m.copy(template, ref="HEAD", cwd=project, data=data, check=False, args=["--no-cleanup"])
    assert proc.returncode != 0 and "Traceback" not in proc.stdout + proc.stderr
    [line] = [ln for ln in proc.stdout.splitlines() if ln.startswith("template: failed")]
    assert "uncommitted changes in the template checkout" in line and "(template/instructions-block.md)" in line
    assert f"commit those changes in {template}" in line and "--overwrite" in line
    assert not (m.user / ".codex" / "AGENTS.md").exists()  # nothing else was set up
    git(template, "commit", "-qam", "the draft, committed")  # as the line says
    m.copy(template, ref="HEAD", cwd=project, data=data, args=["--no-cleanup", "--overwrite"])
    assert _exists(template, _recorded(m))
    release(template, "v1.1.0", {"template/instructions-block.md": block.read_text() + "Release 1.1.\n"})
    proc = m.run("upgrade")
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-2000:])
    text = (m.user / ".codex" / "AGENTS.md").read_text()
    assert "A draft line.\nRelease 1.1.\n" in text and "<<<<<<<" not in text


def test_a_copy_whose_helper_came_from_uncommitted_changes_says_so_in_the_setup_report(tmp_path):
    template = make_template_repo(tmp_path)
    answers = template / "agentmem" / "machine" / "answers.py"
    answers.write_text(answers.read_text() + "# a local experiment\n")
    m = make_machine(tmp_path, "laptop")
    project = m.user / "src" / "app"
    project.mkdir(parents=True)
    proc = m.copy(template, ref="HEAD", cwd=project, data={"bucket": str(tmp_path / "store")})
    [line] = [ln for ln in proc.stdout.splitlines() if ln.startswith("template helper: warning")]
    assert "uncommitted changes in the template checkout" in line and "(agentmem/machine/answers.py)" in line
    assert "Needs attention: template helper" in proc.stdout and _exists(template, _recorded(m))
