"""End to end with the real Codex and Claude Code CLIs (pinned, see scripts/install-clis).

Each machine is a throwaway HOME set up by the project's Copier template
(`e2e_setup.setup_machine`); the model
is the recording stand-in in `modelstub.py`. Test IDs name the CLI version.
"""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from agentmem.hooks import actions
from agentmem.uploads import pending
from tests.e2e_setup import helper_from_context, setup_machine
from tests.fixtures_clis import RUNTIME_PARAMS, make_machine, require_cli
from tests.modelstub import Shell, Text
from tests.template_kit import make_template_repo

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def agent_template(tmp_path_factory):
    """This checkout's Copier template in a git repo tagged v1.0.0, as a user would copy it."""
    return make_template_repo(tmp_path_factory.mktemp("template"))


def _set_up(root, template, name, checkout_rel="src/app", runtimes=("codex", "claude"), hooks=False,
            store="shared"):
    """One machine under `root` with its own checkout of project `app`, set up by the Copier template;
    its store (`m.store`) is <root>/shared/store, or with store="drive" <root>/shared/drive/store."""
    (root / "shared").mkdir(exist_ok=True)
    m = make_machine(root, name)
    m.checkout = m.home / checkout_rel
    m.checkout.mkdir(parents=True)
    m.store = root / "shared" / ("drive/store" if store == "drive" else "store")
    start = time.monotonic()
    m.helper = setup_machine(m, template=template, store=m.store, projects={m.checkout: "app"}, runtimes=runtimes,
                             hooks=hooks)
    print(f"copier setup of {name}: {time.monotonic() - start:.1f} s")
    return m


@pytest.fixture
def world(machine_snapshots, agent_template):
    """Machines set up by the Copier template: `world("m1", runtimes=("codex",), hooks=True, store="drive")`
    is one (the keywords of `_set_up`); `world.machines(spec, spec)` sets several up, in order, on one
    store. Each distinct set-up is one real copy per session, put back fresh for each test
    (tests/fixtures_machines.py)."""

    def machines(*specs):
        for spec in specs:
            for runtime in spec.get("runtimes", ("codex", "claude")):
                require_cli(runtime)  # before the copy, which takes seconds: a missing CLI skips at once
        name = "--".join("-".join(f"{k}={'+'.join(v) if isinstance(v, tuple) else v}" for k, v in sorted(s.items()))
                         for s in specs).replace("/", "_")
        return machine_snapshots.restore(f"e2e-{name}", lambda root: [_set_up(root, agent_template, **s) for s in specs])

    def machine(name, **kw):
        return machines({"name": name, **kw})[0]

    machine.machines = machines
    return machine


def helper(m, *args, input=None):
    proc = subprocess.run([*m.helper, *args], cwd=m.checkout, env=m.env(), input=input,
                          capture_output=True, text=True, timeout=60)
    return proc.returncode, proc.stdout, proc.stderr


def run_cli(m, runtime, stub, prompt, **kw):
    run = getattr(m, runtime)(stub, prompt, cwd=m.checkout, **kw)
    print(f"{runtime} run: {run.seconds:.1f} s, {len(stub.requests)} request(s)")
    assert run.returncode == 0, (run.stdout, run.stderr)
    return run


@pytest.mark.parametrize("runtime", RUNTIME_PARAMS)
def test_the_managed_block_and_the_agent_memory_skill_reach_the_model(world, model_stub, runtime):
    m = world("m1", runtimes=(runtime,))
    model_stub.script += [Text("ok")]

    run_cli(m, runtime, model_stub, "hello")

    first = model_stub.requests[0]
    # The user-level instruction file as the runtime presents it (Claude Code drops the HTML
    # comment markers around our block; Codex keeps them).
    where = "# AGENTS.md instructions" if runtime == "codex" else "user's private global instructions"
    block = first.texts_containing(where)
    assert block and "Use the `agent-memory` skill for prior context" in block[0][1]
    assert helper_from_context(first.texts()) == " ".join(m.helper)
    listing = "- agent-memory: Shared memory across sessions and machines."
    assert any(listing in text for _, text in first.texts())


def _offline_save(world, runtime, *, hooks_on):
    """A machine whose store is unreachable at save time (drive unmounted), holding one pending note."""
    m = world("m1", runtimes=(runtime,), hooks=hooks_on, store="drive")
    store = m.store
    assert pending.count(m.agentmem_home) == 0  # setup's verification note was confirmed
    unmounted = store.parent.rename(store.parent.with_name("drive-unmounted"))
    status, out, err = helper(m, "save", "--title", "Unsent finding", "-", input="The zebra cache is warm.\n")
    assert status == 10, (out, err)
    [entry] = pending.list_entries(m.agentmem_home)
    _, data = pending.load(m.agentmem_home, entry.id)
    unmounted.rename(store.parent)  # the drive is back before the agent runs
    return m, store, entry, data


@pytest.mark.parametrize("runtime", RUNTIME_PARAMS)
def test_with_hooks_on_the_reminder_reaches_the_model_and_stop_uploads_the_pending_note(world, model_stub, runtime):
    m, store, entry, data = _offline_save(world, runtime, hooks_on=True)
    model_stub.script += [Text("ok")]

    run = run_cli(m, runtime, model_stub, "hello", **({"trust_hooks": True} if runtime == "codex" else {}))

    first = model_stub.requests[0]
    reminder = first.texts_containing(actions.GUIDANCE)
    assert reminder, "the SessionStart reminder did not reach the model"
    assert "1 memory note is saved on this machine but not yet confirmed" in reminder[0][1]
    if runtime == "claude":
        assert "SessionStart:startup hook success: " + actions.GUIDANCE in reminder[0][1]
    else:
        assert reminder[0][0] == "developer"
    assert first.texts_containing("1 memory note is saved")  # the UserPromptSubmit reminder too
    # The Stop hook ran after the reply: the pending note is in the store, same bytes, same path.
    assert (store / entry.path).read_bytes() == data  # INV same-bytes-retry
    assert pending.count(m.agentmem_home) == 0
    assert run.seconds < actions.STOP_BUDGET


