"""Runtimes added to a machine and taken out again: by `copier update`, and by editing config.toml."""

from __future__ import annotations

import json
import os

import pytest

from agentmem.runtimes.gemini import POLICY_FILE
from agentmem.setup import runner
from tests.template_kit import make_machine, make_template_repo, tree_bytes
from tests.test_blocks import read_block

CLAUDE_SETTINGS = {"theme": "dark"}
USER_GEMINI_MD = "# Gemini rules\n\nAnswer briefly.\n"
USER_CLAUDE_MD = "# Claude rules\r\nNo emojis.\r\n"  # CRLF on purpose
CLAUDE_JSON = '{\n  "numStartups": 7,\n  "mcpServers": {}\n}\n'
HELPER = ["/opt/agentmem home/.venv/bin/agentmem"]


@pytest.mark.slow  # a copy and two updates
def test_an_update_that_adds_gemini_opencode_and_copilot_sets_them_up_and_one_that_drops_them_takes_ours_out(
        tmp_path):
    # INV outside-untouched
    template_repo = make_template_repo(tmp_path)
    m = make_machine(tmp_path, "laptop")
    claude = m.user / ".claude" / "settings.json"
    claude.parent.mkdir()
    claude.write_text(json.dumps(CLAUDE_SETTINGS, indent=2) + "\n")
    project = m.user / "app"
    project.mkdir()
    gemini_md = m.user / ".gemini" / "GEMINI.md"
    gemini_md.parent.mkdir()
    gemini_md.write_text(USER_GEMINI_MD)
    m.copy(template_repo, ref="v1.0.0", cwd=project,
           data={"bucket": str(tmp_path / "store"), "runtimes": '["codex"]', "hooks": "true"})

    all_five = '["codex", "claude", "gemini", "opencode", "copilot"]'
    proc = m.copier("update", "--trust", "--defaults", "-r", "v1.0.0", f"--data=runtimes={all_five}",
                    str(m.folder), cwd=m.user)
    for name in ("gemini", "opencode", "copilot"):
        assert f"instructions {name}: changed" in proc.stdout and f"hooks {name}: changed" in proc.stdout, proc.stdout
    helper = str(m.helper)
    assert helper in read_block(gemini_md) and gemini_md.read_text().startswith(USER_GEMINI_MD)
    assert helper in (m.user / ".config" / "opencode" / "AGENTS.md").read_text()
    assert helper in (m.user / ".copilot" / "copilot-instructions.md").read_text()
    assert (m.user / ".agents" / "skills" / "agent-memory" / "SKILL.md").is_file()
    assert not (m.user / ".gemini" / "skills").exists()  # one copy, in ~/.agents/skills, for four CLIs
    gemini = json.loads((m.user / ".gemini" / "settings.json").read_text())
    assert set(gemini["hooks"]) == {"SessionStart", "BeforeAgent", "AfterAgent"}
    assert (m.user / ".copilot" / "hooks" / "agentmem.json").is_file()
    assert (m.user / ".config" / "opencode" / "plugins" / "agentmem.js").is_file()
    assert (m.user / ".gemini" / "policies" / POLICY_FILE).is_file()
    assert json.loads(claude.read_text())["permissions"]["allow"] == [f"Bash({helper}:*)"]

    proc = m.copier("update", "--trust", "--defaults", "-r", "v1.0.0", '--data=runtimes=["codex"]',
                    str(m.folder), cwd=m.user)
    assert not (m.user / ".gemini" / "settings.json").exists()  # agentmem had created it for its hooks
    assert not (m.user / ".copilot" / "hooks").exists()
    assert not (m.user / ".config" / "opencode" / "plugins").exists()
    assert not (m.user / ".gemini" / "policies" / POLICY_FILE).exists()
    assert claude.read_text() == json.dumps(CLAUDE_SETTINGS, indent=2) + "\n"
    assert gemini_md.read_text() == USER_GEMINI_MD  # our block out, the user's rules as they were
    assert read_block(m.user / ".copilot" / "copilot-instructions.md") is None
    assert not (m.user / ".claude" / "skills" / "agent-memory").exists()
    assert (m.user / ".agents" / "skills" / "agent-memory" / "SKILL.md").is_file()  # Codex still reads it


