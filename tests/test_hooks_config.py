"""Installing and removing our hooks in the runtimes' JSON files keeps the user's content."""

from __future__ import annotations

import json
import os

import pytest

from agentmem.errors import InvalidInput, NotConfigured
from agentmem.hooks import config_files
from agentmem.runtimes.registry import runtime as get_runtime
from tests.proptest import given, settings

HELPER = ["/opt/py/bin/python3", "-m", "agentmem"]

USER_SETTINGS = {
    "model": "opus",
    "env": {"FOO": "bär"},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/guard"}]}],
    },
    "permissions": {"allow": ["Bash(ls:*)"], "deny": []},
}


@pytest.fixture
def env(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    return {"HOME": str(home), "CODEX_HOME": str(home / ".codex")}


@pytest.fixture
def agentmem_home(tmp_path):
    path = tmp_path / "agentmem"
    path.mkdir()
    return path


def hooks_file(env, runtime):
    return get_runtime(runtime, env).hooks_file


def install(agentmem_home, runtime, helper, env):
    return get_runtime(runtime, env).install_hooks(agentmem_home, helper)


def remove(agentmem_home, runtime, env):
    return get_runtime(runtime, env).remove_hooks(agentmem_home)


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize("runtime", ["codex", "claude"])
def test_install_then_remove_leaves_a_two_space_file_byte_equal(env, agentmem_home, runtime):
    # The layout Claude Code itself writes (JSON.stringify(x, null, 2)).
    path = hooks_file(env, runtime)
    original = json.dumps(USER_SETTINGS, indent=2, ensure_ascii=False)
    write(path, original)

    install(agentmem_home, runtime, HELPER, env)
    assert path.read_text(encoding="utf-8") != original
    remove(agentmem_home, runtime, env)

    assert path.read_bytes() == original.encode("utf-8")
    assert not (agentmem_home / config_files.STATE_FILE).exists()


def test_install_keeps_other_hooks_keys_and_their_order(env, agentmem_home):
    path = hooks_file(env, "claude")
    write(path, json.dumps(USER_SETTINGS, indent=2))

    install(agentmem_home, "claude", HELPER, env)
    data = json.loads(path.read_text())

    assert list(data) == ["model", "env", "hooks", "permissions"]
    assert list(data["hooks"]) == ["Stop", "PreToolUse", "SessionStart", "UserPromptSubmit"]
    assert data["hooks"]["Stop"][0] == USER_SETTINGS["hooks"]["Stop"][0]
    assert data["hooks"]["PreToolUse"] == USER_SETTINGS["hooks"]["PreToolUse"]
    assert {k: v for k, v in data.items() if k != "hooks"} == {k: v for k, v in USER_SETTINGS.items() if k != "hooks"}
    ours = config_files.our_commands(data)
    assert [e for e, _ in ours] == ["Stop", "SessionStart", "UserPromptSubmit"]


def test_hook_commands_run_the_recorded_absolute_helper(env, agentmem_home):
    install(agentmem_home, "codex", HELPER, env)
    data = json.loads(hooks_file(env, "codex").read_text())

    commands = dict(config_files.our_commands(data))
    assert commands["SessionStart"] == "/opt/py/bin/python3 -m agentmem hook reminder --runtime codex"
    assert commands["UserPromptSubmit"] == "/opt/py/bin/python3 -m agentmem hook reminder --event prompt --runtime codex"
    assert commands["Stop"] == "/opt/py/bin/python3 -m agentmem hook stop --runtime codex"
    stop = data["hooks"]["Stop"][0]["hooks"][0]
    assert stop["timeout"] > config_files.STOP_BUDGET  # the runtime never kills it before its own budget ends


def test_helper_command_must_be_recorded_and_absolute():
    with pytest.raises(NotConfigured):
        config_files.helper_command({})
    with pytest.raises(InvalidInput):
        config_files.helper_command({"helper": {"command": ["python3", "-m", "agentmem"]}})
    assert config_files.helper_command({"helper": {"command": HELPER}}) == HELPER


@pytest.mark.parametrize("runtime", ["codex", "claude"])
def test_remove_deletes_a_file_only_when_agentmem_created_it(env, agentmem_home, runtime):
    path = hooks_file(env, runtime)
    install(agentmem_home, runtime, HELPER, env)
    assert path.exists()
    change = remove(agentmem_home, runtime, env)
    assert change.changed and not path.exists()


def test_remove_keeps_an_empty_file_the_user_already_had(env, agentmem_home):
    path = hooks_file(env, "claude")
    write(path, "{}\n")
    install(agentmem_home, "claude", HELPER, env)
    remove(agentmem_home, "claude", env)
    assert path.read_text() == "{}\n"


def test_remove_keeps_an_empty_hooks_table_the_user_already_had(env, agentmem_home):
    path = hooks_file(env, "codex")
    original = '{\n  "hooks": {\n    "Stop": []\n  }\n}\n'
    write(path, original)
    install(agentmem_home, "codex", HELPER, env)
    remove(agentmem_home, "codex", env)
    assert path.read_text() == original


def test_remove_takes_out_only_ours_and_keeps_hooks_added_since(env, agentmem_home):
    path = hooks_file(env, "claude")
    write(path, json.dumps(USER_SETTINGS, indent=2))
    install(agentmem_home, "claude", HELPER, env)
    data = json.loads(path.read_text())
    data["hooks"]["SessionStart"].append({"hooks": [{"type": "command", "command": "echo mine"}]})
    data["theme"] = "dark"
    write(path, json.dumps(data, indent=2))

    remove(agentmem_home, "claude", env)
    after = json.loads(path.read_text())

    assert config_files.our_commands(after) == []
    assert after["hooks"]["SessionStart"] == [{"hooks": [{"type": "command", "command": "echo mine"}]}]
    assert after["theme"] == "dark"
    assert after["hooks"]["Stop"] == USER_SETTINGS["hooks"]["Stop"]


def test_installing_twice_changes_nothing_the_second_time(env, agentmem_home):
    path = hooks_file(env, "claude")
    write(path, json.dumps(USER_SETTINGS, indent=2))
    assert install(agentmem_home, "claude", HELPER, env).changed
    first = path.read_bytes()
    assert not install(agentmem_home, "claude", HELPER, env).changed
    assert path.read_bytes() == first


def test_reinstalling_with_a_new_helper_replaces_our_entries_without_duplicates(env, agentmem_home):
    path = hooks_file(env, "codex")
    original = json.dumps(USER_SETTINGS, indent=2)
    write(path, original)
    install(agentmem_home, "codex", HELPER, env)
    install(agentmem_home, "codex", ["/new/python", "-m", "agentmem"], env)

    commands = config_files.our_commands(json.loads(path.read_text()))
    assert len(commands) == 3 and all(c.startswith("/new/python ") for _, c in commands)
    remove(agentmem_home, "codex", env)
    assert path.read_text() == original


@pytest.mark.parametrize("bad", ["{not json", "[1, 2]", '{"hooks": []}', '{"hooks": {"Stop": {}}}'])
@pytest.mark.parametrize("action", ["install", "remove"])
def test_a_file_we_cannot_read_as_hooks_is_reported_and_left_untouched(env, agentmem_home, bad, action):
    path = hooks_file(env, "claude")
    write(path, bad)
    with pytest.raises(InvalidInput) as err:
        if action == "install":
            install(agentmem_home, "claude", HELPER, env)
        else:
            remove(agentmem_home, "claude", env)
    assert str(path) in err.value.message
    assert path.read_text() == bad
    assert not (agentmem_home / config_files.STATE_FILE).exists()


def test_install_keeps_the_file_permissions(env, agentmem_home):
    path = hooks_file(env, "claude")
    write(path, "{}")
    os.chmod(path, 0o600)
    install(agentmem_home, "claude", HELPER, env)
    assert path.stat().st_mode & 0o777 == 0o600


def test_only_helper_hook_commands_count_as_ours():
    assert config_files.is_ours("/usr/bin/python3 -m agentmem hook stop --runtime claude")
    assert config_files.is_ours("'/home/me/my env/bin/agentmem' hook reminder --runtime codex")
    assert not config_files.is_ours("/usr/bin/other hook stop")
    assert not config_files.is_ours("agentmem search hook")
    assert not config_files.is_ours("echo 'unbalanced")
    assert not config_files.is_ours(None)


def user_file(st):
    """A user's settings.json: any keys and JSON values, with or without hook groups of their own."""
    json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=5))
    json_value = st.recursive(json_leaf, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=6)
    handler = st.fixed_dictionaries({"type": st.just("command"), "command": st.sampled_from(["echo a", "x --y", "true"])})
    group = st.fixed_dictionaries({"hooks": st.lists(handler, max_size=2)}, optional={"matcher": st.sampled_from(["*", "Bash", "startup"])})
    events = st.dictionaries(st.sampled_from(["Stop", "SessionStart", "UserPromptSubmit", "PreToolUse"]), st.lists(group, max_size=2), max_size=4)
    return st.builds(lambda extra, hooks, with_hooks: {**extra, **({"hooks": hooks} if with_hooks else {})},
                     st.dictionaries(st.sampled_from(["model", "env", "theme", "x"]), json_value, max_size=3), events, st.booleans())


