"""`copier update` adding the three newer runtimes to a machine, then taking them out again."""

from __future__ import annotations

import json

import pytest

from agentmem.runtimes.gemini import POLICY_FILE
from tests.template_kit import make_machine, make_template_repo

pytestmark = pytest.mark.slow  # a copy and two updates: about 10 s (2026-12-01)

CLAUDE_SETTINGS = {"theme": "dark"}


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
    m.copy(template_repo, ref="v1.0.0", cwd=project,
           data={"bucket": str(tmp_path / "store"), "runtimes": '["codex"]', "hooks": "true"})

    all_five = '["codex", "claude", "gemini", "opencode", "copilot"]'
    proc = m.copier("update", "--trust", "--defaults", "-r", "v1.0.0", f"--data=runtimes={all_five}",
                    str(m.folder), cwd=m.user)
    for name in ("gemini", "opencode", "copilot"):
        assert f"instructions {name}: changed" in proc.stdout and f"hooks {name}: changed" in proc.stdout, proc.stdout
    helper = str(m.helper)
    assert helper in (m.user / ".gemini" / "GEMINI.md").read_text()
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
