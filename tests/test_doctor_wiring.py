"""doctor's runtime checks: each enabled CLI's skill, block, permissions, hooks and MCP entry, and setup's
report ending with the same checks."""

from __future__ import annotations

import json
import os
import stat

from agentmem import config
from agentmem.setup import runner, wiring
from agentmem.status import Status
from tests.test_runtimes_update import _machine as copied
from tests.test_runtimes_update import template_repo  # noqa: F401 - the module's template fixture

HELPER = ["/opt/agentmem/bin/agentmem"]


def _machine(template_repo, tmp_path, monkeypatch, runtimes):
    """test_runtimes_update's copied machine (hooks and MCP on), set up by setup itself."""
    user, folder = copied(template_repo, tmp_path, monkeypatch, runtimes)
    report = runner.run_setup(folder, helper_command=HELPER)
    assert report.outcome == "confirmed", report.text()
    return user, folder


def _checks(folder):
    return {c.name: c for c in wiring.checks(str(folder), config.load(folder))}


def test_after_setup_every_enabled_runtimes_wiring_checks_ok(template_repo, tmp_path, monkeypatch):
    user, folder = _machine(template_repo, tmp_path, monkeypatch, ["codex", "claude", "gemini"])
    found = _checks(folder)
    assert {n for n, c in found.items() if c.status != "ok"} == set(), {n: c.detail for n, c in found.items()}
    for name in ("codex", "claude", "gemini"):
        assert {f"skill {name}", f"instructions {name}", f"permissions {name}", f"hooks {name}"} <= set(found)
    assert {"mcp codex", "mcp claude"} <= set(found)


def test_each_part_taken_away_fails_its_check_and_setup_puts_it_back(template_repo, tmp_path, monkeypatch):
    user, folder = _machine(template_repo, tmp_path, monkeypatch, ["codex", "claude", "gemini"])
    claude_md = user / ".claude" / "CLAUDE.md"
    claude_md.write_text("# mine only\n")
    (user / ".gemini" / "policies").joinpath(next(p.name for p in (user / ".gemini" / "policies").iterdir())).unlink()
    settings = user / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    data["permissions"]["allow"] = []
    settings.write_text(json.dumps(data))
    found = _checks(folder)
    broken = {n: c for n, c in found.items() if c.status != "ok"}
    assert set(broken) == {"instructions claude", "permissions gemini", "permissions claude"}, broken
    assert all(c.status == Status.FAILED and c.command.args == ("setup",) for c in broken.values())
    runner.run_setup(folder, helper_command=HELPER)
    assert all(c.status == "ok" for c in _checks(folder).values())
    assert claude_md.read_text().startswith("# mine only\n")


def test_setups_report_ends_with_the_checks_it_could_not_satisfy(template_repo, tmp_path, monkeypatch):
    user, folder = _machine(template_repo, tmp_path, monkeypatch, ["codex"])
    agents = user / ".codex" / "AGENTS.md"
    agents.write_text("the user's own rules, made read-only\n")
    agents.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)  # INV user-files: agentmem leaves it alone
    report = runner.run_setup(folder, helper_command=HELPER)
    steps = {s.name: s for s in report.steps}
    assert steps["check instructions codex"].status == "warning"
    assert "holds no agentmem block" in steps["check instructions codex"].detail
    assert agents.read_text() == "the user's own rules, made read-only\n"


def test_doctor_names_a_missing_block_with_setup_as_its_fix_and_exits_12(template_repo, tmp_path, monkeypatch):
    import subprocess
    import sys

    from tests.template_kit import REPO

    user, folder = _machine(template_repo, tmp_path, monkeypatch, ["codex"])
    (user / ".codex" / "AGENTS.md").write_text("nothing of ours\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTMEM_", "CODEX_"))}
    env.update(HOME=str(user), AGENTMEM_HOME=str(folder), PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-m", "agentmem", "doctor", "--json"], env=env, capture_output=True,
                          text=True, cwd=user / "app")
    out = json.loads(done.stdout)
    check = next(c for c in out["checks"] if c["name"] == "instructions codex")
    assert done.returncode == 12 and check["status"] == "fail" and check["command"].endswith(" setup")