@settings(max_examples=40, deadline=None)
@given(data=user_file, indent=lambda st: st.sampled_from([None, 2, 4, "\t"]), newline=lambda st: st.booleans())
def test_install_then_remove_round_trips_any_user_file(tmp_path_factory, data, indent, newline):
    base = tmp_path_factory.mktemp("rt")
    env = {"HOME": str(base / "home")}
    home = base / "agentmem"
    path = hooks_file(env, "claude")
    text = json.dumps(data, indent=indent, ensure_ascii=False) + ("\n" if newline else "")
    write(path, text)

    install(home, "claude", HELPER, env)
    remove(home, "claude", env)

    assert json.loads(path.read_text(encoding="utf-8")) == data
    if indent in (2, 4, "\t") and data:
        assert path.read_text(encoding="utf-8") == text


# -- the CLI: agentmem hooks install|remove|status ------------------------------------------------

def _cli_machine(tmp_path, helper=True):
    from tests.fixtures_core import make_machine

    m = make_machine(tmp_path, "laptop", tmp_path / "store", {tmp_path: "app"})
    if helper:
        with open(m.home / "config.toml", "a") as fh:
            fh.write('\n[runtimes]\nenabled = ["claude"]\n\n[helper]\ncommand = ["/opt/py/bin/python3", "-m", "agentmem"]\n')
    return m


