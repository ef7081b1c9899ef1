"""Registering `agentmem mcp` with Claude Code and Codex: managed entries, kept and removed exactly like hooks."""

from __future__ import annotations

import json
import os
import tomllib

import pytest

from agentmem.errors import InvalidInput
from agentmem.machine import claude_config, helper_venv
from agentmem.mcp import extra, registration
from agentmem.runtimes import codex
from agentmem.runtimes.registry import runtime as get_runtime
from agentmem.setup import runner
from tests.proptest import given, settings
from tests.template_kit import REPO, make_template_repo

HELPER = ["/opt/agentmem home/.venv/bin/agentmem"]
OURS = {"type": "stdio", "command": HELPER[0], "args": ["mcp"], "env": {}}
# ~/.claude.json as Claude Code 2.1.332 writes it (2-space JSON), with a server of the user's own.
CLAUDE_JSON = """{
  "firstStartTime": "2026-12-01T09:27:22.071Z",
  "numStartups": 14,
  "tipsHistory": {
    "new-user-warmup": 7
  },
  "mcpServers": {
    "github": {
      "type": "stdio",
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-github"
      ],
      "env": {}
    }
  },
  "lastCost": 0.1250,
  "projects": {
    "/home/me/src/app": {
      "allowedTools": []
    }
  }
}"""
CODEX_TOML = """# my Codex settings
model = "gpt-5"  # the one I like

[mcp_servers.docs]
command = "docs-server"
args = ["--stdio"]

[tui]
theme = "dark"
"""


def test_the_sdk_pin_in_code_is_the_one_of_the_pyproject_extra():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["optional-dependencies"]["mcp"] == [extra.REQUIREMENT]
    assert extra.REQUIREMENT in project["optional-dependencies"]["test"]
    assert helper_venv._extra_pins(REPO, "mcp") == [extra.REQUIREMENT]


def _machine_folder(tmp_path, mcp: bool):
    home = tmp_path / "machine"
    home.mkdir()
    (home / "config.toml").write_text(f"[mcp]\nenabled = {str(mcp).lower()}\n")
    return home


@pytest.mark.slow  # builds a venv
def test_beside_a_copier_that_has_the_pinned_sdk_the_helper_venv_uses_it_and_installs_nothing(tmp_path):
    import subprocess

    from tests.test_helper_venv import _source

    home = _machine_folder(tmp_path, mcp=True)
    helper_venv.install(home, _source(tmp_path))
    python = helper_venv.venv_python(home / ".venv")
    probe = "from importlib import metadata; print(metadata.version('mcp'))"
    assert subprocess.run([str(python), "-c", probe], capture_output=True, text=True, check=True).stdout.strip() == "2.3.0"
    record = json.loads((home / ".venv" / helper_venv.INSTALL_RECORD).read_text())
    assert record["dependencies"] == "copied"  # from beside Copier: nothing was downloaded


@pytest.mark.slow  # pip installs the runtime dependencies and the SDK from the package index (docs/benchmarks.md)
def test_without_the_sdk_beside_copier_the_helper_venv_gets_it_when_the_answer_is_yes(tmp_path):
    # The answer "no" from a bare Copier, the same install with `enabled = false`, is checked by
    # tests/test_helper_venv.py::test_without_the_dependencies_beside_copier_the_venv_gets_its_own_pinned_copies,
    # which ran that very install apart from the answer (one slow pip run, not two).
    import subprocess
    import sys

    from tests.test_helper_venv import _source

    bare = tmp_path / "bare-copier-env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    home = _machine_folder(tmp_path, mcp=True)
    subprocess.run([str(bare / "bin" / "python"), "-I", str(REPO / "agentmem" / "machine" / "helper_venv.py"),
                    str(home), str(_source(tmp_path))], check=True, capture_output=True)
    python = helper_venv.venv_python(home / ".venv")
    probe = "from importlib import metadata, util; print(util.find_spec('mcp') and metadata.version('mcp'))"
    found = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
    assert found == "2.3.0"


# --- ~/.claude.json ------------------------------------------------------------------------------

