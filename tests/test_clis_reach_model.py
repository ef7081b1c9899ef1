"""The real CLIs, run offline, show the stand-in model a user's instructions and skills.

This is the proof the rest of the end-to-end tests build on: if a user-level
instruction file (AGENTS.md, CLAUDE.md, GEMINI.md, OpenCode's AGENTS.md,
copilot-instructions.md) and a user skill reach the recorded request, then what
agentmem writes in those places reaches the model too.
"""

from __future__ import annotations

import pytest

from tests.fixtures_clis import ALL_CLIS, runtime_params
from tests.modelstub import Shell, Text

pytestmark = pytest.mark.slow

SKILL = "---\nname: zebra-notes\ndescription: Zebra skill used only by tests.\n---\nBody.\n"


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_codex_sends_user_agents_md_and_user_skills_to_the_model(machine, model_stub):
    _write(machine.codex_home / "AGENTS.md", "Remember the zebra-42 rule.\n")
    _write(machine.home / ".agents" / "skills" / "zebra-notes" / "SKILL.md", SKILL)
    model_stub.script += [Text("ok")]

    run = machine.codex(model_stub, "hello")

    assert run.returncode == 0, run.stderr
    first = model_stub.requests[0]
    agents = first.texts_containing("# AGENTS.md instructions")
    assert agents and "zebra-42" in agents[0][1]
    skills = first.texts_containing("<skills_instructions>")
    assert skills and "- zebra-notes: Zebra skill used only by tests." in skills[0][1]


def test_claude_sends_user_claude_md_and_user_skills_to_the_model(machine, model_stub):
    _write(machine.home / ".claude" / "CLAUDE.md", "Remember the zebra-42 rule.\n")
    _write(machine.home / ".claude" / "skills" / "zebra-notes" / "SKILL.md", SKILL)
    model_stub.script += [Text("ok")]

    run = machine.claude(model_stub, "hello")

    assert run.returncode == 0, run.stderr
    first = model_stub.requests[0]
    instructions = first.texts_containing("user's private global instructions")
    assert instructions and "zebra-42" in instructions[0][1]
    assert any("- zebra-notes: Zebra skill used only by tests." in t for _, t in first.texts())


# The three newer CLIs: where each reads a user's instructions and skills (more-clis.md).
USER_FILES = {
    "gemini": (".gemini/GEMINI.md", "--- Context from: "),
    "opencode": (".config/opencode/AGENTS.md", "Instructions from: "),
    "copilot": (".copilot/copilot-instructions.md", "<custom_instruction>"),
}


@pytest.mark.parametrize("runtime", runtime_params(USER_FILES))
def test_the_newer_clis_send_their_user_instruction_file_and_agents_skills_to_the_model(machine, model_stub,
                                                                                        runtime):
    rel, heading = USER_FILES[runtime]
    _write(machine.home / rel, "Remember the zebra-42 rule.\n")
    _write(machine.home / ".agents" / "skills" / "zebra-notes" / "SKILL.md", SKILL)
    model_stub.script += [Text("ok")]

    run = getattr(machine, runtime)(model_stub, "hello")

    assert run.returncode == 0, (run.stdout, run.stderr)
    first = model_stub.requests[0]
    instructions = first.texts_containing("zebra-42")
    assert instructions and heading in instructions[0][1]
    assert first.skill_listings("zebra-notes") == 1
    assert any("Zebra skill used only by tests." in t for _, t in first.texts())


@pytest.mark.parametrize("runtime", runtime_params(ALL_CLIS))
def test_a_scripted_shell_call_returns_its_output_in_the_next_request(machine, model_stub, runtime):
    model_stub.script += [Shell("printf 'tool-said-%s\\n' 42"), Text("done")]  # no $(...): Gemini blocks it

    run = getattr(machine, runtime)(model_stub, "run it", tools=True)

    assert run.returncode == 0, run.stderr
    assert len(model_stub.requests) == 2
    assert model_stub.requests[0].tool_outputs() == []
    assert "tool-said-42" in model_stub.requests[1].tool_outputs()[0]
