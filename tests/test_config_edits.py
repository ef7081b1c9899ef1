"""Edits of config.toml: hand-written keys, concurrent edits, conflicts left by copier update, map and
hooks recording their change and committing only it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib

import pytest

from agentmem import config
from agentmem.errors import InvalidInput
from tests.fixtures_core import REPO, make_machine
from tests.template_kit import git


def _git_machine(tmp_path, projects=None):
    """A machine whose folder is a git repository with config.toml and the template's .gitignore
    committed, as copier leaves it."""
    m = make_machine(tmp_path, "laptop", tmp_path / "store", projects or {})
    (tmp_path / "store").mkdir(exist_ok=True)
    ignore = (REPO / "template" / ".gitignore.jinja").read_text().split("#}", 1)[1].lstrip("\n")
    (m.home / ".gitignore").write_text(ignore)
    git(m.home, "init", "-q")
    git(m.home, "add", "config.toml", ".gitignore")
    git(m.home, "commit", "-qm", "rendered")
    return m


def _head_config(m) -> dict:
    return tomllib.loads(git(m.home, "show", "HEAD:config.toml"))


# -- [projects] keys written by hand --------------------------------------------------------------

@pytest.mark.parametrize("key", [".", "", "src/app", "./app"])
def test_a_relative_or_empty_projects_key_is_refused_naming_the_key(tmp_path, key):
    # INV explicit-project, INV config-edit-alone: `"." = "p"` used to map every directory (`cd / && where` said p)
    m = make_machine(tmp_path, "laptop", tmp_path / "store", {})
    m.write_config((m.home / "config.toml").read_text() + f'{json.dumps(key)} = "p"\n')
    status, out, err = m.run("where", cwd=tmp_path.anchor)
    assert status == 2 and out == "" and "Traceback" not in err
    assert f"[projects] key {json.dumps(key)}" in err and "absolute" in err
    status, _, err = m.run("save", "--title", "t", input="body", cwd=tmp_path.anchor)
    assert status == 2 and "[projects] key" in err
    assert not (m.home / "pending").exists()


def test_a_home_relative_projects_key_still_maps_its_directory(tmp_path):
    m = make_machine(tmp_path, "laptop", tmp_path / "store", {})
    (m.user_home / "app").mkdir()
    m.write_config((m.home / "config.toml").read_text() + '"~/app" = "app"\n')
    status, out, err = m.json("where", cwd=m.user_home / "app")
    assert status == 0 and out["project"] == "app", err


# -- concurrent edits ---------------------------------------------------------------------------

def test_twelve_concurrent_maps_all_keep_their_mapping(tmp_path):
    # INV config-edit-alone
    m = _git_machine(tmp_path)
    dirs = [tmp_path / f"checkout{i}" for i in range(12)]
    for d in dirs:
        d.mkdir()
    procs = [subprocess.Popen([sys.executable, "-m", "agentmem", "map", str(d), f"p{i}"], env=m.env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for i, d in enumerate(dirs)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    wanted = {str(d): f"p{i}" for i, d in enumerate(dirs)}
    assert config.load(m.home).projects == wanted
    assert _head_config(m)["projects"] == wanted  # and every one of them committed
    assert git(m.home, "status", "--porcelain") == ""


# -- map: refusing a silent remap, committing only its own change --------------------------------

def test_mapping_a_directory_to_another_project_needs_replace(tmp_path):
    # INV config-edit-alone
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = _git_machine(tmp_path, {checkout: "p1"})
    before = (m.home / "config.toml").read_bytes()
    status, out, err = m.run("map", checkout, "p2")
    assert status == 2 and out == "" and "already mapped to project p1" in err and "--replace" in err
    assert (m.home / "config.toml").read_bytes() == before
    status, out, err = m.json("map", checkout, "p2", "--replace")
    assert status == 0 and out["project"] == "p2" and out["replaced"] == "p1", err
    assert config.load(m.home).projects == {str(checkout): "p2"}
    assert "p1" in git(m.home, "log", "-1", "--format=%s")


def test_mapping_a_directory_again_to_the_same_project_changes_nothing(tmp_path):
    # INV config-edit-alone
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = _git_machine(tmp_path, {checkout: "app"})
    before, commits = (m.home / "config.toml").read_bytes(), git(m.home, "rev-list", "--count", "HEAD")
    status, out, err = m.json("map", checkout, "app")
    assert status == 0 and out["changed"] is False, err
    assert (m.home / "config.toml").read_bytes() == before
    assert git(m.home, "rev-list", "--count", "HEAD") == commits


def test_map_commits_only_its_own_change_and_leaves_the_users_edits_uncommitted(tmp_path):
    # INV config-edit-alone
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = _git_machine(tmp_path)
    cfg = m.home / "config.toml"
    cfg.write_text(cfg.read_text().replace('agent = "laptop"', 'agent = "laptop"  # still deciding'))
    (m.home / "notes.txt").write_text("unrelated\n")
    git(m.home, "add", "-f", "notes.txt")  # something the user staged: not ours to commit either

    m.run("map", checkout, "app", check_status=0)
    assert _head_config(m)["projects"] == {str(checkout): "app"}
    assert "still deciding" not in git(m.home, "show", "HEAD:config.toml")
    assert "still deciding" in cfg.read_text() and str(checkout) in cfg.read_text()
    assert git(m.home, "show", "--stat", "--format=", "HEAD").split("|")[0].strip() == "config.toml"
    diff = git(m.home, "diff", "--", "config.toml")
    assert "still deciding" in diff and str(checkout) not in diff
    assert git(m.home, "diff", "--cached", "--name-only") == "notes.txt\n"


@pytest.mark.parametrize("where", ["root", "home"])
def test_map_refuses_the_filesystem_root_and_the_home_directory_itself_and_changes_nothing(tmp_path, where):
    m = _git_machine(tmp_path)
    directory = {"root": "/", "home": str(m.user_home)}[where]
    before = (m.home / "config.toml").read_bytes()
    for spelling in (directory, directory + "/."):
        status, out, err = m.run("map", spelling, "everything")
        assert status == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err, (status, out, err)
        said = {"root": "/ is the filesystem root", "home": f"{m.user_home} is your home directory"}[where]
        assert said in err and "would claim every directory below it; nothing was changed" in err
    assert (m.home / "config.toml").read_bytes() == before
    status, _, _ = m.run("map", m.user_home.parent, "above")  # above the home: not the home itself, allowed
    assert status == 0


def test_unmap_removes_one_mapping_commits_only_that_and_keeps_the_users_edits_uncommitted(tmp_path):
    # INV config-edit-alone
    app, old = tmp_path / "app", tmp_path / "old-checkout"
    app.mkdir()
    old.mkdir()
    m = _git_machine(tmp_path, {app: "app", old: "app"})
    cfg = m.home / "config.toml"
    cfg.write_text(cfg.read_text().replace('agent = "laptop"', 'agent = "laptop"  # still deciding'))
    shutil.rmtree(old)  # a checkout deleted: its mapping still comes out
    status, out, err = m.json("unmap", old)
    assert status == 0 and out["project"] == "app" and out["committed"] is True, (out, err)
    assert _head_config(m)["projects"] == {str(app): "app"}
    assert tomllib.loads(cfg.read_text())["projects"] == {str(app): "app"} and "still deciding" in cfg.read_text()
    assert "still deciding" not in git(m.home, "show", "HEAD:config.toml")
    assert m.json("where", cwd=app)[1]["project"] == "app"


def test_unmapping_a_directory_that_is_not_mapped_is_one_line_and_changes_nothing(tmp_path):
    app = tmp_path / "app"
    app.mkdir()
    m = _git_machine(tmp_path, {app: "app"})
    before, commits = (m.home / "config.toml").read_bytes(), git(m.home, "rev-list", "--count", "HEAD")
    for directory in (tmp_path / "elsewhere", app / "sub"):
        status, out, err = m.run("unmap", directory)
        assert status == 4 and out == "" and err.count("\n") == 1 and "Traceback" not in err, (status, out, err)
        assert f"{directory} is not mapped to a project on this machine" in err and f"mapped: {app}" in err
    assert (m.home / "config.toml").read_bytes() == before
    assert git(m.home, "rev-list", "--count", "HEAD") == commits


def test_a_root_mapping_written_by_hand_can_be_unmapped(tmp_path):
    m = _git_machine(tmp_path)
    m.write_config((m.home / "config.toml").read_text() + '"/" = "everything"\n')
    status, out, err = m.json("unmap", "/")
    assert status == 0 and out["project"] == "everything", err
    assert "projects" not in tomllib.loads((m.home / "config.toml").read_text()) or \
        tomllib.loads((m.home / "config.toml").read_text())["projects"] == {}


# -- conflicts left by copier update -----------------------------------------------------------

CONFLICTED = """agent = "laptop"

