"""Each real agent CLI in its plain non-interactive mode: no permission flag, trust as setup leaves it.

Machine A is set up by the Copier template with all five runtimes (hooks off, so only what memory
itself needs is there); machine B shares its folder store. Each CLI on A runs one scripted turn
against the model stand-in: the skill's save form (`save --text '...'`), then a search for a note B
saved just before (so A has never seen it). What happened (in the store, and in the tool output the
CLI sent back) must be what the runtime module's `DEFAULT_MODE` says, first with `trust_projects`
off, then after `agentmem setup --trust-projects`; the README prints that table (checked in
tests/test_trust_projects.py). Versions pinned in scripts/install-clis; AGENTMEM_CLI_DIR=/work/clis.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from agentmem.runtimes import registry
from tests.e2e_setup import helper_from_context, setup_machine
from tests.fixtures_clis import ALL_CLIS, make_machine, require_cli, runtime_params
from tests.modelstub import ModelStub, Shell, Text
from tests.template_kit import make_template_repo

pytestmark = pytest.mark.slow


def _helper(m, *args, input=None):
    proc = subprocess.run([*m.helper, *args], cwd=m.checkout, env=m.env(), input=input, capture_output=True,
                          text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    for name in ALL_CLIS:
        require_cli(name)
    base = tmp_path_factory.mktemp("plain")
    template = make_template_repo(base / "template")
    store = base / "drive" / "store"
    machines = {}
    for name, runtimes in (("A", ALL_CLIS), ("B", ("claude",))):
        m = make_machine(base, name)
        m.checkout = m.home / "src" / "app"
        m.checkout.mkdir(parents=True)
        m.helper = setup_machine(m, template=template, store=store, projects={m.checkout: "app"}, runtimes=runtimes)
        machines[name] = m
    machines["store"] = store
    return machines


def _plain(m, runtime: str, stub: ModelStub, prompt: str):
    """The CLI's non-interactive command with no permission flag; only the stand-in is configured."""
    if runtime == "codex":
        m.point_codex_at(stub)
        argv = [str(require_cli("codex")), "exec", "--skip-git-repo-check"]
    elif runtime == "claude":
        argv = [str(require_cli("claude")), "-p"]
    elif runtime == "gemini":  # the stand-in and no telemetry; the folder trust is what setup left
        def change(data):
            data.setdefault("security", {}).setdefault("auth", {})["selectedType"] = "gemini-api-key"
            data.setdefault("privacy", {})["usageStatisticsEnabled"] = False

        m._merge_json(m.home / ".gemini" / "settings.json", change)
        argv = [str(require_cli("gemini")), "-m", "fake-model", "-p"]
    elif runtime == "opencode":
        m.point_opencode_at(stub)
        argv = [str(require_cli("opencode")), "run"]
    else:
        argv = [str(require_cli("copilot")), "-p"]
    return m._run([*argv, prompt], m.env(stub), m.checkout)


def _turn(world, runtime: str, phase: str) -> tuple[bool, bool, str]:
    """(saved, found the note B just saved, what the CLI said) for one plain turn on A."""
    a, b, store = world["A"], world["B"], world["store"]
    word = f"okapi{runtime}{phase}"
    status, out, err = _helper(b, "save", "--title", f"From B {word}", "--json", "--text", f"{word}: saved on B.")
    assert status == 0, (out, err)
    theirs = json.loads(out)["id"]
    title = f"Plain {runtime} {phase}"

    def save(request):  # the skill's form: one command, the body in single quotes
        return Shell(f"{helper_from_context(request.texts())} save --title '{title}' --kind note "
                     f"--text 'Goal: {runtime} in its plain mode.'")

    def search(request):
        return Shell(f"{helper_from_context(request.texts())} search {word} --limit 20")

    stub = ModelStub(script=[save, search, Text("done")]).start()
    try:
        run = _plain(a, runtime, stub, "Save a note, then look up the okapi.")
    finally:
        stub.stop()
    outputs = stub.requests[-1].tool_outputs() if stub.requests else []
    saved = any(title in p.read_text() for p in store.rglob("*.md"))
    found = any(theirs in o for o in outputs)
    said = f"exit {run.returncode}; {run.stderr[-300:]!r}; outputs: {[o[:300] for o in outputs]}"
    print(f"{runtime} {phase}: saved={saved} found={found} ({run.seconds:.1f} s)")
    return saved, found, said


@pytest.mark.parametrize("runtime", runtime_params())
def test_each_cli_with_no_flags_saves_and_searches_exactly_as_its_default_mode_says(world, runtime):
    # INV loud-unwritable (Codex read-only: the search still finds the note), INV nothing-lost
    mode = registry.spec(runtime).default_mode
    a = world["A"]
    status, out, err = _helper(a, "setup", "--no-trust-projects")
    assert status == 0, (out, err)
    saved, found, said = _turn(world, runtime, "plain")
    assert (saved, found) == (mode.saves, mode.searches), said
    if runtime == "codex":  # what the read-only sandbox says: nothing saved, nothing cached, found anyway
        assert "nothing was saved" in said and "nothing was cached" in said and "may be stale" not in said, said

    status, out, err = _helper(a, "setup", "--trust-projects")
    assert status == 0, (out, err)
    saved, found, said = _turn(world, runtime, "trusted")
    assert (saved, found) == (mode["trusted_saves"], mode["trusted_searches"]), said
