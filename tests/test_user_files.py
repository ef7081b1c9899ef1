"""The user's files under setup: links written through, dangling links refused, read-only files left alone.

Setup runs in-process on a machine folder rendered by the real copier (tasks skipped), in a
throwaway HOME; shared skills install from a real folder store. INV user-files throughout.
"""

from __future__ import annotations

import json
import os
import tomllib

import pytest

from agentmem.errors import InvalidInput, NoAccess
from agentmem.setup import runner
from agentmem.skills import install as skill_install
from agentmem.skills import publish
from agentmem.store.base import StoreDescription
from agentmem.store.opening import open_store
from tests.skillkit import make_skill_machine, write_skill
from tests.template_kit import make_template_repo
from tests.test_blocks import read_block


@pytest.fixture(scope="module")
def template_repo(tmp_path_factory):
    return make_template_repo(tmp_path_factory.mktemp("tpl"))


@pytest.fixture
def machine(template_repo, tmp_path, monkeypatch):
    """A rendered machine folder with hooks on, in a throwaway HOME: (folder, HOME, outside HOME)."""
    import copier

    user, folder = tmp_path / "user", tmp_path / "user" / "agentmem"
    (user / "app").mkdir(parents=True)
    for key in [k for k in os.environ if k.startswith(("AGENTMEM_", "CODEX_", "XDG_"))]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", str(user))
    copier.run_copy(str(template_repo), str(folder), vcs_ref="v1.0.0", defaults=True, unsafe=True, skip_tasks=True,
                    quiet=True, data={"bucket": str(tmp_path / "store"), "projects": {str(user / "app"): "app"},
                                      "runtimes": ["codex", "claude"], "hooks": True})
    outside = tmp_path / "outside"
    return folder, user, outside


def _steps(report) -> dict:
    return {s.name: (s.status, s.detail) for s in report.steps}


def test_setup_refuses_a_dangling_agents_md_link_and_creates_nothing_outside_home(machine):
    # INV user-files
    folder, user, outside = machine
    link = user / ".codex" / "AGENTS.md"
    link.parent.mkdir()
    link.symlink_to(outside / "deep" / "AGENTS.md")
    report = runner.run_setup(folder)
    status, detail = _steps(report)["instructions codex"]
    assert status == "warning" and "symbolic link" in detail and "does not exist" in detail
    assert not outside.exists() and link.is_symlink()
    assert _steps(report)["instructions claude"][0] == "changed"  # the rest of setup goes on
    assert report.outcome == "confirmed", report.text()


def test_setup_leaves_a_read_only_agents_md_alone_and_says_so(machine):
    # INV user-files
    folder, user, _ = machine
    agents = user / ".codex" / "AGENTS.md"
    agents.parent.mkdir()
    agents.write_text("# mine, frozen\n")
    agents.chmod(0o444)
    report = runner.run_setup(folder)
    status, detail = _steps(report)["instructions codex"]
    assert status == "warning" and "read-only" in detail and str(agents) in detail
    assert agents.read_text() == "# mine, frozen\n" and agents.stat().st_mode & 0o777 == 0o444
    assert "Needs attention: instructions codex" in report.text()


def test_setup_writes_through_symlinked_instruction_and_hook_files(machine):
    # INV user-files
    folder, user, outside = machine
    dotfiles = outside / "dotfiles"
    dotfiles.mkdir(parents=True)
    (dotfiles / "CLAUDE.md").write_text("# my rules\n")
    (dotfiles / "settings.json").write_text('{\n  "theme": "dark"\n}\n')
    (user / ".claude").mkdir()
    for name in ("CLAUDE.md", "settings.json"):
        (user / ".claude" / name).symlink_to(dotfiles / name)
    report = runner.run_setup(folder)
    assert report.outcome == "confirmed", report.text()
    for name in ("CLAUDE.md", "settings.json"):
        assert (user / ".claude" / name).is_symlink()
    assert (dotfiles / "CLAUDE.md").read_text().startswith("# my rules\n")
    assert read_block(dotfiles / "CLAUDE.md")
    settings = json.loads((dotfiles / "settings.json").read_text())
    assert settings["theme"] == "dark" and set(settings["hooks"]) == {"SessionStart", "UserPromptSubmit", "Stop"}