@pytest.mark.parametrize("runtime", RUNTIME_PARAMS[:1])
def test_codex_runs_our_hooks_once_trusted_through_its_app_server_and_no_other_hook(world, model_stub, runtime):
    m, store, entry, data = _offline_save(world, runtime, hooks_on=True)
    hooks_file = m.codex_home / "hooks.json"
    config = json.loads(hooks_file.read_text())
    user_hook = {"hooks": [{"type": "command", "command": "echo USER-HOOK-RAN"}]}
    config["hooks"]["SessionStart"].insert(0, user_hook)  # an untrusted hook of the user's own
    hooks_file.write_text(json.dumps(config, indent=2))
    model_stub.script += [Text("ok"), Text("ok")]

    run_cli(m, runtime, model_stub, "hello")  # untrusted: Codex skips our hooks without a word
    assert not model_stub.requests[0].texts_containing(actions.GUIDANCE)
    assert pending.count(m.agentmem_home) == 1

    status, out, err = helper(m, "hooks", "trust", "--runtime", "codex", "--codex", str(require_cli("codex")))
    assert status == 0, (out, err)
    assert "3 agentmem hook(s) trusted" in out

    run_cli(m, runtime, model_stub, "hello again")
    second = model_stub.requests[1]
    assert second.texts_containing(actions.GUIDANCE)
    assert not second.texts_containing("USER-HOOK-RAN")  # still untrusted: we trust only ours
    assert (store / entry.path).read_bytes() == data
    assert pending.count(m.agentmem_home) == 0


@pytest.mark.parametrize("how", ["never-installed", "removed"])
@pytest.mark.parametrize("runtime", RUNTIME_PARAMS)
def test_with_hooks_off_nothing_of_ours_runs_and_the_core_workflow_is_unchanged(world, model_stub, runtime, how):
    m, store, entry, _ = _offline_save(world, runtime, hooks_on=how == "removed")
    if how == "removed":
        status, out, err = helper(m, "hooks", "remove", "--runtime", runtime)
        assert status == 0, err
    hooks_file = m.home / (".codex/hooks.json" if runtime == "codex" else ".claude/settings.json")
    # (Claude Code's settings.json keeps setup's permission rule for the helper: no hook of ours.)
    assert not hooks_file.exists() or " hook " not in hooks_file.read_text()
    model_stub.script += [Text("ok")]

    # For Codex, even with hook trust bypassed: there is nothing of ours to run.
    run_cli(m, runtime, model_stub, "hello", **({"trust_hooks": True} if runtime == "codex" else {}))

    assert model_stub.requests and not any(r.texts_containing("memory note") for r in model_stub.requests)
    assert not any(r.texts_containing(actions.GUIDANCE) for r in model_stub.requests)
    assert [e.id for e in pending.list_entries(m.agentmem_home)] == [entry.id]  # no Stop retry ran
    assert not (store / entry.path).exists()
    assert model_stub.requests[0].texts_containing("Use the `agent-memory` skill for prior context")


CHECKPOINT = """Goal: move the zebra cache to the folder store.
Done: migration verified with a search from a second checkout.
Next: retire the old cache path.
"""


def _save_checkpoint_step(request):
    """What the skill tells an agent: call the helper named in the managed block to save."""
    cmd = helper_from_context(request.texts())
    return Shell(f"{cmd} save --kind checkpoint --title 'Zebra migration checkpoint' - <<'EOF'\n{CHECKPOINT}EOF")


def _search_step(request):
    return Shell(f"{helper_from_context(request.texts())} search zebra")


@pytest.mark.parametrize("reader", RUNTIME_PARAMS)
def test_a_checkpoint_saved_by_codex_on_one_machine_is_found_by_an_agent_on_another(world, model_stub, reader):
    # INV read-your-writes: the reader is set up (and has searched: setup's verification) before the save,
    # and still finds the checkpoint at once; before, its cache window hid it for up to 30 s.
    writer, other = world.machines({"name": "m1", "checkout_rel": "src/app", "runtimes": ("codex",)},
                                   {"name": "m2", "checkout_rel": "work/app-clone", "runtimes": (reader,)})

    model_stub.script += [_save_checkpoint_step, Text("Checkpoint saved.")]
    run_cli(writer, "codex", model_stub, "Save a checkpoint of the zebra migration.", tools=True)
    [saved_output] = model_stub.requests[-1].tool_outputs()
    assert "saved " in saved_output and "to shared memory" in saved_output, saved_output
    note_id = saved_output.split("saved ", 1)[1].split()[0]

    assert writer.checkout != other.checkout

    reader_stub = type(model_stub)(script=[_search_step, Text("Found it.")]).start()
    try:
        run_cli(other, reader, reader_stub, "What did we decide about the zebra cache?", tools=True)
    finally:
        reader_stub.stop()
    [found] = reader_stub.requests[-1].tool_outputs()
    assert note_id in found and "Zebra migration checkpoint" in found, found
    assert "in project app" in found
