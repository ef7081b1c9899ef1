"""`[trust] projects`: the mapped folders get what the CLIs' own trust prompts write, and only agentmem's
entries are ever taken out again (the users' own are never touched)."""

from __future__ import annotations

import json

import pytest

from agentmem.hooks import approve
from agentmem.machine import json_members
from agentmem.runtimes import copilot

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
    # Copilot CLI reads its own hook input (runtimes/copilot.py); hooks/approve.py decides on what it read.
    assert approve.allowed(str(machine), copilot.shell_call({**call, "cwd": str(project / "sub")})) is trust
    assert not approve.allowed(str(machine), copilot.shell_call({**call, "cwd": str(tmp_path)}))  # not mapped
    assert copilot.shell_call({**call, "cwd": str(project), "toolName": "edit"}) is None
    assert not approve.allowed(str(machine), None)
    assert copilot.shell_call({**call, "cwd": "relative/folder"}) is None
    as_text = {**call, "cwd": str(project), "toolArgs": json.dumps(call["toolArgs"])}
    assert copilot.shell_call(as_text) == (f"{HELPER[0]} search zebra", str(project))
    assert approve.allowed(str(machine), copilot.shell_call(as_text)) is trust


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


# -- through Copier and `agentmem setup`, with the users' own entries present -----------------------

CODEX_USER = '# mine\nmodel = "o3"\n\n[projects."/home/me/mine"]\ntrust_level = "untrusted"  # I said no\n'


def _gemini_user(project) -> str:
    return ('// my trusted folders\n{\n  "/home/me/other": "TRUST_PARENT",\n'
            f'  {json.dumps(str(project / "vendored"))}: "DO_NOT_TRUST"\n}}')


def _trusted(root):
    """A machine set up by Copier with trust_projects=true, the users' own trust entries there before."""
    import tomllib

    from tests.template_kit import make_machine, make_template_repo

    template = make_template_repo(root / "template")
    m = make_machine(root, "laptop")
    project, web = m.user / "src" / "app", m.user / "src" / "web"
    for folder in (project / "vendored", web):
        folder.mkdir(parents=True)
    (m.user / ".codex").mkdir()
    (m.user / ".codex" / "config.toml").write_text(CODEX_USER)
    (m.user / ".gemini").mkdir()
    (m.user / ".gemini" / "trustedFolders.json").write_text(_gemini_user(project))
    mapping = {str(project): "app", str(project / "vendored"): "vendored", str(web): "web"}
    proc = m.copy(template, ref="v1.0.0", cwd=project,
                  data={"bucket": str(root / "store"), "runtimes": '["codex", "claude", "gemini", "copilot"]',
                        "projects": json.dumps(mapping), "trust_projects": "true"})
    assert tomllib.loads((m.folder / "config.toml").read_text())["trust"] == {"projects": True}
    return m, proc.stdout, project, web


@pytest.fixture
def trusted(machine_snapshots):
    """(machine, copy's report, project, web): `_trusted`'s copy, made once per session and put back for
    each test (tests/fixtures_machines.py). The first test checks what the copy wrote and printed; the
    others rerun setup on the machine it left."""
    return machine_snapshots.restore("trust-projects", _trusted)


def test_trust_projects_writes_what_each_clis_own_trust_prompt_writes_beside_the_users_entries(trusted):
    # INV outside-untouched: the users' own entries (even one for a mapped folder) stay as they were
    import tomllib

    m, report, project, web = trusted
    codex = tomllib.loads((m.user / ".codex" / "config.toml").read_text())
    assert codex["projects"] == {"/home/me/mine": {"trust_level": "untrusted"},
                                 str(project): {"trust_level": "trusted"},
                                 str(project / "vendored"): {"trust_level": "trusted"},
                                 str(web): {"trust_level": "trusted"}}
    assert (m.user / ".codex" / "config.toml").read_text().startswith(CODEX_USER)
    gemini = (m.user / ".gemini" / "trustedFolders.json").read_text()
    assert gemini.startswith("// my trusted folders\n")  # JSONC, as Gemini CLI reads it: comments kept
    assert jsonedit_loads(gemini) == {"/home/me/other": "TRUST_PARENT", str(project / "vendored"): "DO_NOT_TRUST",
                                      str(project): "TRUST_FOLDER", str(web): "TRUST_FOLDER"}
    approve_file = json.loads((m.user / ".copilot" / "hooks" / "agentmem-approve.json").read_text())
    [entry] = approve_file["hooks"]["preToolUse"]
    assert entry["bash"] == f"{m.helper} hook approve --runtime copilot"
    # The report says exactly what changed, runtime by runtime.
    assert "trust codex" in report and "workspace-write" in report and str(project) in report
    assert "trust gemini" in report and "TRUST_FOLDER" in report
    assert f"left your own entries for {project / 'vendored'} as they are" in report
    assert "trust copilot" in report and "plain `copilot -p` runs them there" in report
    skill = (m.user / ".agents" / "skills" / "agent-memory" / "SKILL.md").read_text()
    assert f"--add-dir {m.helper.parent}" in skill and "@AGENTMEM_DIR@" not in skill  # the real folder