def test_setup_refuses_a_dangling_hook_file_link_and_a_read_only_one(machine):
    # INV user-files
    folder, user, outside = machine
    (user / ".codex").mkdir()
    (user / ".codex" / "hooks.json").symlink_to(outside / "hooks.json")
    (user / ".claude").mkdir()
    settings = user / ".claude" / "settings.json"
    settings.write_text("{}\n")
    settings.chmod(0o444)
    steps = _steps(runner.run_setup(folder))
    assert steps["hooks codex"][0] == "warning" and "symbolic link" in steps["hooks codex"][1]
    assert steps["hooks claude"][0] == "warning" and "read-only" in steps["hooks claude"][1]
    assert not outside.exists() and settings.read_text() == "{}\n"


def test_setup_refuses_a_dangling_skills_folder_link_and_a_read_only_skills_folder(machine):
    # INV user-files
    folder, user, outside = machine
    (user / ".agents").symlink_to(outside / "agents")  # ~/.agents/skills lies beyond a broken link
    skills = user / ".claude" / "skills"
    skills.mkdir(parents=True)
    skills.chmod(0o555)
    try:
        report = runner.run_setup(folder)
    finally:
        skills.chmod(0o755)
    steps = _steps(report)
    assert steps["skill codex"][0] == "warning" and "symbolic link" in steps["skill codex"][1]
    assert steps["skill claude"][0] == "warning" and "read-only" in steps["skill claude"][1]
    assert not outside.exists() and list(skills.iterdir()) == []


def test_setup_installs_the_core_skill_through_a_symlinked_skills_folder(machine):
    # INV user-files
    folder, user, outside = machine
    real = outside / "dotfiles" / "claude-skills"
    real.mkdir(parents=True)
    (user / ".claude").mkdir()
    (user / ".claude" / "skills").symlink_to(real)
    report = runner.run_setup(folder)
    assert _steps(report)["skill claude"][0] == "changed", report.text()
    assert (user / ".claude" / "skills").is_symlink() and (real / "agent-memory" / "SKILL.md").is_file()


def test_hooks_state_records_nothing_for_a_read_only_hook_file(machine):
    # INV user-files
    folder, user, _ = machine
    (user / ".claude").mkdir()
    settings = user / ".claude" / "settings.json"
    settings.write_text("{}\n")
    settings.chmod(0o444)
    runner.run_setup(folder)
    state = json.loads((folder / "hooks-state.json").read_text()) if (folder / "hooks-state.json").exists() else {}
    assert "claude" not in state
    assert tomllib.loads((folder / "config.toml").read_text())["hooks"]["enabled"] is True


# -- shared skills: the same rule for the skill folders they are installed into ---------------------

@pytest.fixture
def shared(tmp_path, monkeypatch):
    m = make_skill_machine(tmp_path, "a")
    for key, value in m.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    store = open_store(StoreDescription("folder", str(tmp_path / "store")))
    (tmp_path / "store").mkdir()
    src = write_skill(tmp_path / "src" / "tidy")
    revision = publish.publish(src, m.home, store)["revision"]
    return m, store, revision


def test_a_shared_skill_is_not_installed_through_a_dangling_skills_folder_link(shared, tmp_path):
    # INV user-files
    m, store, revision = shared
    (m.user_home / ".claude").mkdir()
    (m.user_home / ".claude" / "skills").symlink_to(tmp_path / "gone" / "skills")
    with pytest.raises(InvalidInput, match="symbolic link"):
        skill_install.install(store, "tidy", revision, m.runtimes, machine=m.home)
    assert not (tmp_path / "gone").exists()
    assert not m.installed("tidy", "codex").exists()  # all or nothing across runtimes


def test_a_shared_skill_is_not_installed_into_a_read_only_skills_folder(shared):
    # INV user-files
    m, store, revision = shared
    skills = m.user_home / ".claude" / "skills"
    skills.mkdir(parents=True)
    skills.chmod(0o555)
    try:
        with pytest.raises(NoAccess, match="read-only"):
            skill_install.install(store, "tidy", revision, m.runtimes, machine=m.home)
    finally:
        skills.chmod(0o755)
    assert list(skills.iterdir()) == [] and not m.installed("tidy", "codex").exists()