@pytest.fixture(scope="module")
def template_repo(tmp_path_factory):
    return make_template_repo(tmp_path_factory.mktemp("tpl"))


def _machine(template_repo, tmp_path, monkeypatch, runtimes):
    import copier

    user, folder = tmp_path / "user", tmp_path / "user" / "agentmem"
    (user / "app").mkdir(parents=True)
    for key in [k for k in os.environ if k.startswith(("AGENTMEM_", "CODEX_", "XDG_", "COPILOT_"))]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", str(user))
    copier.run_copy(str(template_repo), str(folder), vcs_ref="v1.0.0", defaults=True, unsafe=True, skip_tasks=True,
                    quiet=True, data={"bucket": str(tmp_path / "store"), "projects": {str(user / "app"): "app"},
                                      "runtimes": runtimes, "hooks": True, "mcp": True})
    return user, folder


def _enable(folder, names):
    config = folder / "config.toml"
    text = config.read_text()
    start = text.index("[runtimes]\nenabled = ")
    end = text.index("\n", start + len("[runtimes]\n"))
    config.write_text(text[:start] + f"[runtimes]\nenabled = {json.dumps(names)}" + text[end:])


def test_a_runtime_taken_out_of_config_loses_its_block_skill_permissions_hooks_and_mcp_entry_and_nothing_else(
        template_repo, tmp_path, monkeypatch):
    # INV outside-untouched, INV user-files: a rerun of setup withdraws every part agentmem put there
    user, folder = _machine(template_repo, tmp_path, monkeypatch, ["codex", "claude", "gemini"])
    for path, text in ((user / ".gemini" / "GEMINI.md", USER_GEMINI_MD), (user / ".claude" / "CLAUDE.md", USER_CLAUDE_MD),
                       (user / ".claude.json", CLAUDE_JSON)):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())
    theirs = {p: tree_bytes(p) for p in (user / ".gemini", user / ".claude")}
    on = {s.name: s.status for s in runner.run_setup(folder, helper_command=HELPER).steps}
    assert on["instructions gemini"] == on["instructions claude"] == on["mcp claude"] == "changed", on
    assert read_block(user / ".gemini" / "GEMINI.md") and (user / ".claude" / "skills" / "agent-memory").is_dir()

    _enable(folder, ["codex"])
    report = runner.run_setup(folder, helper_command=HELPER)
    off = {s.name: s.status for s in report.steps}
    assert report.outcome == "confirmed", report.text()
    for step in ("instructions gemini", "instructions claude", "skill claude", "permissions claude",
                 "permissions gemini", "hooks claude", "hooks gemini", "mcp claude"):
        assert off[step] == "changed", (step, report.text())
    assert {p: tree_bytes(p) for p in theirs} == theirs  # GEMINI.md and CLAUDE.md byte for byte, nothing beside
    assert (user / ".claude.json").read_text() == CLAUDE_JSON
    assert (user / ".agents" / "skills" / "agent-memory" / "SKILL.md").is_file()  # Codex's, and still enabled
    again = {s.name: s.status for s in runner.run_setup(folder, helper_command=HELPER).steps}
    assert not [n for n in again if n.endswith(("claude", "gemini"))], again  # INV setup-rerun: nothing left to take


def test_a_dropped_runtimes_edited_core_skill_is_kept(template_repo, tmp_path, monkeypatch):
    # INV core-skill-edits
    user, folder = _machine(template_repo, tmp_path, monkeypatch, ["codex", "claude"])
    runner.run_setup(folder, helper_command=HELPER)
    skill = user / ".claude" / "skills" / "agent-memory" / "SKILL.md"
    skill.write_text(skill.read_text() + "\nMy own addition.\n")
    _enable(folder, ["codex"])
    steps = {s.name: s for s in runner.run_setup(folder, helper_command=HELPER).steps}
    assert steps["skill claude"].status == "warning" and "local edits" in steps["skill claude"].detail
    assert skill.read_text().endswith("My own addition.\n")