def json_values(st):
    return st.recursive(
        st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=8),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
        max_leaves=12,
    )


@settings(max_examples=150, deadline=None, suppress_health_check=["function_scoped_fixture"])
@given(data=lambda st: st.dictionaries(st.text(max_size=6).filter(lambda k: k != "mcpServers"), json_values(st),
                                       max_size=5),
       servers=lambda st: st.none() | st.dictionaries(st.sampled_from(["github", "docs", "x"]), json_values(st),
                                                      max_size=2),
       indent=lambda st: st.sampled_from([None, 2, 4, "\t"]), ascii_only=lambda st: st.booleans(),
       newline=lambda st: st.booleans(), empty_inner=lambda st: st.sampled_from(["", " ", "\n  "]))
def test_registering_and_unregistering_leaves_every_other_byte_of_claude_json(tmp_path, data, servers, indent,
                                                                             ascii_only, newline, empty_inner):
    # INV outside-untouched
    if servers is not None:
        data = {**data, "mcpServers": servers}
    before = json.dumps(data, indent=indent, ensure_ascii=ascii_only) + ("\n" if newline else "")
    if servers == {}:  # the user's empty container, however it is spaced
        before = before.replace('"mcpServers": {}', '"mcpServers": {' + empty_inner + "}")
    path = tmp_path / "claude.json"
    path.write_text(before, encoding="utf-8")
    machine = tmp_path / "machine"
    machine.mkdir(exist_ok=True)

    claude_config.set_member(machine, path, "mcpServers", "agentmem", OURS)
    after = json.loads(path.read_text(encoding="utf-8"))
    assert after["mcpServers"]["agentmem"] == OURS
    assert {k: v for k, v in after.items() if k != "mcpServers"} == {k: v for k, v in data.items() if k != "mcpServers"}
    assert {k: v for k, v in after["mcpServers"].items() if k != "agentmem"} == (servers or {})
    assert list(after) == list(data) + ([] if servers is not None else ["mcpServers"])

    assert claude_config.remove_member(machine, path, "mcpServers", "agentmem").changed
    assert path.read_text(encoding="utf-8") == before
    path.unlink()


def _register(tmp_path, runtime="claude"):
    machine = tmp_path / "machine"
    machine.mkdir(exist_ok=True)
    env = {"HOME": str(tmp_path / "home")}
    return machine, env, registration.register(machine, get_runtime(runtime, env), HELPER)


def test_claude_gets_the_entry_claude_mcp_add_would_write_beside_the_users_servers(tmp_path):
    # INV outside-untouched
    home = tmp_path / "home"
    home.mkdir()
    (home / ".claude.json").write_text(CLAUDE_JSON)
    machine, env, change = _register(tmp_path)
    assert change.changed and change.path == home / ".claude.json"
    text = (home / ".claude.json").read_text()
    assert json.loads(text)["mcpServers"] == {"github": json.loads(CLAUDE_JSON)["mcpServers"]["github"], "agentmem": OURS}
    assert '"lastCost": 0.1250' in text  # not re-serialised as 0.125
    # laid out as Claude Code lays out the rest of the file
    assert text == json.dumps(json.loads(text), indent=2).replace("0.125", "0.1250")
    assert not registration.register(machine, get_runtime("claude", env), HELPER).changed  # INV idempotent-apply
    assert registration.unregister(machine, get_runtime("claude", env)).changed
    assert (home / ".claude.json").read_text() == CLAUDE_JSON


def test_a_new_claude_json_is_created_private_and_removed_again_when_nothing_else_came_into_it(tmp_path):
    machine, env, change = _register(tmp_path)
    path = tmp_path / "home" / ".claude.json"
    assert change.changed and json.loads(path.read_text()) == {"mcpServers": {"agentmem": OURS}}
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert registration.unregister(machine, get_runtime("claude", env)).detail.endswith("the file agentmem had created")
    assert not path.exists()


