"""Setting machines up with real copier runs from a tagged template repo, as a user would.

A test of the copy itself runs copier for real (a few seconds at most each; docs/benchmarks.md), so
none is marked slow; a test of what comes after the copy (an update, setup rerun) starts from
`copied_laptop`, one real copy per session put back fresh for each test (tests/fixtures_machines.py).
"""

from __future__ import annotations

import json
import tomllib

import pytest

from tests.template_kit import (
    USER_AGENTS,
    USER_CLAUDE,
    git,
    make_machine,
    make_template_repo,
    plant_user_files,
    release,
    tree_bytes,
)
from tests.test_blocks import read_block


@pytest.fixture
def template_repo(tmp_path):
    return make_template_repo(tmp_path)


def _verification_notes(store):
    return sorted(p.name for p in store.rglob("setup-verification-*.md"))


@pytest.mark.slow  # a copier copy
def test_copy_keeps_the_users_files_and_installs_blocks_and_skill(template_repo, tmp_path):
    # INV outside-untouched
    m = make_machine(tmp_path, "laptop")
    plant_user_files(m.user)
    before = {p: tree_bytes(m.user / p) for p in (".agents/skills/my-skill", ".claude/skills/my-skill")}
    project, store = m.user / "src" / "app", tmp_path / "store"
    project.mkdir(parents=True)
    proc = m.copy(template_repo, ref="v1.0.0", cwd=project,
                  data={"bucket": str(store), "runtimes": '["codex", "claude"]'})
    assert "Setup verified" in proc.stdout

    agents = (m.user / ".codex" / "AGENTS.md").read_text()
    claude = (m.user / ".claude" / "CLAUDE.md").read_bytes().decode()
    assert agents.startswith(USER_AGENTS) and claude.startswith(USER_CLAUDE)
    for path in (m.user / ".codex" / "AGENTS.md", m.user / ".claude" / "CLAUDE.md"):
        assert f"Helper: `{m.helper}`" in read_block(path)
    for rel, files in before.items():
        assert tree_bytes(m.user / rel) == files
    for skill in (m.user / ".agents" / "skills" / "agent-memory", m.user / ".claude" / "skills" / "agent-memory"):
        text = (skill / "SKILL.md").read_text()
        assert "@AGENTMEM@" not in text and f"{m.helper} search" in text
        assert (skill / "references" / "checkpoint.md").is_file()

    cfg = tomllib.loads((m.folder / "config.toml").read_text())
    assert cfg["helper"]["command"] == [str(m.helper)]
    assert cfg["projects"] == {str(project): "app"}
    assert len(_verification_notes(store)) == 1
    assert git(m.folder, "status", "--porcelain") == ""  # pending, cache and venv stay out of git
    assert "pending" not in git(m.folder, "ls-files") and ".venv" not in git(m.folder, "ls-files")

    # The installed helper works from the project without PATH or AGENTMEM_HOME.
    found = m.run("search", "Memory setup verification", "--json", cwd=project)
    assert found.returncode == 0 and json.loads(found.stdout)["results"][0]["title"] == "Memory setup verification"


@pytest.mark.slow  # a copier update
def test_update_changes_block_and_skill_and_keeps_local_edits(copied_laptop):
    m, template_repo, store = copied_laptop.m, copied_laptop.template_repo, copied_laptop.store

    # The owner edits around our block and tunes the config.
    agents = m.user / ".codex" / "AGENTS.md"
    agents.write_text(agents.read_text() + "\n## Added after setup\nKeep me.\n")
    config = m.folder / "config.toml"
    config.write_text(config.read_text().replace("max_age = 0", "max_age = 99  # my tuning"))
    git(m.folder, "commit", "-qam", "my tuning")

    block = template_repo / "template" / "instructions-block.md"
    skill = template_repo / "template" / "agent-memory" / "SKILL.md"
    release(template_repo, "v2.0.0", {
        "template/instructions-block.md": block.read_text() + "Release two of the block.\n",
        "template/agent-memory/SKILL.md": skill.read_text() + "\nRelease two of the skill.\n",
    })
    m.update(ref="v2.0.0")

    text = agents.read_text()
    assert text.startswith(USER_AGENTS) and text.endswith("## Added after setup\nKeep me.\n")
    assert "Release two of the block." in read_block(agents)
    assert "Release two of the skill." in (m.user / ".agents" / "skills" / "agent-memory" / "SKILL.md").read_text()
    cfg = tomllib.loads(config.read_text())
    assert cfg["cache"]["max_age"] == 99 and cfg["helper"]["command"] == [str(m.helper)]
    # Tasks ran once, in the machine folder only: a run in Copier's temporary copies
    # would have saved a verification note under another machine folder's ID.
    assert len(_verification_notes(store)) == 1
    assert git(m.folder, "status", "--porcelain") == ""
    assert "agentmem template update to v2.0.0" in git(m.folder, "log", "-1", "--format=%s")
    assert "v2.0.0" in (m.folder / ".copier-answers.yml").read_text()


