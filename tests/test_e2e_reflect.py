"""The end-of-session reflection in the real CLIs (pinned, scripts/install-clis), against the model stand-in.

Each machine is set up by the project's Copier template with `hooks` and `reflect` on. One prompt,
answered with text: the CLI's stop hook (Codex and Claude Code `Stop`, Gemini CLI `AfterAgent`,
Copilot CLI `agentStop`) asks for one more turn, so the second model request carries the reflection
prompt; the stop after that turn (the runtime marks it `stop_hook_active`) asks nothing, so there is
no third request. OpenCode is not claimed (hooks/reflect.py says why).
"""

from __future__ import annotations

import json
import time

import pytest

from agentmem.hooks import reflect
from tests.e2e_setup import setup_machine
from tests.fixtures_clis import make_machine, runtime_params
from tests.modelstub import Text
from tests.template_kit import make_template_repo

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def agent_template(tmp_path_factory):
    return make_template_repo(tmp_path_factory.mktemp("template"))


@pytest.mark.parametrize("runtime", runtime_params(tuple(sorted(reflect.RUNTIMES))))
def test_with_reflect_on_the_second_model_request_carries_the_prompt_and_there_is_no_third(
        tmp_path, agent_template, model_stub, runtime):
    # INV reflect-once
    m = make_machine(tmp_path, "m1")
    checkout = m.home / "src" / "app"
    checkout.mkdir(parents=True)
    store = tmp_path / "shared" / "store"
    store.parent.mkdir()
    start = time.monotonic()
    helper = setup_machine(m, template=agent_template, store=store, projects={checkout: "app"},
                           runtimes=(runtime,), hooks=True, reflect=True)
    print(f"copier setup: {time.monotonic() - start:.1f} s")
    model_stub.script += [Text("First answer."), Text("Nothing needed saving.")]

    run = getattr(m, runtime)(model_stub, "hello", cwd=checkout,
                              **({"trust_hooks": True} if runtime == "codex" else {}))
    print(f"{runtime} run: {run.seconds:.1f} s, {len(model_stub.requests)} request(s)")

    assert run.returncode == 0, (run.stdout[-2000:], run.stderr[-2000:])
    first, *rest = model_stub.requests
    assert not first.texts_containing("asked once per session")
    assert len(rest) == 1, [r.texts()[-1:] for r in rest]  # one more turn, and no third request
    [(role, text)] = rest[0].texts_containing("asked once per session")[-1:]
    assert f"`{helper[0]} save --title TITLE --text TEXT`" in text, text
    state = json.loads((m.agentmem_home / reflect.STATE_FILE).read_text())
    assert len(state["asked"]) == 1