[store]
kind = "folder"
location = "{store}"

[cache]
<<<<<<< before updating
max_age = 99
=======
max_age = 30
>>>>>>> after updating

[projects]
"{checkout}" = "app"
"""


def _conflicted_machine(tmp_path):
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = _git_machine(tmp_path, {checkout: "app"})
    # what copier renders beside config.toml, so the setup the way out names can run
    shutil.copytree(REPO / "template" / "agent-memory", m.home / "agent-memory")
    shutil.copy2(REPO / "template" / "instructions-block.md", m.home / "instructions-block.md")
    git(m.home, "add", "-A")
    git(m.home, "commit", "-qm", "the rest of the render")
    _, saved, _ = m.json("save", "--title", "Before the update", input="kept across the conflict", cwd=checkout)
    assert saved["status"] == "saved"
    (m.home / "config.toml").write_text(CONFLICTED.format(store=tmp_path / "store", checkout=checkout))
    return m, checkout


def test_a_conflicted_config_keeps_the_last_working_one_in_use_and_says_so(tmp_path):
    # INV stale-config-said
    m, checkout = _conflicted_machine(tmp_path)
    status, out, err = m.json("search", "conflict", cwd=checkout)
    assert status == 0 and out["results"][0]["title"] == "Before the update"
    assert "config.toml" in err and "conflict markers" in err and "line 8" in err
    assert "last working" in err and out["warnings"] and "conflict markers" in out["warnings"][0]
    status, out, err = m.run("save", "--title", "During", input="still saving", cwd=checkout)
    assert status == 0 and "conflict markers" in err


def _way_out(err: str) -> str:
    """The one command the conflict message tells the user to run, as printed (between backticks)."""
    (command,) = re.findall(r"then run `([^`]+)`", err)
    return command


def test_a_conflicted_config_is_never_edited_and_the_way_out_is_named(tmp_path):
    # INV stale-config-said
    m, checkout = _conflicted_machine(tmp_path)
    text = (m.home / "config.toml").read_text()
    other = tmp_path / "other"
    other.mkdir()
    status, out, err = m.run("map", other, "other")
    assert status == 2 and out == "" and "Traceback" not in err
    assert "conflict markers" in err and "keep one side of each conflict" in err and _way_out(err).endswith(" setup")
    assert (m.home / "config.toml").read_text() == text


def test_a_conflicted_config_without_a_previous_working_copy_stops_with_the_way_out(tmp_path):
    # INV stale-config-said
    m, checkout = _conflicted_machine(tmp_path)
    (m.home / ".config-parsed.json").unlink()
    status, out, err = m.run("search", "x", cwd=checkout)
    assert status == 2 and "conflict markers" in err and "line 8" in err and "Traceback" not in err


def test_setup_refuses_a_conflicted_config_even_with_a_previous_working_copy(tmp_path):
    # INV stale-config-said
    m, checkout = _conflicted_machine(tmp_path)
    status, out, err = m.run("setup")
    assert status == 2 and "conflict markers" in err and "last working" not in err


def test_resolving_the_conflict_as_told_brings_the_machine_back(tmp_path):
    m, checkout = _conflicted_machine(tmp_path)
    _, _, err = m.run("search", "x", cwd=checkout)
    command = _way_out(err)
    resolved = CONFLICTED.replace("<<<<<<< before updating\nmax_age = 99\n=======\n", "").replace(
        ">>>>>>> after updating\n", "").format(store=tmp_path / "store", checkout=checkout)
    (m.home / "config.toml").write_text(resolved)
    # exactly as printed, by a shell, where git knows no identity
    env = {k: v for k, v in m.env.items() if not k.startswith("GIT_")} | {"GIT_CONFIG_GLOBAL": os.devnull}
    proc = subprocess.run(command, shell=True, env=env, capture_output=True, text=True, cwd=checkout)
    assert proc.returncode == 0, proc.stderr
    assert git(m.home, "status", "--porcelain") == "" and "agentmem setup" in git(m.home, "log", "-1")
    status, out, err = m.json("search", "conflict", cwd=checkout)
    assert status == 0 and "warnings" not in out and err == ""


def test_conflict_markers_are_recognised_only_at_the_start_of_a_line():
    text = 'agent = "a"\nnote = "<<<<<<< not a marker"\n'
    assert config.conflict_line(text) == 0
    assert config.conflict_line("a = 1\n<<<<<<< before updating\n") == 2
    assert config.conflict_line("a = 1\n\n=======  \n") == 3
    with pytest.raises(InvalidInput):
        config.check_no_conflict("x.toml", "=======\n", machine="/m")


# -- hooks install / remove record the choice ---------------------------------------------------

def _hooks_machine(tmp_path, runtimes=("claude",)):
    m = _git_machine(tmp_path, {tmp_path: "app"})
    with open(m.home / "config.toml", "a") as fh:
        fh.write(f"\n[runtimes]\nenabled = {json.dumps(list(runtimes))}\n\n[hooks]\nenabled = false\n\n"
                 '[helper]\ncommand = ["/opt/py/bin/python3", "-m", "agentmem"]\n')
    git(m.home, "commit", "-qam", "setup")
    return m


def test_hooks_install_and_remove_record_the_choice_in_config_and_commit_it(tmp_path):
    # INV config-edit-alone
    m = _hooks_machine(tmp_path)
    status, out, err = m.json("hooks", "install")
    assert status == 0, err
    assert out["recorded"] == {"hooks.enabled": True}
    assert config.load(m.home).data["hooks"]["enabled"] is True
    assert _head_config(m)["hooks"]["enabled"] is True and git(m.home, "status", "--porcelain") == ""
    m.run("hooks", "remove", check_status=0)
    assert config.load(m.home).data["hooks"]["enabled"] is False
    assert _head_config(m)["hooks"]["enabled"] is False and git(m.home, "status", "--porcelain") == ""


def test_hooks_for_one_of_two_runtimes_are_recorded_for_that_runtime_only(tmp_path):
    from agentmem.machine import settings

    m = _hooks_machine(tmp_path, runtimes=("codex", "claude"))
    m.run("hooks", "install", "--runtime", "codex", check_status=0)
    cfg = config.load(m.home)
    assert cfg.data["hooks"]["enabled"] == ["codex"]
    assert settings.hooks_runtimes(cfg, ["codex", "claude"]) == {"codex"}
    m.run("hooks", "install", "--runtime", "claude", check_status=0)
    assert config.load(m.home).data["hooks"]["enabled"] is True
    m.run("hooks", "remove", "--runtime", "codex", check_status=0)
    assert config.load(m.home).data["hooks"]["enabled"] == ["claude"]


def test_hooks_install_into_a_read_only_file_still_installs_the_others_and_fails_for_that_one(tmp_path):
    m = _hooks_machine(tmp_path, runtimes=("codex", "claude"))
    settings_file = m.user_home / ".claude" / "settings.json"
    settings_file.parent.mkdir(parents=True)
    settings_file.write_text("{}\n")
    settings_file.chmod(0o444)
    status, out, err = m.json("hooks", "install")
    assert status == 6 and "read-only" in err + json.dumps(out) and "Traceback" not in err
    assert (m.user_home / ".codex" / "hooks.json").exists() and settings_file.read_text() == "{}\n"


def test_hooks_install_refused_for_a_broken_file_records_nothing(tmp_path):
    # INV config-edit-alone
    m = _hooks_machine(tmp_path)
    before = (m.home / "config.toml").read_bytes()
    settings_file = m.user_home / ".claude" / "settings.json"
    settings_file.parent.mkdir(parents=True)
    settings_file.write_text('{"theme": "dark",}')
    status, out, err = m.json("hooks", "install")
    assert status == 2 and out["recorded"] is None and "not valid JSON" in err
    assert (m.home / "config.toml").read_bytes() == before