@pytest.mark.slow  # a copier copy
def test_a_second_machine_connects_to_the_same_store_without_replacing_anything(copied_laptop, tmp_path):
    # INV setup-rerun
    store, template_repo = copied_laptop.store, copied_laptop.template_repo  # the first machine: the copied laptop
    second = make_machine(tmp_path, "desktop")
    b = second.user / "checkouts" / "app-clone"
    b.mkdir(parents=True)
    # Something already shared in the store: a published skill revision.
    shared = store / "skills" / "review" / "r1" / "SKILL.md"
    shared.parent.mkdir(parents=True)
    shared.write_text("---\nname: review\ndescription: x\n---\n")
    store_before = tree_bytes(store)
    plant_user_files(second.user)
    user_skill = tree_bytes(second.user / ".agents" / "skills" / "my-skill")

    proc = second.copy(template_repo, ref="v1.0.0", cwd=b,
                       data={"bucket": str(store), "projects": json.dumps({str(b): "app"})})
    assert f"store: ok - connected to folder {store}" in proc.stdout
    # Objects only: a store's hidden files are agentmem's own bookkeeping (the marker, a notes folder's
    # journal of saves: store/journal.py), never listed as objects.
    after = {k: v for k, v in tree_bytes(store).items() if not k.rpartition("/")[2].startswith(".")}
    added = set(after) - set(store_before)
    assert len(added) == 1 and next(iter(added)).startswith("projects/app/notes/setup-verification-")
    assert all(after[k] == v for k, v in store_before.items() if not k.rpartition("/")[2].startswith("."))
    assert tree_bytes(second.user / ".agents" / "skills" / "my-skill") == user_skill
    results = json.loads(second.run("search", "verification", "--json", cwd=b).stdout)["results"]
    assert len(results) == 2  # each machine's own note; the first machine's is readable here


def test_rerunning_setup_changes_nothing_and_adds_no_note(copied_laptop):
    # INV setup-rerun, INV idempotent-apply
    m, store = copied_laptop.m, copied_laptop.store
    watched = [m.folder / "config.toml", m.user / ".codex" / "AGENTS.md", m.user / ".claude" / "CLAUDE.md"]
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in watched}
    proc = m.run("setup", "--json")
    report = json.loads(proc.stdout)
    assert proc.returncode == 0 and report["status"] == "confirmed"
    assert {s["status"] for s in report["steps"]} <= {"ok", "skipped"}
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in watched} == before
    assert len(_verification_notes(store)) == 1
    assert git(m.folder, "status", "--porcelain") == ""


def test_an_edited_core_skill_is_kept_until_the_owner_asks_to_replace_it(copied_laptop):
    # INV core-skill-edits
    m = copied_laptop.m
    installed = m.user / ".agents" / "skills" / "agent-memory" / "SKILL.md"
    installed.write_text(installed.read_text() + "\nMy own rule.\n")
    edited = installed.read_bytes()
    proc = m.run("setup")
    assert "skill codex: warning" in proc.stdout and "--replace-core-skill" in proc.stdout
    assert installed.read_bytes() == edited
    assert m.run("setup", "--replace-core-skill").returncode == 0
    assert b"My own rule." not in installed.read_bytes()
    assert list((m.folder / "backups").glob("agent-memory-codex-*/SKILL.md"))[0].read_bytes() == edited


@pytest.mark.slow  # three copier runs
def test_a_copy_interrupted_before_the_helper_was_installed_completes_when_rerun(template_repo, tmp_path):
    # INV setup-rerun
    m = make_machine(tmp_path, "laptop")
    project, store = m.user / "app", tmp_path / "store"
    project.mkdir()
    # Interrupted: Copier rendered the folder, but no task ran (no helper, no git, no runtime files).
    m.copier("copy", "--trust", "--defaults", "--skip-tasks", "-r", "v1.0.0", f"--data=bucket={store}",
             str(template_repo), str(m.folder), cwd=project)
    assert not m.helper.exists() and not (m.user / ".codex").exists()
    rerun = ["copy", "--trust", "--defaults", "--overwrite", "-r", "v1.0.0", f"--data=bucket={store}",
             str(template_repo), str(m.folder)]
    proc = m.copier(*rerun, cwd=project)
    assert "Setup verified" in proc.stdout
    assert len(_verification_notes(store)) == 1 and read_block(m.user / ".codex" / "AGENTS.md")
    again = m.copier(*rerun, cwd=project)
    assert "Setup verified" in again.stdout and len(_verification_notes(store)) == 1
    assert git(m.folder, "status", "--porcelain") == ""


