"""Installing the core skill: fresh install, updates, and never overwriting local edits."""

from __future__ import annotations

from agentmem.machine import core_skill

V1 = {"SKILL.md": b"---\nname: agent-memory\n---\nv1\n", "references/checkpoint.md": b"outline v1\n"}
V2 = {"SKILL.md": b"---\nname: agent-memory\n---\nv2\n", "references/checkpoint.md": b"outline v2\n"}


def _tree(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_helper_token_is_filled_in_from_the_rendered_source(tmp_path):
    src = tmp_path / "home" / "agent-memory"
    (src / "references").mkdir(parents=True)
    (src / "SKILL.md").write_text("run `@AGENTMEM@ search`\n")
    (src / "references" / "x.md").write_text("@AGENTMEM@ read ID\n")
    files = core_skill.render_files(src, "/abs/bin/agentmem")
    assert files == {"SKILL.md": b"run `/abs/bin/agentmem search`\n", "references/x.md": b"/abs/bin/agentmem read ID\n"}


def test_fresh_install_then_rerun_is_unchanged(tmp_path):
    home, dest = tmp_path / "home", tmp_path / "skills" / "agent-memory"
    assert core_skill.install_core_skill(V1, dest, home, "codex").status == "installed"
    assert _tree(dest) == V1
    assert core_skill.install_core_skill(V1, dest, home, "codex").status == "unchanged"


def test_an_unedited_install_is_updated_to_the_new_revision(tmp_path):
    home, dest = tmp_path / "home", tmp_path / "skills" / "agent-memory"
    core_skill.install_core_skill(V1, dest, home, "codex")
    result = core_skill.install_core_skill(V2, dest, home, "codex")
    assert result.status == "updated" and _tree(dest) == V2


def test_a_locally_edited_skill_is_kept_and_reported(tmp_path):
    # INV core-skill-edits
    home, dest = tmp_path / "home", tmp_path / "skills" / "agent-memory"
    core_skill.install_core_skill(V1, dest, home, "codex")
    (dest / "SKILL.md").write_bytes(b"my own edit\n")
    result = core_skill.install_core_skill(V2, dest, home, "codex")
    assert result.status == "kept-local-edits" and not result.ok
    assert "--replace-core-skill" in result.detail
    assert (dest / "SKILL.md").read_bytes() == b"my own edit\n"


def test_replacing_an_edited_skill_keeps_a_backup(tmp_path):
    # INV core-skill-edits
    home, dest = tmp_path / "home", tmp_path / "skills" / "agent-memory"
    core_skill.install_core_skill(V1, dest, home, "codex")
    (dest / "SKILL.md").write_bytes(b"my own edit\n")
    result = core_skill.install_core_skill(V2, dest, home, "codex", replace=True)
    assert result.status == "updated" and _tree(dest) == V2
    backups = list((home / "backups").iterdir())
    assert len(backups) == 1 and (backups[0] / "SKILL.md").read_bytes() == b"my own edit\n"


def test_a_folder_agentmem_did_not_install_is_not_replaced(tmp_path):
    home, dest = tmp_path / "home", tmp_path / "skills" / "agent-memory"
    dest.mkdir(parents=True)
    (dest / "SKILL.md").write_bytes(b"someone else's skill\n")
    result = core_skill.install_core_skill(V1, dest, home, "claude")
    assert result.status == "not-ours"
    assert _tree(dest) == {"SKILL.md": b"someone else's skill\n"}


def test_an_identical_unrecorded_install_is_adopted(tmp_path):
    home, dest = tmp_path / "home", tmp_path / "skills" / "agent-memory"
    core_skill.install_core_skill(V1, dest, home, "codex")
    (home / core_skill.MANIFEST).unlink()
    assert core_skill.install_core_skill(V1, dest, home, "codex").status == "unchanged"
    assert core_skill.install_core_skill(V2, dest, home, "codex").status == "updated"
