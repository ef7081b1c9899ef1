"""Setup run in-process on a rendered machine folder: interruptions resume, failures say why."""

from __future__ import annotations

import pytest

from agentmem.setup import runner
from agentmem.uploads import delivery, pending
from tests.template_kit import make_template_repo, render_tasks_skipped


@pytest.fixture(scope="module")
def template_repo(tmp_path_factory):
    return make_template_repo(tmp_path_factory.mktemp("tpl"))


@pytest.fixture
def machine(template_repo, tmp_path, monkeypatch):
    """A machine folder rendered by copier (tasks skipped), in a throwaway HOME."""
    return render_tasks_skipped(template_repo, tmp_path, monkeypatch)


def _notes(store):
    return sorted(store.rglob("*.md"))


def test_setup_interrupted_before_the_upload_resumes_with_the_same_note(machine, monkeypatch):
    # INV setup-rerun, INV nothing-lost
    folder, store, user = machine

    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(delivery, "deliver", killed)
        with pytest.raises(KeyboardInterrupt):
            runner.run_setup(folder)
    [waiting] = pending.list_entries(folder)
    _, saved_bytes = pending.load(folder, waiting.id)
    assert _notes(store) == []

    report = runner.run_setup(folder)
    assert report.outcome == "confirmed", report.text()
    [note] = _notes(store)
    assert note.name == f"{waiting.id}.md" and note.read_bytes() == saved_bytes
    assert pending.list_entries(folder) == []
    assert runner.run_setup(folder).outcome == "confirmed" and _notes(store) == [note]


def test_an_unusable_store_fails_setup_before_anything_is_installed(machine):
    folder, store, user = machine
    store.write_text("not a folder")
    report = runner.run_setup(folder)
    assert report.outcome == "failed"
    assert report.steps[-1].name == "store" and "is not a folder" in report.steps[-1].detail
    assert "Setup FAILED" in report.text()
    assert not (user / ".codex" / "AGENTS.md").exists() and not (user / ".agents").exists()


def test_malformed_markers_in_a_users_file_are_reported_and_the_file_is_left_alone(machine):
    # INV outside-untouched
    folder, store, user = machine
    claude = user / ".claude" / "CLAUDE.md"
    claude.parent.mkdir(parents=True)
    claude.write_text("mine\n<!-- agent-memory:begin -->\nhalf a block\n")
    report = runner.run_setup(folder)
    step = next(s for s in report.steps if s.name == "instructions claude")
    assert step.status == "warning" and "cannot manage" in step.detail
    assert claude.read_text() == "mine\n<!-- agent-memory:begin -->\nhalf a block\n"
    assert report.outcome == "confirmed"  # memory itself works; the report names the file to fix
    assert "Needs attention: instructions claude" in report.text()


def test_an_empty_agent_name_is_filled_in_and_the_helper_command_recorded(machine):
    folder, store, user = machine
    runner.run_setup(folder, helper_command=["/opt/agentmem/bin/agentmem"])
    text = (folder / "config.toml").read_text()
    assert 'command = ["/opt/agentmem/bin/agentmem"]' in text
    assert 'agent = "codex@' in text
    assert "/opt/agentmem/bin/agentmem search" in (user / ".agents" / "skills" / "agent-memory" / "SKILL.md").read_text()


def test_setup_on_a_machine_without_config_stops_with_a_one_line_hint(tmp_path):
    import subprocess
    import sys

    from tests.template_kit import REPO

    env = {"HOME": str(tmp_path), "AGENTMEM_HOME": str(tmp_path / "nothing"), "PATH": "/usr/bin:/bin",
           "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "agentmem", "setup"], capture_output=True, text=True, env=env,
                          cwd=tmp_path)
    assert proc.returncode == 3 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "copier copy" in proc.stderr and "Traceback" not in proc.stderr


def test_the_setup_report_says_which_store_was_chosen_and_that_only_this_machine_reaches_it(machine):
    # The default answer is a folder on this disk: the report must not let anyone think notes travel.
    folder, store, user = machine
    report = runner.run_setup(folder, helper_command=["/opt/agentmem/bin/agentmem"])
    assert report.outcome == "confirmed"
    assert report.to_dict()["store"] | {"summary": ""} == {"kind": "folder", "location": str(store),
                                                           "reach": "this-machine", "summary": ""}
    text = report.text()
    assert f"Store: the folder {store} on this machine's own disk" in text
    assert "only this machine reaches these notes" in text


def test_setup_with_hooks_names_the_command_that_trusts_them_in_codex(machine):
    folder, store, user = machine
    config = folder / "config.toml"
    config.write_text(config.read_text().replace("[hooks]\nenabled = false", "[hooks]\nenabled = true"))
    report = runner.run_setup(folder, helper_command=["/opt/agent mem/bin/agentmem"])
    [codex] = [s for s in report.steps if s.name == "hooks codex"]
    assert "run `'/opt/agent mem/bin/agentmem' hooks trust`" in codex.detail  # quoted: the path has a space
    assert "run `'/opt/agent mem/bin/agentmem' setup`" not in report.text()  # confirmed: no rerun asked for