def test_hooks_install_status_and_remove_through_the_cli(tmp_path):
    m = _cli_machine(tmp_path)
    settings_file = m.user_home / ".claude" / "settings.json"
    write(settings_file, '{\n  "theme": "dark"\n}\n')

    status, out, err = m.json("hooks", "install")
    assert status == 0, err
    assert [c["runtime"] for c in out["changes"]] == ["claude"]  # the runtimes enabled in config.toml
    status, out, _ = m.json("hooks", "status")
    assert out["hooks"][0]["installed"] and out["hooks"][0]["current"]
    assert out["hooks"][0]["events"] == ["SessionStart", "UserPromptSubmit", "Stop"]

    m.run("hooks", "remove", check_status=0)
    assert settings_file.read_text() == '{\n  "theme": "dark"\n}\n'
    status, out, _ = m.json("hooks", "status")
    assert not out["hooks"][0]["installed"]


def test_hooks_install_for_codex_tells_the_user_about_codex_trust(tmp_path):
    m = _cli_machine(tmp_path)
    status, out, err = m.run("hooks", "install", "--runtime", "codex")
    assert status == 0, err
    assert "/hooks" in out and "trust" in out


def test_only_codex_has_a_trust_step_and_only_its_install_names_it(tmp_path):
    m = _cli_machine(tmp_path)
    status, out, err = m.run("hooks", "trust", "--runtime", "claude")
    assert status == 2 and out == "" and "only Codex has a trust step; use --runtime codex" in err
    status, out, err = m.json("hooks", "install", "--runtime", "claude")
    assert status == 0 and not any(k.endswith("_trust") for k in out), (out, err)
    status, out, err = m.json("hooks", "install", "--runtime", "codex", "--runtime", "claude")
    assert status == 0 and "hooks trust" in out["codex_trust"] and [k for k in out if k.endswith("_trust")] == [
        "codex_trust"], (out, err)


