"""A next step is data that each front end spells; one mapping of OS errors; no library module writes CLI lines."""

from __future__ import annotations

import ast
import errno
import json
from pathlib import Path

import pytest

from agentmem import errors, paths, render, shell
from agentmem.cli import main as cli_main
from agentmem.cli import result
from agentmem.errors import Command, NextStep
from agentmem.mcp import tools
from agentmem.memory import recall
from agentmem.safety import credentials
from agentmem.uploads import delivery

PACKAGE = Path(__file__).resolve().parent.parent / "agentmem"


def test_a_next_step_is_the_absolute_helpers_quoted_line_for_the_cli_and_the_tool_for_mcp(tmp_path):
    # INV printed-commands-run
    with pytest.raises(errors.NotFound) as caught:
        delivery.retry(tmp_path, "20261201T000000000Z-aaaaaaaa", timeout=1.0)
    exc = caught.value
    assert isinstance(exc.hint, NextStep) and exc.hint.commands == [Command("pending")]
    line = shell.line("pending")
    assert line.startswith(shell.word(paths.helper_command()[0])) and paths.helper_command()[0].startswith("/")
    assert exc.one_line() == f"no pending note with ID 20261201T000000000Z-aaaaaaaa on this machine (see `{line}`)"
    assert exc.one_line(tools.tool_name).endswith("on this machine (see memory_pending)")


def test_a_command_without_a_tool_stays_a_command_line_in_the_mcp_spelling():
    step = NextStep("run `{}`, then `{}` again", Command("setup", "--new-store"), Command("save", "--retry", "X"))
    assert step.text(tools.tool_name) == (f"run `{shell.line('setup', '--new-store')}`, then "
                                          'memory_retry with {"id": "X"} again')
    with pytest.raises(ValueError):
        NextStep("two {} places {}", Command("setup"))


def test_a_word_with_a_space_or_a_quote_is_quoted_so_the_line_runs_as_printed():
    assert shell.word("/home/the laptop/.venv/bin/agentmem") == "'/home/the laptop/.venv/bin/agentmem'"
    assert shell.word("it's") == "'it'\"'\"'s'" and shell.word("") == "''"
    assert shell.line("read", "ID", helper=["/opt/a b/agentmem"]) == "'/opt/a b/agentmem' read ID"


def test_a_write_refused_in_the_machine_folder_is_not_writable_in_the_cli_and_in_mcp(tmp_path, monkeypatch):
    machine = tmp_path / "machine"
    (machine / "pending").mkdir(parents=True)
    monkeypatch.setenv("AGENTMEM_HOME", str(machine))
    refused = OSError(errno.EROFS, "Read-only file system", str(machine / "pending" / "x"))
    in_cli = cli_main._os_error(refused, ["save", "-"])
    in_mcp = tools.failure(errors.from_os_error(refused, str(machine), nothing_saved=True))
    assert isinstance(in_cli, errors.NotWritable) and in_cli.exit_code == errors.EXIT_NO_ACCESS == 6
    assert in_mcp.error and in_mcp.data["error"] == in_cli.kind == "not-writable"
    assert in_mcp.data["message"] == in_cli.one_line() and "nothing was saved" in in_cli.one_line()
    assert "sandbox" in in_mcp.data["message"]
    elsewhere = OSError(errno.EACCES, "Permission denied", str(tmp_path / "note.md"))
    assert type(errors.from_os_error(elsewhere, str(machine))) is errors.AgentmemError


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found


def test_no_library_module_imports_the_entry_point_or_the_cli_and_mcp_renders_without_the_cli():
    # Module-level and function-level imports alike: only the entry point and the CLI itself may.
    front = ("cli", "launch.py", "__main__.py")
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(front):
            continue
        bad = {m for m in _imports(path) if m in ("agentmem.launch", "agentmem.cli") or m.startswith("agentmem.cli.")}
        if bad:
            found.append(f"{rel}: {sorted(bad)}")
    assert not found, found


# -- the next step as data in --json and in MCP's tool errors (issue Y, item 1) ------------------------------


def test_a_json_error_carries_its_next_step_with_the_commands_arguments_and_its_line(tmp_path, monkeypatch, capsys):
    # INV printed-commands-run
    monkeypatch.setenv("AGENTMEM_HOME", str(tmp_path / "machine"))
    status = cli_main.run(["save", "--retry", "20261201T000000000Z-aaaaaaaa", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert status == errors.EXIT_NOT_FOUND and out["error"] == "not-found"
    line = shell.line("pending")
    assert out["next"] == [{"text": f"see `{line}`", "argv": ["pending"], "command": line}]
    assert out["message"].endswith(f"(see `{line}`)")


def test_an_mcp_tool_error_carries_the_same_step_as_its_tool_call():
    failed = tools.failure(errors.NotFound("no pending note", hint=NextStep("see `{}`", Command("pending"))))
    assert failed.data["next"] == [{"text": "see memory_pending", "tool": {"name": "memory_pending", "arguments": {}}}]
    step = NextStep("run `{}`", Command("setup", "--new-store"))
    assert tools.failure(errors.NotFound("gone", hint=step)).data["next"] == [
        {"text": f"run `{shell.line('setup', '--new-store')}`", "argv": ["setup", "--new-store"]}]


def test_an_option_a_message_names_is_the_clis_flag_and_the_mcp_tools_argument():
    with pytest.raises(errors.InvalidInput) as caught:
        recall.search("/nonexistent", None, "app", "x", limit=0)  # type: ignore[arg-type]
    assert caught.value.one_line() == f"--limit must be between 1 and {recall.MAX_LIMIT}"
    assert caught.value.one_line(tools.tool_name) == f"`limit` must be between 1 and {recall.MAX_LIMIT}"


def test_a_step_naming_a_flag_mcp_lacks_is_left_out_there_and_kept_in_the_cli():
    with pytest.raises(errors.SecretFound) as caught:
        credentials.raise_for(["line 1: a GitHub token (github-token)"])
    exc = caught.value
    assert exc.one_line().endswith("(remove the credential, or pass --redact to replace it with [REDACTED:<kind>])")
    assert [s["text"] for s in render.next_data(exc.next)] == [
        "remove the credential", "or pass --redact to replace it with [REDACTED:<kind>]"]
    assert [s["text"] for s in tools.failure(exc).data["next"]] == ["remove the credential"]
    assert tools.failure(exc).data["message"].endswith("(remove the credential)")


def test_a_credential_in_a_step_is_withheld_from_its_text_and_arguments(monkeypatch):
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    exc = errors.NotFound("gone", hint=NextStep("read it: `{}`", Command("read", token)))
    [step] = render.next_data(exc.next)
    assert token not in json.dumps(step) and "command" not in step and step["argv"][0] == "read"


def test_a_warning_is_its_line_and_a_class_with_next_steps():
    warning = errors.StaleConfig("config.toml holds conflict markers", hint=NextStep("run `{}`", Command("setup")))
    assert warning == "config.toml holds conflict markers" and json.dumps([warning]) == json.dumps([str(warning)])
    payload = result.with_warning_details({"status": "ok", "warnings": [warning, "a plain line"]})
    assert payload["warning_details"] == [
        {"warning": "stale-config", "message": str(warning),
         "next": [{"text": f"run `{shell.line('setup')}`", "argv": ["setup"], "command": shell.line("setup")}]},
        {"warning": "warning", "message": "a plain line", "next": []}]
    assert result.with_warning_details({"status": "ok"}) == {"status": "ok"}
