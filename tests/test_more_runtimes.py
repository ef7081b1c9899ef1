"""Gemini CLI, OpenCode and Copilot CLI as runtimes, and the permissions setup grants: fast checks.

The real CLIs reading these files are in tests/test_e2e_five_clis.py (slow).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib

import pytest

from agentmem.errors import InvalidInput
from agentmem.hooks import actions
from agentmem.machine import json_items
from agentmem.runtimes import gemini
from agentmem.runtimes.registry import runtime
from agentmem.store.base import StoreDescription

HELPER = ["/opt/me/.config/agentmem/.venv/bin/agentmem"]


@pytest.fixture
def env(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    return {"HOME": str(home)}


@pytest.fixture
def machine(tmp_path):
    path = tmp_path / "machine"
    path.mkdir()
    return path


def _hook(laptop, *args, input=""):
    return subprocess.run([sys.executable, "-m", "agentmem", "hook", *args], input=input, capture_output=True,
                          text=True, env=laptop.env, timeout=60)


@pytest.mark.parametrize("runtime_name, event, expected", [
    ("gemini", "start", lambda t: {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": t}}),
    ("gemini", "prompt", lambda t: {"hookSpecificOutput": {"hookEventName": "BeforeAgent", "additionalContext": t}}),
    ("copilot", "start", lambda t: {"additionalContext": t}),
    ("copilot", "prompt", lambda t: {"additionalContext": t}),
])
def test_gemini_and_copilot_reminders_print_the_json_form_their_cli_injects(laptop, runtime_name, event, expected):
    # INV runtime-hook-form
    (laptop.home / "pending" / "20261201T000000000Z-aaaaaaaa").mkdir(parents=True)  # one pending entry, as counted
    proc = _hook(laptop, "reminder", "--runtime", runtime_name, "--event", event)
    assert proc.returncode == 0, proc.stderr
    text = json.loads(proc.stdout)
    context = (text.get("hookSpecificOutput") or text)["additionalContext"]
    assert "saved on this machine but not yet confirmed" in context
    if event == "start":
        assert actions.GUIDANCE in context
    assert text == expected(context)


def test_opencode_and_codex_reminders_stay_plain_text(laptop):
    for name in ("opencode", "codex", "claude"):
        proc = _hook(laptop, "reminder", "--runtime", name)
        assert proc.returncode == 0 and proc.stdout == actions.GUIDANCE + "\n", (name, proc.stdout, proc.stderr)


def test_a_stop_hook_for_every_new_runtime_exits_zero_and_prints_no_decision(laptop):
    for name in ("gemini", "opencode", "copilot"):
        proc = _hook(laptop, "stop", "--runtime", name, input='{"stopReason": "end_turn", "stop_hook_active": false}')
        assert proc.returncode == 0 and proc.stdout == "", (name, proc.stdout, proc.stderr)


GEMINI_USER = {"ui": {"theme": "Default"}, "hooks": {"SessionEnd": [{"hooks": [{"type": "command",
                                                                               "command": "true"}]}]}}


def test_gemini_hooks_go_into_its_settings_beside_the_users_and_come_out_byte_equal(machine, env):
    # INV outside-untouched
    path = runtime("gemini", env).hooks_file
    path.parent.mkdir(parents=True)
    before = json.dumps(GEMINI_USER, indent=2) + "\n"
    path.write_text(before)

    change = runtime("gemini", env).install_hooks(machine, HELPER)
    data = json.loads(path.read_text())
    assert change.changed and data["ui"] == GEMINI_USER["ui"]
    assert data["hooks"]["SessionEnd"] == GEMINI_USER["hooks"]["SessionEnd"]
    commands = {e: g[0]["hooks"][0]["command"] for e, g in data["hooks"].items() if e != "SessionEnd"}
    assert commands == {
        "SessionStart": f"{HELPER[0]} hook reminder --runtime gemini",
        "BeforeAgent": f"{HELPER[0]} hook reminder --event prompt --runtime gemini",
        "AfterAgent": f"{HELPER[0]} hook stop --runtime gemini",
    }
    assert data["hooks"]["AfterAgent"][0]["hooks"][0]["timeout"] == 15_000  # milliseconds in Gemini CLI
    assert not runtime("gemini", env).install_hooks(machine, HELPER).changed  # INV idempotent-apply
    assert runtime("gemini", env).hooks_status(HELPER)["current"] is True

    assert runtime("gemini", env).remove_hooks(machine).changed
    assert path.read_text() == before


def test_gemini_hooks_in_a_file_agentmem_created_take_the_file_away_again(machine, env):
    path = runtime("gemini", env).hooks_file
    runtime("gemini", env).install_hooks(machine, HELPER)
    assert path.exists()
    runtime("gemini", env).remove_hooks(machine)
    assert not path.exists()


@pytest.mark.parametrize("name", ["copilot", "opencode"])
def test_copilot_and_opencode_hook_files_are_agentmems_own_and_a_foreign_one_is_left_alone(machine, env, name):
    path = runtime(name, env).hooks_file
    neighbour = path.parent / ("mine.json" if name == "copilot" else "mine.js")
    neighbour.parent.mkdir(parents=True)
    neighbour.write_text("{}\n")

    assert runtime(name, env).install_hooks(machine, HELPER).changed
    text = path.read_text()
    assert f"{HELPER[0]}" in text
    if name == "copilot":
        hooks = json.loads(text)["hooks"]
        assert json.loads(text)["version"] == 1
        assert [h["bash"] for h in hooks["agentStop"]] == [f"{HELPER[0]} hook stop --runtime copilot"]
        assert set(hooks) == {"sessionStart", "userPromptSubmitted", "agentStop"}
    else:
        assert '"hook", ...args, "--runtime", "opencode"' in text and "session.idle" in text
    assert runtime(name, env).hooks_status(HELPER)["current"] is True
    assert not runtime(name, env).install_hooks(machine, HELPER).changed
    assert runtime(name, env).remove_hooks(machine).changed
    assert not path.exists() and neighbour.read_text() == "{}\n"

    path.write_text("user's own file\n")  # the same name, not written by agentmem
    with pytest.raises(InvalidInput, match="not written by agentmem"):
        runtime(name, env).install_hooks(machine, HELPER)
    assert not runtime(name, env).remove_hooks(machine).changed
    assert path.read_text() == "user's own file\n"


def test_a_hooks_folder_agentmem_created_goes_with_its_file(machine, env):
    path = runtime("copilot", env).hooks_file
    runtime("copilot", env).install_hooks(machine, HELPER)
    runtime("copilot", env).remove_hooks(machine)
    assert not path.parent.exists()


CLAUDE_USER = {"theme": "dark", "permissions": {"allow": ["Bash(ls:*)"], "deny": ["Read(.env)"]}}


def test_claudes_allow_rule_for_the_helper_sits_beside_the_users_and_comes_out_byte_equal(machine, env):
    # INV outside-untouched
    path = runtime("claude", env).hooks_file
    path.parent.mkdir(parents=True)
    before = json.dumps(CLAUDE_USER, indent=2) + "\n"
    path.write_text(before)

    changed, _ = runtime("claude", env).grant_permissions(machine, HELPER, None)
    assert changed
    assert json.loads(path.read_text())["permissions"]["allow"] == ["Bash(ls:*)", f"Bash({HELPER[0]}:*)"]
    assert runtime("claude", env).grant_permissions(machine, HELPER, None)[0] is False  # INV idempotent-apply
    moved = ["/new/place/agentmem"]
    runtime("claude", env).grant_permissions(machine, moved, None)  # a new helper path replaces the old rule
    assert json.loads(path.read_text())["permissions"]["allow"] == ["Bash(ls:*)", "Bash(/new/place/agentmem:*)"]

    assert runtime("claude", env).withdraw_permissions(machine)
    assert path.read_text() == before


def test_json_items_in_a_file_agentmem_created_remove_the_file(machine, tmp_path):
    path = tmp_path / "x" / "settings.json"
    assert json_items.add_items(machine, path, "permissions.allow", ["a"])
    assert json.loads(path.read_text()) == {"permissions": {"allow": ["a"]}}
    assert json_items.remove_items(machine, path, "permissions.allow")
    assert not path.exists()
    assert not (machine / json_items.STATE_FILE).exists()


def test_codex_writable_roots_name_the_machine_folder_and_a_folder_store_and_follow_a_moved_store(machine, env,
                                                                                                 tmp_path):
    config = runtime("codex", env).config_dir / "config.toml"
    config.parent.mkdir(parents=True)
    before = '# mine\n[sandbox_workspace_write]\nwritable_roots = ["/srv/data"]\nnetwork_access = false\n'
    config.write_text(before)
    store = StoreDescription("folder", str(tmp_path / "store"))

    runtime("codex", env).grant_permissions(machine, HELPER, store)
    roots = tomllib.loads(config.read_text())["sandbox_workspace_write"]["writable_roots"]
    assert roots == ["/srv/data", str(machine.resolve()), str((tmp_path / "store").resolve())]

    moved = StoreDescription("folder", str(tmp_path / "elsewhere"))
    runtime("codex", env).grant_permissions(machine, HELPER, moved)
    roots = tomllib.loads(config.read_text())["sandbox_workspace_write"]["writable_roots"]
    assert roots == ["/srv/data", str(machine.resolve()), str((tmp_path / "elsewhere").resolve())]

    runtime("codex", env).grant_permissions(machine, HELPER, StoreDescription("bucket", "me/agent-memory"))
    roots = tomllib.loads(config.read_text())["sandbox_workspace_write"]["writable_roots"]
    assert roots == ["/srv/data", str(machine.resolve())]  # a bucket needs no folder

    assert runtime("codex", env).withdraw_permissions(machine)
    assert config.read_text() == before  # INV outside-untouched


def test_gemini_policy_allows_the_helper_prefix_and_a_policy_file_of_the_users_is_kept(machine, env):
    changed, _ = runtime("gemini", env).grant_permissions(machine, HELPER, None)
    policy = runtime("gemini", env).config_dir / "policies" / gemini.POLICY_FILE
    rule = tomllib.loads(policy.read_text())["rule"]
    assert changed and rule == [{"toolName": "run_shell_command", "commandPrefix": HELPER[0],
                                 "decision": "allow", "priority": 100}]
    assert runtime("gemini", env).withdraw_permissions(machine) and not policy.exists()

    policy.write_text("# the user's own\n")
    with pytest.raises(InvalidInput, match="not written by agentmem"):
        runtime("gemini", env).grant_permissions(machine, HELPER, None)
    assert not runtime("gemini", env).withdraw_permissions(machine)
    assert policy.read_text() == "# the user's own\n"


def test_opencode_keeps_reading_a_users_claude_md_once_agentmem_creates_its_agents_md(machine, env):
    claude_md = runtime("claude", env).instructions
    claude_md.parent.mkdir(parents=True)
    claude_md.write_text("Use tabs.\n")
    config = runtime("opencode", env).config_dir / "opencode.json"

    status, _ = runtime("opencode", env).keep_claude_md(machine, agents_md_existed=False)
    assert status == "changed"
    assert json.loads(config.read_text()) == {"instructions": [str(claude_md)]}
    # On a rerun the AGENTS.md exists (agentmem made it): the entry stays, nothing changes.
    assert runtime("opencode", env).keep_claude_md(machine, agents_md_existed=True)[0] == "ok"


def test_opencode_leaves_a_users_own_agents_md_choice_and_an_empty_claude_md_alone(machine, env):
    claude_md = runtime("claude", env).instructions
    claude_md.parent.mkdir(parents=True)
    claude_md.write_text("Use tabs.\n")
    assert runtime("opencode", env).keep_claude_md(machine, agents_md_existed=True) is None
    claude_md.write_text("<!-- agent-memory:begin -->\nours\n<!-- agent-memory:end -->\n")
    assert runtime("opencode", env).keep_claude_md(machine, agents_md_existed=False) is None
    assert not (runtime("opencode", env).config_dir / "opencode.json").exists()


def test_the_three_newer_runtimes_share_the_agents_skills_folder_with_codex(env):
    roots = {runtime(n, env).skills_root for n in ("codex", "gemini", "opencode", "copilot")}
    assert roots == {runtime("codex", env).skills_root}
    xdg = {**env, "XDG_CONFIG_HOME": "/xdg", "COPILOT_HOME": "/cop"}
    assert str(runtime("opencode", xdg).instructions) == "/xdg/opencode/AGENTS.md"
    assert str(runtime("copilot", xdg).hooks_file) == "/cop/hooks/agentmem.json"


def test_save_text_takes_the_body_as_one_argument_and_refuses_a_file_beside_it(laptop):
    status, out, err = laptop.run("save", "--title", "Inline", "--text", "Line one.\nLine two (b).", cwd=laptop.checkout)
    assert status == 0, (out, err)
    note_id = out.split("saved ", 1)[1].split()[0]
    status, out, _ = laptop.run("read", note_id, cwd=laptop.checkout)
    assert "Line one." in out and "Line two (b)." in out
    status, _, err = laptop.run("save", "--title", "Both", "--text", "x", "body.md", cwd=laptop.checkout)
    assert status == 2 and err.count("\n") == 1 and "either with --text or as FILE" in err


def _read_only_mount_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(not _read_only_mount_works(), reason="needs `unshare -m` (root or user namespaces)")
def test_a_save_into_a_read_only_machine_folder_fails_in_one_line_and_keeps_nothing(laptop):
    # INV loud-unwritable, INV nothing-lost: a note that cannot be kept is never reported as saved
    laptop.run("search", "warm", cwd=laptop.checkout)  # the machine folder and its cache exist
    script = ('mount --bind "$AGENTMEM_HOME" "$AGENTMEM_HOME" && mount -o remount,bind,ro "$AGENTMEM_HOME" && '
              f'exec {sys.executable} -m agentmem save --title Lost --text "The zebra cache is warm."')
    proc = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True,
                          cwd=laptop.checkout, env=laptop.env, timeout=60)
    assert proc.returncode == 6, (proc.stdout, proc.stderr)  # errors.EXIT_NO_ACCESS
    assert proc.stdout == "" and proc.stderr.count("\n") == 1
    line = proc.stderr
    assert "cannot write the agentmem machine folder" in line and "Read-only file system" in line
    assert "nothing was saved" in line and "--sandbox workspace-write" in line
    assert not (laptop.home / "pending").exists() or not any((laptop.home / "pending").iterdir())
    store = laptop.home.parent.parent / "shared-store"
    assert "zebra" not in "".join(p.read_text() for p in store.rglob("*.md"))


@pytest.mark.parametrize("name", ["gemini", "copilot"])
def test_the_hand_written_hook_json_survives_quotes_backslashes_and_control_characters(name):
    # INV runtime-hook-form
    from agentmem.hooks.dispatch import reminder_output

    text = 'a "quoted" \\ path\nnext line\ttab, é, \x01'
    data = json.loads(reminder_output(name, "prompt", text))
    assert (data.get("hookSpecificOutput") or data)["additionalContext"] == text
