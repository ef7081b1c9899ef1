"""The hooks answer, end to end: copier copy installs our hooks beside the user's, an update turns them off."""

from __future__ import annotations

import json

import pytest

from agentmem.hooks import config_files as hooks_config
from tests.template_kit import make_machine, make_template_repo

USER_CODEX_HOOKS = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}
USER_CLAUDE_SETTINGS = {"theme": "dark", "permissions": {"allow": ["Bash(ls:*)"]}}


@pytest.mark.slow  # a copy and an update with hooks
def test_hooks_on_are_merged_into_the_users_files_and_an_update_to_off_takes_only_ours_out(tmp_path):
    # INV outside-untouched
    template_repo = make_template_repo(tmp_path)
    m = make_machine(tmp_path, "laptop")
    codex_hooks, claude_settings = m.user / ".codex" / "hooks.json", m.user / ".claude" / "settings.json"
    codex_hooks.parent.mkdir()
    claude_settings.parent.mkdir()
    codex_hooks.write_text(json.dumps(USER_CODEX_HOOKS, indent=2) + "\n")
    claude_settings.write_text(json.dumps(USER_CLAUDE_SETTINGS, indent=2) + "\n")
    project = m.user / "app"
    project.mkdir()

    proc = m.copy(template_repo, ref="v1.0.0", cwd=project,
                  data={"bucket": str(tmp_path / "store"), "runtimes": '["codex", "claude"]', "hooks": "true"})
    assert "hooks codex: changed" in proc.stdout and "/hooks" in proc.stdout  # Codex's trust step is named
    assert "hooks claude: changed" in proc.stdout
    codex = json.loads(codex_hooks.read_text())
    assert codex["hooks"]["Stop"][0] == USER_CODEX_HOOKS["hooks"]["Stop"][0]
    ours = [h["command"] for e in codex["hooks"].values() for g in e for h in g["hooks"] if hooks_config.is_ours(h["command"])]
    assert ours and all(c.startswith(str(m.helper)) for c in ours)
    claude = json.loads(claude_settings.read_text())
    # The user's permission rule first, then setup's rule for the helper (runtimes/claude.py).
    with_helper_rule = {**USER_CLAUDE_SETTINGS,
                        "permissions": {"allow": ["Bash(ls:*)", f"Bash({m.helper}:*)"]}}
    assert claude["theme"] == "dark" and claude["permissions"] == with_helper_rule["permissions"]

    m.copier("update", "--trust", "--defaults", "-r", "v1.0.0", "--data=hooks=false", str(m.folder), cwd=m.user)
    assert json.loads(codex_hooks.read_text()) == USER_CODEX_HOOKS
    assert json.loads(claude_settings.read_text()) == with_helper_rule


@pytest.mark.slow  # an update
def test_hooks_installed_by_hand_outlast_setup_and_copier_update(copied_laptop):
    # `hooks install` records [hooks] enabled and commits it, so neither undoes it.
    from tests.template_kit import git

    m = copied_laptop.m  # set up with hooks off
    settings_file = m.user / ".claude" / "settings.json"
    assert hooks_config.our_commands(json.loads(settings_file.read_text())) == []  # only the permission rule

    proc = m.run("hooks", "install")
    assert proc.returncode == 0, proc.stderr
    assert git(m.folder, "status", "--porcelain") == ""  # the choice is committed, the tree stays clean
    assert "hooks claude: ok" in m.run("setup").stdout
    m.update(ref="v1.0.0")
    ours = [c for _, c in hooks_config.our_commands(json.loads(settings_file.read_text()))]
    assert len(ours) == 3 and all(c.startswith(str(m.helper)) for c in ours)


@pytest.mark.slow  # a copy, hooks commands and an update
def test_the_reflect_answer_reports_where_it_is_on_and_hooks_install_turns_it_off_and_on_for_good(tmp_path):
    from agentmem.runtimes.registry import spec
    from tests.template_kit import git

    template_repo = make_template_repo(tmp_path)
    m = make_machine(tmp_path, "laptop")
    project = m.user / "app"
    project.mkdir()
    proc = m.copy(template_repo, ref="v1.0.0", cwd=project,
                  data={"bucket": str(tmp_path / "store"), "runtimes": '["claude", "opencode"]', "hooks": "true",
                        "reflect": "true"})
    assert "reflect claude: ok - on: once per session (Stop hook, decision block)" in proc.stdout, proc.stdout
    assert f"reflect opencode: skipped - {spec('opencode').no_reflection}" in proc.stdout
    assert "reflect = true" in (m.folder / "config.toml").read_text()

    def status():
        out = json.loads(m.run("hooks", "status", "--json").stdout)
        return {h["runtime"]: h["reflect"] for h in out["hooks"]}

    assert status() == {"claude": "on", "opencode": spec('opencode').no_reflection}
    proc = m.run("hooks", "install", "--no-reflect")
    assert proc.returncode == 0 and "[hooks] reflect = false" in proc.stdout, proc.stderr
    assert git(m.folder, "status", "--porcelain") == ""  # the choice is committed alone
    m.update(ref="v1.0.0")
    assert status()["claude"] == "off"  # the update kept the choice

    assert m.run("hooks", "install", "--reflect", "--runtime", "claude").returncode == 0
    assert status()["claude"] == "on"
    assert m.run("hooks", "remove", "--runtime", "claude").returncode == 0
    assert status()["claude"] == "needs hooks"
    assert "needs the hooks" in m.run("setup").stdout
    assert m.run("hooks", "remove", "--reflect").returncode != 0  # the flag goes with install only
