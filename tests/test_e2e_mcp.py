"""`agentmem mcp` end to end: machines set up by the Copier template with `mcp` on, the real Codex and
Claude Code CLIs (pinned, offline, against the recording model stand-in) calling its tools.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e_setup import setup_machine
from tests.fixtures_clis import make_machine, require_cli
from tests.modelstub import Shell, Text, ToolCall
from tests.template_kit import make_template_repo

pytestmark = pytest.mark.slow

TOOLS = ["memory_search", "memory_read", "memory_save", "memory_pending", "memory_retry", "memory_retract",
         "memory_pin", "memory_unpin", "memory_review"]
NOTE = "Goal: move the zebra cache to the folder store.\nNext: retire the old cache path.\n"


@pytest.fixture(scope="session")
def agent_template(tmp_path_factory):
    return make_template_repo(tmp_path_factory.mktemp("template"))


def _machine(tmp_path, template, runtimes, mcp=True):
    store = tmp_path / "shared" / "store"
    store.mkdir(parents=True, exist_ok=True)
    m = make_machine(tmp_path, "m1")
    m.checkout = m.home / "src" / "app"
    m.checkout.mkdir(parents=True)
    start = time.monotonic()
    m.helper = setup_machine(m, template=template, store=store, projects={m.checkout: "app"}, runtimes=runtimes,
                             mcp=mcp)
    print(f"copier setup: {time.monotonic() - start:.1f} s")
    m.store = store
    return m


@pytest.fixture
def mcp_machine(machine_snapshots, agent_template):
    """A machine set up with `mcp` on for Codex and Claude Code: one real copy per session, put back
    fresh for each test (tests/fixtures_machines.py)."""
    return machine_snapshots.restore("e2e-mcp-on", lambda root: _machine(root, agent_template, ("codex", "claude")))


def _stored(m) -> list[Path]:
    return sorted((m.store / "projects" / "app" / "notes").glob("*.md"))


def _check_round_trip(m, outputs: list[str]):
    saved = json.loads(outputs[0])
    assert saved["status"] == "saved" and saved["project"] == "app", outputs[0]
    assert f"{saved['id']}.md" in {p.name for p in _stored(m)}
    found = json.loads(outputs[1])
    assert found["notice"].startswith("Note content in this result")
    assert [r["id"] for r in found["results"]][:1] == [saved["id"]], outputs[1]
    assert found["results"][0]["title"] == "Zebra checkpoint"


class WhenListed:
    """A model that calls an MCP server's tools once the CLI lists them, and waits (a shell `sleep`) until then.

    Neither CLI waits for MCP servers before its first request in non-interactive mode (Codex 0.171.0
    `exec`, Claude Code 2.1.332 `-p`); both add a server's tools to later requests once it has started,
    and on a loaded machine our server's start (the SDK's import) can take longer than that.
    """

    def __init__(self, listed, steps: list):
        self.listed, self.steps = listed, list(steps)

    def __call__(self, request):
        if not self.listed(request):
            return Shell("sleep 1")
        return self.steps.pop(0) if self.steps else Text("done.")


def _codex_lists(request) -> bool:
    return any(t.get("name") == "mcp__agentmem" for t in request.body.get("tools") or [])


def _claude_lists(request) -> bool:
    return "mcp__agentmem__memory_save" in request.text


def test_codex_lists_the_servers_tools_and_a_save_then_a_search_round_trip_through_it(request, model_stub):
    require_cli("codex")  # a missing CLI skips at once, before the machine's copy (so not a fixture argument)
    m = request.getfixturevalue("mcp_machine")
    ns = "mcp__agentmem"
    model = WhenListed(_codex_lists, [
        ToolCall("memory_save", {"body": NOTE, "title": "Zebra checkpoint", "kind": "checkpoint"}, namespace=ns),
        ToolCall("memory_search", {"query": "zebra cache"}, namespace=ns),
        Text("Saved and found."),
    ])
    model_stub.script += [model] * 20
    run = m.codex(model_stub, "Save a checkpoint, then look it up.", cwd=m.checkout, tools=True)
    assert run.returncode == 0, (run.stdout[-2000:], run.stderr[-2000:])
    assert not model.steps, "the MCP server's tools never reached the model"

    listed = next(r for r in model_stub.requests if _codex_lists(r))
    [namespace] = [t for t in listed.body["tools"] if t.get("name") == ns]
    assert namespace["type"] == "namespace" and [t["name"] for t in namespace["tools"]] == sorted(TOOLS)
    search = next(t for t in namespace["tools"] if t["name"] == "memory_search")
    assert search["description"].startswith("Search this project's shared memory")
    assert search["parameters"]["required"] == ["query"]
    # The last request carries the whole conversation: the shell waits, then the two MCP results.
    outputs = [o.split("Output:\n", 1)[-1] for o in model_stub.requests[-1].tool_outputs() if "Output:\n{" in o]
    _check_round_trip(m, outputs)


def test_claude_code_lists_the_servers_tools_and_a_save_then_a_search_round_trip_through_it(request, model_stub):
    require_cli("claude")  # a missing CLI skips at once, before the machine's copy (so not a fixture argument)
    m = request.getfixturevalue("mcp_machine")
    names = [f"mcp__agentmem__{t}" for t in TOOLS]
    model = WhenListed(_claude_lists, [
        # Claude Code defers MCP tools: the model sees their names and loads their schemas with ToolSearch.
        ToolCall("ToolSearch", {"query": "select:" + ",".join(names)}),
        ToolCall("mcp__agentmem__memory_save", {"body": NOTE, "title": "Zebra checkpoint", "kind": "checkpoint"}),
        ToolCall("mcp__agentmem__memory_search", {"query": "zebra cache"}),
        Text("Saved and found."),
    ])
    model_stub.script += [model] * 20
    argv = [str(require_cli("claude")), "-p", "Save a checkpoint, then look it up.", "--allowedTools", "Bash",
            "mcp__agentmem"]
    run = m._run(argv, m.env(model_stub), m.checkout)
    assert run.returncode == 0, (run.stdout[-2000:], run.stderr[-2000:])
    assert not model.steps, "the MCP server's tools never reached the model"

    i = next(i for i, r in enumerate(model_stub.requests) if _claude_lists(r))
    assert all(name in model_stub.requests[i].text for name in names)  # listed by name to the model...
    loaded = {t["name"]: t for t in model_stub.requests[i + 1].body["tools"]}  # ...and in full once it asks
    assert loaded["mcp__agentmem__memory_search"]["description"].startswith("Search this project's shared memory")
    assert loaded["mcp__agentmem__memory_save"]["input_schema"]["required"] == ["body"]
    # The last request carries the whole conversation: ToolSearch's result (tool references), then ours.
    _check_round_trip(m, [o for o in model_stub.requests[-1].tool_outputs() if o.startswith("{")])


def test_the_command_agentmem_mcp_names_to_add_the_sdk_runs_as_printed_and_registers_the_server(
        tmp_path, agent_template):
    m = _machine(tmp_path, agent_template, ("codex", "claude"), mcp=False)
    assert not (m.home / ".claude.json").exists() or "agentmem" not in (m.home / ".claude.json").read_text()
    python = m.agentmem_home / ".venv" / "bin" / "python"
    probe = "from agentmem.mcp import extra; import sys; print(extra.install_command(sys.argv[1]))"
    printed = subprocess.run([str(python), "-c", probe, str(m.agentmem_home)], env=m.env(), text=True,
                             capture_output=True, check=True).stdout.strip()
    helper = str(m.agentmem_home / ".venv" / "bin" / "agentmem")
    assert shlex.split(printed) == [helper, "upgrade", "--vcs-ref=:current:", "--data", "mcp=true"]
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    assert printed.replace(str(m.agentmem_home), "~/.config/agentmem") in readme  # the documented command

    # Run as printed, with no copier on PATH: `upgrade` finds the Copier that set the machine up.
    done = subprocess.run(shlex.split(printed), cwd=m.home, env=m.env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    assert "mcp codex: changed" in done.stdout and "mcp claude: changed" in done.stdout
    helper = str(m.agentmem_home / ".venv" / "bin" / "agentmem")
    assert json.loads((m.home / ".claude.json").read_text())["mcpServers"]["agentmem"]["command"] == helper
    assert f'command = "{helper}"' in (m.codex_home / "config.toml").read_text()
    status = subprocess.run(["git", "status", "--porcelain"], cwd=m.agentmem_home, capture_output=True, text=True)
    assert status.stdout == ""  # committed, ready for the next update
