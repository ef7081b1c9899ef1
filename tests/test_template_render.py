"""Rendering the machine template (tasks skipped): each answer shapes the files, bad answers are explained."""

from __future__ import annotations

import tomllib

import pytest
import yaml

from tests.template_kit import make_template_repo


@pytest.fixture(scope="module")
def template_repo(tmp_path_factory):
    return make_template_repo(tmp_path_factory.mktemp("tpl"))


def render(template_repo, dst, **data):
    import copier

    copier.run_copy(str(template_repo), str(dst), data=data, defaults=True, unsafe=True,
                    skip_tasks=True, vcs_ref="v1.0.0", quiet=True)
    return tomllib.loads((dst / "config.toml").read_text())


@pytest.mark.parametrize("runtimes", [["codex"], ["claude"], ["codex", "claude"]])
def test_each_runtime_choice_is_recorded_for_setup_to_apply(template_repo, tmp_path, monkeypatch, runtimes):
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    cfg = render(template_repo, tmp_path / "m", runtimes=runtimes, projects={"/w/app": "app"})
    assert cfg["runtimes"]["enabled"] == runtimes
    assert cfg["projects"] == {"/w/app": "app"}
    skill = (tmp_path / "m" / "agent-memory" / "SKILL.md").read_text()
    assert skill.startswith("---\nname: agent-memory\ndescription: ")
    assert (tmp_path / "m" / "agent-memory" / "references" / "checkpoint.md").is_file()
    assert "@AGENTMEM@" in (tmp_path / "m" / "instructions-block.md").read_text()


@pytest.mark.parametrize("hooks", [True, False])
def test_hooks_answer_switches_the_hooks_table(template_repo, tmp_path, monkeypatch, hooks):
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert render(template_repo, tmp_path / "m", hooks=hooks)["hooks"]["enabled"] is hooks


def test_defaults_give_a_folder_store_in_home_and_map_the_current_directory(template_repo, tmp_path, monkeypatch):
    user, project = tmp_path / "user", tmp_path / "My Project!"
    project.mkdir()
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.chdir(project)
    cfg = render(template_repo, tmp_path / "m")
    assert cfg["store"] == {"kind": "folder", "location": str(user / "agent-memory")}
    assert cfg["projects"] == {str(project): "my-project"}
    assert cfg["agent"] == "" and cfg["helper"]["command"] == [] and cfg["skills"]["install"] == []
    answers = yaml.safe_load((tmp_path / "m" / ".copier-answers.yml").read_text())
    assert answers["_commit"] == "v1.0.0" and answers["bucket"] == "~/agent-memory"


def test_bucket_answers_name_a_bucket_or_ask_setup_to_create_one(template_repo, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert render(template_repo, tmp_path / "a", bucket="alice/agent-memory")["store"] == {
        "kind": "bucket", "location": "alice/agent-memory"}
    assert render(template_repo, tmp_path / "b", bucket="hf")["store"] == {"kind": "bucket", "location": ""}


def test_a_team_answer_adds_the_team_store_beside_the_own_and_no_answer_adds_none(template_repo, tmp_path,
                                                                                  monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    cfg = render(template_repo, tmp_path / "a", bucket="ada/agent-memory", team="acme/team-memory", author="ada")
    assert cfg["store"] == {"kind": "bucket", "location": "ada/agent-memory"}
    assert cfg["team"] == {"kind": "bucket", "location": "acme/team-memory"} and cfg["author"] == "ada"
    shared = render(template_repo, tmp_path / "b", team="~/shared/team")["team"]
    assert shared == {"kind": "folder", "location": str(tmp_path / "user" / "shared" / "team")}
    plain = render(template_repo, tmp_path / "c")
    assert "team" not in plain and plain["author"] == ""


def test_only_machine_files_are_tracked_by_the_rendered_gitignore(template_repo, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    render(template_repo, tmp_path / "m")
    ignore = (tmp_path / "m" / ".gitignore").read_text().splitlines()
    assert "/*" in ignore and "!/config.toml" in ignore and "!/agent-memory/" in ignore


@pytest.mark.parametrize(
    "data, message",
    [
        ({"bucket": "agent-memory"}, "is neither a bucket ID"),
        ({"bucket": "hf://buckets/alice/mem"}, "without the hf://buckets/ prefix, e.g. alice/mem"),
        ({"bucket": "  "}, "Give a bucket ID"),
        ({"projects": {}}, "Map at least one directory"),
        ({"projects": ["/w/app"]}, "Map at least one directory"),
        ({"projects": {"w/app": "app"}}, "must be an absolute path"),
        ({"projects": {"/w/app": "My App"}}, "use 1-64 lowercase letters"),
        ({"runtimes": []}, "Choose at least one runtime"),
        ({"agent_name": "me and you"}, "no spaces"),
        ({"team": "team-memory"}, "is neither a bucket ID (organization/name)"),
        ({"team": "hf://buckets/acme/mem"}, "without the hf://buckets/ prefix, e.g. acme/mem"),
        ({"bucket": "acme/mem", "team": "acme/mem"}, "must be another store than your own"),
        ({"author": "Ada L"}, "no spaces"),
        ({"skills": "review@1"}, "Give a list of name@revision"),
        ({"skills": ["review"]}, "is not name@revision"),
        ({"skills": ["agent-memory@20261130T000000000Z-abcdefgh"]}, "is the core skill"),
    ],
)
def test_a_bad_answer_stops_copier_with_an_explanation(template_repo, tmp_path, monkeypatch, data, message):
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    with pytest.raises(ValueError, match="Validation error") as info:
        render(template_repo, tmp_path / "m", **data)
    assert message in str(info.value)
    assert not (tmp_path / "m" / "config.toml").exists()


def test_answers_can_come_from_a_data_file_without_a_terminal(template_repo, tmp_path):
    import subprocess
    import sys

    answers = tmp_path / "answers.yml"
    answers.write_text(yaml.safe_dump({
        "bucket": "team/agent-memory", "projects": {"/w/api": "api", "/w/web": "web"},
        "runtimes": ["claude"], "hooks": True, "agent_name": "claude@ci", "skills": ["review@r1"],
    }))
    env = {"HOME": str(tmp_path / "user"), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-m", "copier", "copy", "--defaults", "--trust", "--skip-tasks",
                           "--data-file", str(answers), "-r", "v1.0.0", str(template_repo), str(tmp_path / "m")],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    cfg = tomllib.loads((tmp_path / "m" / "config.toml").read_text())
    assert cfg["store"] == {"kind": "bucket", "location": "team/agent-memory"}
    assert cfg["projects"] == {"/w/api": "api", "/w/web": "web"} and cfg["runtimes"]["enabled"] == ["claude"]
    assert cfg["hooks"]["enabled"] is True and cfg["agent"] == "claude@ci" and cfg["skills"]["install"] == ["review@r1"]