def test_a_symlinked_claude_json_is_written_in_its_target(tmp_path):
    home, dotfiles = tmp_path / "home", tmp_path / "dotfiles"
    home.mkdir(), dotfiles.mkdir()
    (dotfiles / "claude.json").write_text(CLAUDE_JSON)
    (home / ".claude.json").symlink_to(dotfiles / "claude.json")
    machine, env, _ = _register(tmp_path)
    assert (home / ".claude.json").is_symlink()
    assert json.loads((dotfiles / "claude.json").read_text())["mcpServers"]["agentmem"] == OURS
    registration.unregister(machine, get_runtime("claude", env))
    assert (home / ".claude.json").is_symlink() and (dotfiles / "claude.json").read_text() == CLAUDE_JSON


@pytest.mark.parametrize("runtime", ["claude", "codex"])
def test_a_read_only_or_malformed_config_is_reported_and_left_as_it_was(tmp_path, runtime):
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    path = get_runtime(runtime, {"HOME": str(home)}).mcp.file
    for text, mode, message in ((CLAUDE_JSON if runtime == "claude" else CODEX_TOML, 0o444, "is read-only"),
                                ("{not json" if runtime == "claude" else "[broken", 0o644, "is not valid")):
        path.write_text(text)
        path.chmod(mode)
        with pytest.raises(InvalidInput, match=message):
            _register(tmp_path, runtime)
        assert path.read_text() == text
        path.chmod(0o644)


@pytest.mark.parametrize("runtime", ["claude", "codex"])
def test_an_agentmem_server_of_the_users_own_is_left_alone(tmp_path, runtime):
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    path = get_runtime(runtime, {"HOME": str(home)}).mcp.file
    text = (json.dumps({"mcpServers": {"agentmem": {"command": "my-own-memory", "args": []}}}, indent=2)
            if runtime == "claude" else '[mcp_servers.agentmem]\ncommand = "my-own-memory"\n')
    path.write_text(text)
    with pytest.raises(InvalidInput, match="already has an MCP server named agentmem that agentmem did not write"):
        _register(tmp_path, runtime)
    machine = tmp_path / "machine"
    assert not registration.unregister(machine, get_runtime(runtime, {"HOME": str(home)})).changed
    assert path.read_text() == text


def test_an_entry_of_ours_whose_records_were_lost_is_still_recognised_and_removed(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / ".claude.json").write_text(CLAUDE_JSON)
    machine, env, _ = _register(tmp_path)
    (machine / claude_config.STATE_FILE).unlink()  # a machine folder rebuilt from scratch
    assert registration.unregister(machine, get_runtime("claude", env)).changed
    assert "agentmem" not in json.loads((home / ".claude.json").read_text())["mcpServers"]


# --- $CODEX_HOME/config.toml ------------------------------------------------------------------------

def test_codex_gets_an_mcp_servers_table_naming_the_variables_to_pass_and_loses_only_it_again(tmp_path):
    # INV outside-untouched
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(CODEX_TOML)
    machine = tmp_path / "machine"
    machine.mkdir()
    env = {"HOME": str(tmp_path / "home"), "CODEX_HOME": str(codex_home)}
    assert registration.register(machine, get_runtime("codex", env), HELPER).changed
    cfg = tomllib.loads((codex_home / "config.toml").read_text())
    assert cfg["mcp_servers"]["agentmem"] == {"command": HELPER[0], "args": ["mcp"], "env_vars": codex.MCP_ENV_VARS}
    assert cfg["mcp_servers"]["docs"] == {"command": "docs-server", "args": ["--stdio"]} and cfg["tui"] == {"theme": "dark"}
    assert "HF_TOKEN" in codex.MCP_ENV_VARS and "hf_" not in (codex_home / "config.toml").read_text()  # names only
    assert not registration.register(machine, get_runtime("codex", env), HELPER).changed
    assert registration.unregister(machine, get_runtime("codex", env)).changed
    assert (codex_home / "config.toml").read_text() == CODEX_TOML


# --- setup ----------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def template_repo(tmp_path_factory):
    return make_template_repo(tmp_path_factory.mktemp("tpl"))


def _render(template_repo, folder, **data):
    import copier

    copier.run_copy(str(template_repo), str(folder), vcs_ref="v1.0.0", defaults=True, unsafe=True, skip_tasks=True,
                    quiet=True, data=data)


