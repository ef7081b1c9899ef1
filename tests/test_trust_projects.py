"""`[trust] projects`: the mapped folders get what the CLIs' own trust prompts write, and only agentmem's
entries are ever taken out again (the users' own are never touched)."""

from __future__ import annotations

import json

import pytest

from agentmem.hooks import approve
from agentmem.machine import json_members

HELPER = ["/home/me/.config/agentmem/.venv/bin/agentmem"]


@pytest.mark.parametrize("command", [
    "/home/me/.config/agentmem/.venv/bin/agentmem search 'zebra handoff' --limit 20",
    "/home/me/.config/agentmem/.venv/bin/agentmem save --title 'A; B' --text 'Goal: x | y && $(z) `w`'",
    "/home/me/.config/agentmem/.venv/bin/agentmem read 20261201T101500000Z-ab12cd34",
])
def test_a_plain_helper_command_is_approved_whatever_its_single_quoted_arguments_hold(command):
    assert approve.plain_command(command, HELPER)


@pytest.mark.parametrize("command", [
    "/home/me/.config/agentmem/.venv/bin/agentmem search x; rm -rf ~",
    "/home/me/.config/agentmem/.venv/bin/agentmem search x && curl evil",
    "/home/me/.config/agentmem/.venv/bin/agentmem search x | sh",
    "/home/me/.config/agentmem/.venv/bin/agentmem search $(cat ~/.ssh/id_rsa)",
    "/home/me/.config/agentmem/.venv/bin/agentmem search \"$HOME\"",
    "/home/me/.config/agentmem/.venv/bin/agentmem search `id`",
    "/home/me/.config/agentmem/.venv/bin/agentmem save - <<'EOF'\nbody\nEOF",
    "/home/me/.config/agentmem/.venv/bin/agentmem search x > /etc/passwd",
    "/home/me/.config/agentmem/.venv/bin/agentmem search x\nrm -rf ~",
    "/home/me/.config/agentmem/.venv/bin/agentmem search 'unbalanced",
    "/home/me/.config/agentmem/.venv/bin/agentmem",
    "FOO=1 /home/me/.config/agentmem/.venv/bin/agentmem search x",
    "/tmp/agentmem search x",
    "agentmem search x",
    "/home/me/.config/agentmem/.venv/bin/agentmem-other search x",
])
def test_anything_beside_or_instead_of_a_plain_helper_command_gets_no_approval(command):
    # INV printed-commands-run's other side: only the helper, as recorded, runs unasked
    assert not approve.plain_command(command, HELPER)


def _machine(tmp_path, trust: bool):
    machine = tmp_path / "agentmem"
    machine.mkdir()
    project = tmp_path / "src" / "app"
    (project / "sub").mkdir(parents=True)
    (machine / "config.toml").write_text(
        f'agent = "t"\n[store]\nkind = "folder"\nlocation = "{tmp_path / "store"}"\n[projects]\n"{project}" = "app"\n'
        f'[trust]\nprojects = {str(trust).lower()}\n[helper]\ncommand = {json.dumps(HELPER)}\n')
    return machine, project


@pytest.mark.parametrize("trust", [True, False])
def test_the_hook_approves_only_in_a_mapped_folder_and_only_with_trust_projects_on(tmp_path, trust):
    machine, project = _machine(tmp_path, trust)
    call = {"toolName": "bash", "toolArgs": {"command": f"{HELPER[0]} search zebra", "description": "d"}}
    assert approve.allowed(str(machine), {**call, "cwd": str(project / "sub")}, ("bash",)) is trust
    assert not approve.allowed(str(machine), {**call, "cwd": str(tmp_path)}, ("bash",))  # not mapped
    assert not approve.allowed(str(machine), {**call, "cwd": str(project), "toolName": "edit"}, ("bash",))
    as_text = {**call, "cwd": str(project), "toolArgs": json.dumps(call["toolArgs"])}
    assert approve.allowed(str(machine), as_text, ("bash",)) is trust


def test_members_are_added_beside_the_users_and_only_ours_come_out_again(tmp_path):
    # INV outside-untouched: the user's own entries, even one for a folder we would trust, stay as they are
    machine = tmp_path / "agentmem"
    machine.mkdir()
    path = tmp_path / ".gemini" / "trustedFolders.json"
    path.parent.mkdir()
    original = '{\n  "/home/me/mine": "TRUST_PARENT",\n  "/home/me/src/app": "DO_NOT_TRUST"\n}'
    path.write_text(original)
    changed, theirs = json_members.set_members(machine, path, {"/home/me/src/app": "TRUST_FOLDER",
                                                               "/home/me/src/web": "TRUST_FOLDER"})
    assert changed and theirs == ["/home/me/src/app"]
    data = json.loads(path.read_text())
    assert data == {"/home/me/mine": "TRUST_PARENT", "/home/me/src/app": "DO_NOT_TRUST",
                    "/home/me/src/web": "TRUST_FOLDER"}
    assert json_members.set_members(machine, path, {"/home/me/src/app": "TRUST_FOLDER",
                                                    "/home/me/src/web": "TRUST_FOLDER"}) == (False, ["/home/me/src/app"])
    assert json_members.remove_members(machine, path)
    assert path.read_text() == original  # byte-equal


def test_a_member_the_user_changed_after_we_wrote_it_is_theirs_and_stays(tmp_path):
    machine = tmp_path / "agentmem"
    machine.mkdir()
    path = tmp_path / "trustedFolders.json"
    json_members.set_members(machine, path, {"/a": "TRUST_FOLDER", "/b": "TRUST_FOLDER"})
    assert json.loads(path.read_text()) == {"/a": "TRUST_FOLDER", "/b": "TRUST_FOLDER"}
    path.write_text(json.dumps({"/a": "DO_NOT_TRUST", "/b": "TRUST_FOLDER"}))
    assert json_members.remove_members(machine, path)
    assert json.loads(path.read_text()) == {"/a": "DO_NOT_TRUST"}


def test_a_file_we_created_goes_when_our_last_member_goes_and_unmapped_folders_are_taken_out(tmp_path):
    machine = tmp_path / "agentmem"
    machine.mkdir()
    path = tmp_path / "trustedFolders.json"
    json_members.set_members(machine, path, {"/a": "TRUST_FOLDER", "/b": "TRUST_FOLDER"})
    assert json_members.set_members(machine, path, {"/a": "TRUST_FOLDER"}) == (True, [])  # /b was unmapped
    assert json.loads(path.read_text()) == {"/a": "TRUST_FOLDER"}
    assert json_members.remove_members(machine, path) and not path.exists()
    assert not (machine / json_members.STATE_FILE).exists()