@pytest.mark.slow  # copier copies
def test_listed_shared_skill_revisions_are_installed_and_a_rerun_leaves_them(template_repo, tmp_path):
    from agentmem.skills import publish as skills
    from agentmem.store.base import StoreDescription
    from agentmem.store.opening import open_store

    store = tmp_path / "store"
    source = tmp_path / "review"
    source.mkdir()
    (source / "SKILL.md").write_text("---\nname: review\ndescription: Review a change.\n---\nLook twice.\n")
    store.mkdir()
    published = skills.publish(source, tmp_path / "publisher", open_store(StoreDescription("folder", str(store))))
    wanted = f"review@{published['revision']}"

    m = make_machine(tmp_path, "laptop")
    project = m.user / "app"
    project.mkdir()
    proc = m.copy(template_repo, ref="v1.0.0", cwd=project, data={"bucket": str(store), "skills": json.dumps([wanted])})
    assert f"shared skill {wanted}: changed - installed" in proc.stdout
    installed = m.user / ".agents" / "skills" / "review" / "SKILL.md"
    assert installed.read_text().endswith("Look twice.\n")
    rerun = m.run("setup")
    assert f"shared skill {wanted}: ok - unchanged" in rerun.stdout and rerun.returncode == 0


@pytest.mark.slow  # a copier copy
def test_a_relative_destination_still_installs_and_records_absolute_paths(template_repo, tmp_path):
    m = make_machine(tmp_path, "laptop")
    proc = m.copier("copy", "--trust", "--defaults", "-r", "v1.0.0", f"--data=bucket={tmp_path / 'store'}",
                    str(template_repo), ".config/agentmem", cwd=m.user)
    assert "Setup verified" in proc.stdout
    cfg = tomllib.loads((m.folder / "config.toml").read_text())
    assert cfg["helper"]["command"] == [str(m.helper)] and cfg["projects"] == {str(m.user): "laptop"}


@pytest.mark.slow  # a copier update
def test_a_mapping_added_later_is_committed_so_the_next_update_runs_and_keeps_it(copied_laptop):
    m, project, template_repo = copied_laptop.m, copied_laptop.project, copied_laptop.template_repo
    other = m.user / "work" / "other"
    other.mkdir(parents=True)
    mapped = m.run("map", str(other), "other")
    assert mapped.returncode == 0, mapped.stderr
    assert m.run("search", cwd=project).returncode == 0  # leaves its parsed-config copy behind
    assert git(m.folder, "status", "--porcelain") == ""
    release(template_repo, "v2.0.0", {"template/instructions-block.md":
                                      (template_repo / "template" / "instructions-block.md").read_text() + "Two.\n"})
    m.update(ref="v2.0.0")
    cfg = tomllib.loads((m.folder / "config.toml").read_text())
    assert cfg["projects"] == {str(project): "app", str(other): "other"}
    assert git(m.folder, "status", "--porcelain") == ""


@pytest.mark.slow  # a copy and a conflicting update
def test_a_conflicting_update_of_config_toml_keeps_the_machine_working_until_resolved(copied_laptop):
    # INV stale-config-said
    import re
    import subprocess

    m, project, template_repo = copied_laptop.m, copied_laptop.project, copied_laptop.template_repo
    config = m.folder / "config.toml"
    config.write_text(config.read_text().replace("max_age = 0", "max_age = 99  # my tuning"))
    git(m.folder, "commit", "-qam", "my tuning")
    assert m.run("search", "verification", cwd=project).returncode == 0  # the working config, parsed and kept
    jinja = template_repo / "template" / "config.toml.jinja"
    release(template_repo, "v2.0.0", {"template/config.toml.jinja": jinja.read_text().replace(
        "max_age = 0", "max_age = 45")})

    update = m.update(ref="v2.0.0", check=False)
    assert update.returncode != 0 and "<<<<<<<" in config.read_text()
    found = m.run("search", "verification", "--json", cwd=project)
    assert found.returncode == 0 and json.loads(found.stdout)["results"]
    assert "conflict markers" in found.stderr and str(config) in found.stderr

    (command,) = re.findall(r"then run `([^`]+)`", found.stderr)  # one instruction: setup, which commits
    text = config.read_text()
    config.write_text(re.sub(r"<<<<<<< [^\n]*\n(.*?)=======\n.*?>>>>>>> [^\n]*\n", r"\1", text, flags=re.S))
    proc = subprocess.run(command, shell=True, env=m.env, capture_output=True, text=True, cwd=m.user)  # as printed
    assert proc.returncode == 0, (command, proc.stdout[-2000:], proc.stderr[-2000:])
    assert git(m.folder, "status", "--porcelain") == ""
    assert tomllib.loads(config.read_text())["cache"]["max_age"] == 99
    again = m.run("search", "verification", cwd=project)
    assert again.returncode == 0 and again.stderr == ""