@pytest.mark.parametrize("answer", [True, False])
def test_the_mcp_answer_switches_the_mcp_table_and_is_off_by_default(template_repo, tmp_path, monkeypatch, answer):
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    _render(template_repo, tmp_path / "on", mcp=answer)
    assert tomllib.loads((tmp_path / "on" / "config.toml").read_text())["mcp"]["enabled"] is answer
    _render(template_repo, tmp_path / "default")
    assert tomllib.loads((tmp_path / "default" / "config.toml").read_text())["mcp"]["enabled"] is False


def test_setup_registers_the_server_for_each_runtime_keeps_it_and_takes_it_out_when_turned_off(
        template_repo, tmp_path, monkeypatch):
    # INV setup-rerun, INV outside-untouched
    user, folder = tmp_path / "user", tmp_path / "user" / "agentmem"
    (user / "app").mkdir(parents=True)
    (user / ".codex").mkdir()
    for key in [k for k in os.environ if k.startswith(("AGENTMEM_", "CODEX_", "XDG_"))]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", str(user))
    (user / ".claude.json").write_text(CLAUDE_JSON)
    (user / ".codex" / "config.toml").write_text(CODEX_TOML)
    _render(template_repo, folder, bucket=str(tmp_path / "store"), projects={str(user / "app"): "app"},
            runtimes=["codex", "claude"], mcp=True)

    report = runner.run_setup(folder, helper_command=HELPER)
    steps = {s.name: s for s in report.steps}
    assert report.outcome == "confirmed", report.text()
    assert steps["mcp codex"].status == "changed" and steps["mcp claude"].status == "changed"
    assert json.loads((user / ".claude.json").read_text())["mcpServers"]["agentmem"] == OURS
    assert tomllib.loads((user / ".codex" / "config.toml").read_text())["mcp_servers"]["agentmem"]["args"] == ["mcp"]
    files = {p: p.read_bytes() for p in (user / ".claude.json", user / ".codex" / "config.toml")}

    again = {s.name: s.status for s in runner.run_setup(folder, helper_command=HELPER).steps}
    assert again["mcp codex"] == again["mcp claude"] == "ok"
    assert {p: p.read_bytes() for p in files} == files

    config = folder / "config.toml"
    config.write_text(config.read_text().replace("[mcp]\nenabled = true", "[mcp]\nenabled = false"))
    off = {s.name: s for s in runner.run_setup(folder, helper_command=HELPER).steps}
    assert off["mcp codex"].status == off["mcp claude"].status == "changed"
    assert (user / ".claude.json").read_text() == CLAUDE_JSON
    # What remains beside the user's own text is the sandbox's writable roots, another managed entry of
    # setup's (runtimes/codex.py): with them taken out too, the file is the user's, byte for byte.
    from agentmem.machine import codex_config

    codex_config.remove_list_items(folder, user / ".codex" / "config.toml", "sandbox_workspace_write.writable_roots")
    assert (user / ".codex" / "config.toml").read_text() == CODEX_TOML
    assert "mcp codex" not in {s.name for s in runner.run_setup(folder, helper_command=HELPER).steps}


def test_setup_with_mcp_on_names_the_command_that_adds_a_missing_sdk(template_repo, tmp_path, monkeypatch):
    user, folder = tmp_path / "user", tmp_path / "user" / "agentmem"
    (user / "app").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(user))
    for key in [k for k in os.environ if k.startswith(("AGENTMEM_", "CODEX_", "XDG_"))]:
        monkeypatch.delenv(key)
    _render(template_repo, folder, bucket=str(tmp_path / "store"), projects={str(user / "app"): "app"},
            runtimes=["claude"], mcp=True)
    monkeypatch.setattr(extra, "VERSION", "0.0.1")  # as if this helper had another SDK version than the pin
    step = {s.name: s for s in runner.run_setup(folder, helper_command=HELPER).steps}["mcp server"]
    assert step.status == "warning"
    assert step.detail.startswith("this helper has MCP Python SDK 2.3.0, and agentmem is built on 0.0.1; add it with: ")