def test_turning_trust_projects_off_takes_out_only_agentmems_entries_and_on_again_puts_them_back(trusted):
    # INV outside-untouched
    m, _, project, web = trusted
    proc = m.run("setup", "--no-trust-projects")
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    codex = (m.user / ".codex" / "config.toml").read_text()  # the user's text, then setup's writable roots
    assert codex.startswith(CODEX_USER) and codex[len(CODEX_USER):].startswith("\n[sandbox_workspace_write]\n")
    assert "trust_level = \"trusted\"" not in codex
    assert (m.user / ".gemini" / "trustedFolders.json").read_text() == _gemini_user(project)
    assert not (m.user / ".copilot" / "hooks" / "agentmem-approve.json").exists()
    assert "removed the trust entries agentmem had written" in proc.stdout
    assert "projects = false" in (m.folder / "config.toml").read_text()
    proc = m.run("setup", "--trust-projects")
    assert proc.returncode == 0 and "trust codex: changed" in proc.stdout.replace("  ", " "), proc.stdout
    assert f'[projects."{web}"]' in (m.user / ".codex" / "config.toml").read_text()


def test_dropping_a_runtime_takes_out_its_trust_entries_and_nothing_of_the_users(trusted):
    import re

    m, _, project, _ = trusted
    config = m.folder / "config.toml"
    config.write_text(re.sub(r"^enabled = \[.*\]$", 'enabled = ["claude"]', config.read_text(), count=1, flags=re.M))
    proc = m.run("setup")
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert "trust codex: changed" in " ".join(proc.stdout.split()) and "runtime disabled" in proc.stdout
    assert (m.user / ".codex" / "config.toml").read_text().startswith(CODEX_USER)
    assert "trust_level = \"trusted\"" not in (m.user / ".codex" / "config.toml").read_text()
    assert (m.user / ".gemini" / "trustedFolders.json").read_text() == _gemini_user(project)


def jsonedit_loads(text: str):
    from agentmem.hooks import jsonedit

    return jsonedit.loads(text)


def test_the_readme_prints_the_default_mode_table_and_summary_the_runtime_modules_state():
    # The facts live once, in each runtime's DEFAULT_MODE (proved by tests/test_e2e_default_mode.py).
    from agentmem.runtimes import registry
    from tests.fixtures_core import REPO

    readme = (REPO / "README.md").read_text()
    assert registry.default_mode_table() in readme
    assert registry.default_mode_summary() in readme
    assert "every CLI saves and searches in its default" not in readme.replace("\n", " ")


def test_the_skills_first_save_form_is_the_one_every_clis_non_interactive_mode_runs():
    # Gemini CLI and Copilot CLI refuse a heredoc where no one approves: --text with single quotes
    import re

    from tests.fixtures_core import REPO

    skill = (REPO / "template" / "agent-memory" / "SKILL.md").read_text()
    save = skill[skill.index("## Save"):]
    first = re.search(r"```sh\n(.*?)```", save, re.S).group(1)
    assert re.fullmatch(r"@AGENTMEM@ save --title \"[^\"]+\" --kind note --text '[^']+'\n", first), first
    assert approve.plain_command(first.strip().replace("@AGENTMEM@", HELPER[0]), HELPER)
    assert "--add-dir @AGENTMEM_DIR@" in skill and "--allow-tool 'shell(@AGENTMEM@:*)'" in skill


@pytest.mark.parametrize("trust", [True, False])
def test_hook_approve_prints_copilots_approval_for_the_helper_and_nothing_else(tmp_path, trust):
    import os
    import subprocess
    import sys

    from tests.fixtures_core import REPO

    machine, project = _machine(tmp_path, trust)
    env = {**os.environ, "AGENTMEM_HOME": str(machine), "PYTHONPATH": str(REPO)}

    def hook(runtime, command):
        stdin = json.dumps({"cwd": str(project), "toolName": "bash", "toolArgs": {"command": command}})
        proc = subprocess.run([sys.executable, "-m", "agentmem", "hook", "approve", "--runtime", runtime],
                              input=stdin, capture_output=True, text=True, env=env, timeout=60)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
        return proc.stdout

    answer = hook("copilot", f"{HELPER[0]} search zebra")
    if trust:
        assert json.loads(answer) == {"permissionDecision": "allow", "permissionDecisionReason": approve.REASON}
    else:
        assert answer == ""
    assert hook("copilot", f"{HELPER[0]} search zebra; rm -rf ~") == ""
    assert hook("codex", f"{HELPER[0]} search zebra") == ""  # no pre-tool-use hook of ours there