def test_hooks_install_without_a_recorded_helper_stops_with_the_setup_hint(tmp_path):
    m = _cli_machine(tmp_path, helper=False)
    status, out, err = m.run("hooks", "install", "--runtime", "claude")
    assert status == 3 and out == ""
    assert "[helper] command" in err and "Traceback" not in err
    assert not (m.user_home / ".claude" / "settings.json").exists()


def test_hooks_install_into_a_broken_settings_file_exits_2_and_leaves_it(tmp_path):
    m = _cli_machine(tmp_path)
    settings_file = m.user_home / ".claude" / "settings.json"
    write(settings_file, '{"theme": "dark",}')
    status, _, err = m.run("hooks", "install")
    assert status == 2 and "is not valid JSON" in err and "Traceback" not in err
    assert settings_file.read_text() == '{"theme": "dark",}'


# -- the user's file as it really is: links, read-only files, odd JSON ------------------------------

@pytest.mark.parametrize("runtime", ["codex", "claude"])
def test_a_symlinked_hook_file_is_written_through_and_stays_a_link(env, agentmem_home, tmp_path, runtime):
    # INV user-files: a dotfiles link keeps pointing at the dotfiles
    real = tmp_path / "dotfiles" / f"{runtime}.json"
    write(real, json.dumps(USER_SETTINGS, indent=2))
    link = hooks_file(env, runtime)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(real)

    install(agentmem_home, runtime, HELPER, env)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert len(config_files.our_commands(json.loads(real.read_text()))) == 3
    remove(agentmem_home, runtime, env)
    assert link.is_symlink() and json.loads(real.read_text()) == USER_SETTINGS


def test_a_dangling_symlinked_hook_file_is_refused_and_nothing_is_created(env, agentmem_home, tmp_path):
    # INV user-files
    link = hooks_file(env, "claude")
    link.parent.mkdir(parents=True)
    link.symlink_to(tmp_path / "elsewhere" / "settings.json")
    with pytest.raises(InvalidInput, match="symbolic link"):
        install(agentmem_home, "claude", HELPER, env)
    assert not (tmp_path / "elsewhere").exists() and link.is_symlink()
    assert not (agentmem_home / config_files.STATE_FILE).exists()


def test_a_read_only_hook_file_is_left_alone_with_a_notice(env, agentmem_home):
    # INV user-files
    from agentmem.errors import NoAccess

    path = hooks_file(env, "claude")
    write(path, '{"theme": "dark"}\n')
    path.chmod(0o444)
    with pytest.raises(NoAccess, match="read-only"):
        install(agentmem_home, "claude", HELPER, env)
    assert path.read_text() == '{"theme": "dark"}\n' and path.stat().st_mode & 0o777 == 0o444
    assert not (agentmem_home / config_files.STATE_FILE).exists()


def test_duplicate_keys_are_refused_rather_than_losing_the_first_value(env, agentmem_home):
    # INV outside-untouched
    path = hooks_file(env, "claude")
    text = '{\n  "env": {"A": "first"},\n  "env": {"B": "second"}\n}\n'
    write(path, text)
    with pytest.raises(InvalidInput, match="'env' twice"):
        install(agentmem_home, "claude", HELPER, env)
    assert path.read_text() == text


@pytest.mark.parametrize("number", ["1e400", "-1e400", "1.50", "1E5", "0.1000000000000000055511151231257827", "-0"])
def test_numbers_are_written_back_exactly_as_the_user_wrote_them(env, agentmem_home, number):
    # INV outside-untouched; 1e400 used to come back as Infinity, which is not JSON
    path = hooks_file(env, "claude")
    text = f'{{\n  "limit": {number},\n  "list": [\n    {number}\n  ]\n}}\n'
    write(path, text)
    install(agentmem_home, "claude", HELPER, env)
    installed = path.read_text()
    assert f'"limit": {number},' in installed and "Infinity" not in installed
    remove(agentmem_home, "claude", env)
    assert path.read_text() == text


