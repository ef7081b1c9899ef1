"""The skill commands through the real CLI, in child processes, on two throwaway machines."""

from __future__ import annotations

import json
from pathlib import Path

from tests.skillkit import tree, write_skill

RUNTIMES = '\n[runtimes]\nenabled = ["codex", "claude"]\n'


def skill_machine(machines, name):
    m = machines(name)
    (m.home / "config.toml").write_text((m.home / "config.toml").read_text() + RUNTIMES)
    return m


def test_a_skill_published_on_one_machine_is_found_read_and_installed_on_another(machines, tmp_path):
    laptop, desktop = skill_machine(machines, "laptop"), skill_machine(machines, "desktop")
    src = write_skill(tmp_path / "src" / "release-notes", description="Draft release notes from the git log.",
                      files={"references/format.md": "# Format\n"})
    status, published, err = laptop.json("publish-skill", src)
    assert status == 0, err
    assert published["status"] == "published" and published["pending"] is None
    rev = published["revision"]

    status, listed, _ = desktop.json("skills", "RELEASE notes")
    assert status == 0
    assert [(s["name"], [r["revision"] for r in s["revisions"]]) for s in listed["skills"]] == [("release-notes", [rev])]
    status, out, _ = desktop.run("skills", "no-such-thing")
    assert status == 0 and out.startswith("0 skill(s)")

    status, got, _ = desktop.json("read-skill", "release-notes", rev, "references/format.md")
    assert status == 0 and got["content"] == "# Format\n"
    status, text, _ = desktop.run("read-skill", "release-notes", rev)
    assert status == 0 and "Draft release notes" in text

    status, installed, err = desktop.json("install-skill", "release-notes", rev)
    assert status == 0, err
    assert {r["action"] for r in installed["runtimes"]} == {"installed"}
    for folder in (desktop.user_home / ".claude" / "skills", desktop.user_home / ".agents" / "skills"):
        assert (folder / "release-notes" / "references" / "format.md").read_text() == "# Format\n"
    status, listed, _ = desktop.json("skills")
    assert listed["skills"][0]["installed"] == [{"runtime": "codex", "revision": rev},
                                                {"runtime": "claude", "revision": rev}]


def test_an_unreachable_store_leaves_the_publication_pending_until_resumed(machines, tmp_path):
    # INV nothing-lost, INV skill-entrypoint-last
    m = skill_machine(machines, "laptop")
    store = tmp_path / "drive" / "store"  # its parent is missing: the drive is "unmounted"
    config = (m.home / "config.toml").read_text().replace(str(tmp_path / "shared-store"), str(store))
    (m.home / "config.toml").write_text(config)
    src = write_skill(tmp_path / "src" / "offline-skill", files={"a.md": "a\n"})

    status, out, err = m.json("publish-skill", src)
    assert status == 10, err
    assert out["status"] == "pending" and "--resume offline-skill" in out["message"]
    status, _, err = m.run("skills")
    assert status == 7 and "Traceback" not in err

    store.mkdir(parents=True)  # the drive is back
    status, out, _ = m.json("skills")
    assert out["skills"] == [] and [p["revision"] for p in out["pending"]] == [out["pending"][0]["revision"]]
    rev = out["pending"][0]["revision"]
    status, done, err = m.json("publish-skill", "--resume", "offline-skill", rev)
    assert status == 0, err
    assert done["status"] == "published" and done["revision"] == rev
    status, out, _ = m.json("skills")
    assert [r["revision"] for r in out["skills"][0]["revisions"]] == [rev] and out["pending"] == []


def test_install_refuses_a_differing_copy_shows_the_diff_and_replaces_with_a_backup(machines, tmp_path):
    m = skill_machine(machines, "laptop")
    first = write_skill(tmp_path / "v1" / "fmt", body="Use tabs.\n")
    second = write_skill(tmp_path / "v2" / "fmt", body="Use spaces.\n")
    r1 = m.json("publish-skill", first)[1]["revision"]
    r2 = m.json("publish-skill", second)[1]["revision"]
    m.run("install-skill", "fmt", r1, check_status=0)
    installed = m.user_home / ".claude" / "skills" / "fmt"
    before = tree(installed)

    status, out, err = m.json("install-skill", "fmt", r2)
    assert status == 8 and out["error"] == "conflict" and "--replace" in out["message"]
    assert err.count("\n") == 1 and "Traceback" not in err
    status, text, _ = m.run("install-skill", "fmt", r2, "--diff")
    assert status == 0 and "-Use tabs.\n+Use spaces." in text and "nothing changed" in text
    assert tree(installed) == before

    status, out, err = m.json("install-skill", "fmt", r2, "--replace")
    assert status == 0, err
    claude = next(r for r in out["runtimes"] if r["runtime"] == "claude")
    assert claude["action"] == "replaced"
    assert tree(Path(claude["backup"])) == before
    assert "Use spaces." in (installed / "SKILL.md").read_text()
    assert json.loads((installed / ".agentmem-skill.json").read_text())["revision"] == r2


def test_bad_skill_arguments_fail_with_one_line_and_no_traceback(machines, tmp_path):
    m = skill_machine(machines, "laptop")
    core = write_skill(tmp_path / "src" / "agent-memory")
    for args in (["install-skill", "../evil", "r1"], ["install-skill", "agent-memory", "r1"],
                 ["read-skill", "fmt", "r1", "../../etc/passwd"], ["publish-skill", core],
                 ["publish-skill"], ["publish-skill", "--resume", "fmt", "../r"]):
        status, out, err = m.run(*args)
        assert status == 2, (args, out, err)
        assert err.count("\n") == 1 and err.startswith("agentmem: ") and "Traceback" not in err, args
    assert not (m.user_home / ".claude").exists()
