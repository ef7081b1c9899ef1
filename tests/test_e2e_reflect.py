"""The end-of-session reflection in the real CLIs (pinned, scripts/install-clis), against the model stand-in.

Each machine is set up by the project's Copier template with `hooks` and `reflect` on. One prompt,
answered with text: the CLI's stop hook (Codex and Claude Code `Stop`, Gemini CLI `AfterAgent`,
Copilot CLI `agentStop`) asks for one more turn, so the second model request carries the reflection
prompt; the stop after that turn (the runtime marks it `stop_hook_active`) asks nothing, so there is
no third request. OpenCode is not claimed (runtimes/opencode.py says why).
"""

from __future__ import annotations

import json
import time

import pytest

from agentmem.hooks import reflect
from agentmem.runtimes import registry
from tests.e2e_setup import setup_machine
from tests.fixtures_clis import make_machine, runtime_params
from tests.modelstub import Shell, Text
from tests.template_kit import make_template_repo

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def agent_template(tmp_path_factory):
    return make_template_repo(tmp_path_factory.mktemp("template"))


PROMPT_MARK = "asked once per session"
REFLECTING = tuple(n for n in registry.NAMES if registry.spec(n).reflection is not None)  # the four that claim it


def _machine(tmp_path, template, runtime):
    """A machine set up by the Copier template with `hooks` and `reflect` on; (machine, helper, checkout, store)."""
    m = make_machine(tmp_path, "m1")
    checkout = m.home / "src" / "app"
    checkout.mkdir(parents=True)
    store = tmp_path / "shared" / "store"
    store.parent.mkdir()
    start = time.monotonic()
    helper = setup_machine(m, template=template, store=store, projects={checkout: "app"},
                           runtimes=(runtime,), hooks=True, reflect=True)
    print(f"copier setup: {time.monotonic() - start:.1f} s")
    return m, helper, checkout, store


@pytest.mark.parametrize("runtime", runtime_params(REFLECTING))
def test_with_reflect_on_the_second_model_request_carries_the_prompt_and_there_is_no_third(
        tmp_path, agent_template, model_stub, runtime):
    # INV reflect-once
    m, helper, checkout, _ = _machine(tmp_path, agent_template, runtime)
    model_stub.script += [Text("First answer."), Text("Nothing needed saving.")]

    run = getattr(m, runtime)(model_stub, "hello", cwd=checkout,
                              **({"trust_hooks": True} if runtime == "codex" else {}))
    print(f"{runtime} run: {run.seconds:.1f} s, {len(model_stub.requests)} request(s)")

    assert run.returncode == 0, (run.stdout[-2000:], run.stderr[-2000:])
    first, *rest = model_stub.requests
    assert not first.texts_containing(PROMPT_MARK)
    assert len(rest) == 1, [r.texts()[-1:] for r in rest]  # one more turn, and no third request
    [(role, text)] = rest[0].texts_containing(PROMPT_MARK)[-1:]
    assert f"`{helper[0]} save --title TITLE --text TEXT`" in text, text
    state = json.loads((m.agentmem_home / reflect.STATE_FILE).read_text())
    assert len(state["asked"]) == 1


def _save_as_asked(request):
    """The agent does what the prompt says: it runs the save command the prompt names, filled in."""
    [(_, text)] = request.texts_containing(PROMPT_MARK)[-1:]
    command = text.split("`")[1]
    assert command.endswith(" save --title TITLE --text TEXT"), command
    return Shell(command.replace("TITLE", "'Zebra cache decision'")
                 .replace("TEXT", "'The zebra cache lives in the folder store; the old path is retired.'"))


# The flags each CLI needs to run the helper non-interactively (docs/hooks.md, "Sandboxes and approvals"):
# Claude Code and Gemini CLI none (setup's allow rule and policy); Codex a writable sandbox (bypassed here);
# Copilot CLI its allow flags.
RUN_FLAGS = {
    "claude": lambda helper: {},
    "gemini": lambda helper: {},
    "codex": lambda helper: {"trust_hooks": True, "tools": True},
    "copilot": lambda helper: {"allow": [f"shell({' '.join(helper)}:*)", f"--add-dir={helper[0].rsplit('/', 1)[0]}"]},
}


@pytest.mark.parametrize("runtime", runtime_params(REFLECTING))
def test_the_save_command_the_prompt_names_runs_in_the_cli_and_the_note_reaches_the_store(
        tmp_path, agent_template, model_stub, runtime):
    m, helper, checkout, store = _machine(tmp_path, agent_template, runtime)
    model_stub.script += [Text("First answer."), _save_as_asked, Text("Saved the decision.")]

    run = getattr(m, runtime)(model_stub, "hello", cwd=checkout, **RUN_FLAGS[runtime](helper))
    print(f"{runtime} run: {run.seconds:.1f} s, {len(model_stub.requests)} request(s)")

    assert run.returncode == 0, (run.stdout[-2000:], run.stderr[-2000:])
    # The reply, the reflection turn (a tool call), its result; the stop after it asks nothing more.
    assert len(model_stub.requests) == 3
    [saved] = model_stub.requests[2].tool_outputs()
    assert "saved " in saved and "to shared memory" in saved, saved
    notes = list((store / "projects" / "app" / "notes").glob("*.md"))
    assert any("Zebra cache decision" in n.read_text() for n in notes)