def test_a_lone_surrogate_escape_beside_other_unicode_round_trips(env, agentmem_home):
    # INV outside-untouched
    path = hooks_file(env, "claude")
    text = '{\n  "name": "caf\u00e9",\n  "odd": "\\ud800"\n}\n'
    write(path, text)
    install(agentmem_home, "claude", HELPER, env)
    assert json.loads(path.read_text())["odd"] == "\ud800"
    remove(agentmem_home, "claude", env)
    assert path.read_text() == text


@pytest.mark.parametrize("state", ["{not json", '{"claude": "x"}', '{"claude": {"file": 5}}', "[1]",
                                   '{"claude": {"file": "F", "created_events": 7}}'])
def test_a_damaged_hooks_state_file_never_gives_a_traceback(env, agentmem_home, state):
    path = hooks_file(env, "claude")
    write(path, json.dumps(USER_SETTINGS, indent=2))
    (agentmem_home / config_files.STATE_FILE).write_text(state.replace('"F"', json.dumps(str(path))))
    assert install(agentmem_home, "claude", HELPER, env).changed
    remove(agentmem_home, "claude", env)
    assert json.loads(path.read_text()) == USER_SETTINGS


def test_a_hooks_state_path_that_is_a_folder_is_reported_in_one_line_and_nothing_changes(env, agentmem_home):
    path = hooks_file(env, "claude")
    write(path, json.dumps(USER_SETTINGS, indent=2))
    (agentmem_home / config_files.STATE_FILE).mkdir()
    with pytest.raises(InvalidInput, match="hooks-state.json"):
        install(agentmem_home, "claude", HELPER, env)
    assert json.loads(path.read_text()) == USER_SETTINGS


@pytest.mark.parametrize("command", [
    "echo agentmem hook stop",
    "/usr/local/bin/agentmem-logger hook stop --runtime claude",
    "/opt/bin/agentmem hook stop --runtime claude; notify-send done",
    "bash -c '/opt/bin/agentmem hook stop --runtime claude'",
    "/opt/bin/agentmem hook stop --runtime claude --verbose",
    "agentmem hook stop --runtime claude",
    "/opt/py/bin/python3 -m agentmem  hook stop --runtime claude",
])
def test_a_users_own_hook_that_only_mentions_ours_is_kept(env, agentmem_home, command):
    # INV ours-exact
    assert not config_files.is_ours(command)
    path = hooks_file(env, "claude")
    mine = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}}
    write(path, json.dumps(mine, indent=2))
    install(agentmem_home, "claude", HELPER, env)
    remove(agentmem_home, "claude", env)
    assert json.loads(path.read_text()) == mine


def test_every_command_we_install_is_recognised_as_ours():
    # INV ours-exact
    for helper in (HELPER, ["/home/me/my env/bin/agentmem"], ["/usr/bin/python3", "-P", "-m", "agentmem"]):
        data = config_files.add_ours({}, config_files.standard_groups("claude", helper))
        commands = [h["command"] for groups in data["hooks"].values() for g in groups for h in g["hooks"]]
        assert len(commands) == 3 and all(config_files.is_ours(c) for c in commands)


def test_gemini_hooks_follow_the_same_user_files_rule_on_install_and_remove(env, agentmem_home, tmp_path):
    # INV user-files: Gemini's settings.json goes through the one install and remove of config_files
    # (only its entries are Gemini's), so a symlink is written through and a read-only file left alone.
    from agentmem.errors import NoAccess

    real = tmp_path / "dotfiles" / "gemini.json"
    write(real, '{"theme": "dark"}\n')
    link = hooks_file(env, "gemini")
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(real)
    install(agentmem_home, "gemini", HELPER, env)
    assert link.is_symlink() and "agentmem-reminder" in real.read_text()
    real.chmod(0o444)
    with pytest.raises(NoAccess, match="read-only"):
        remove(agentmem_home, "gemini", env)
    assert "agentmem-reminder" in real.read_text()
    real.chmod(0o644)
    assert remove(agentmem_home, "gemini", env).changed
    assert link.is_symlink() and json.loads(real.read_text()) == {"theme": "dark"}
