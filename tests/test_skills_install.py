"""Installing shared skills: explicit revisions, refusal to replace, backups, hostile sources."""

from __future__ import annotations

import json
import os
import stat
import uuid
from pathlib import Path

import pytest

from agentmem.errors import Conflict, InvalidInput, NotConfigured, Offline
from agentmem.skills import catalog
from agentmem.skills import install as skill_install
from agentmem.skills import publish as skills
from agentmem.skills import spec as skillfmt
from agentmem.store.base import ObjectInfo
from tests.skillkit import (  # noqa: F401 - fixtures
    FaultyStore,
    machine,
    store,
    store_case,
    store_objects,
    tree,
    write_skill,
)


def publish(machine, store, tmp_path, name, **kw):
    """Publish a fresh source folder for `name`; return the new revision."""
    src = write_skill(tmp_path / "src" / uuid.uuid4().hex / name, **kw)
    return skills.publish(src, machine.home, store)["revision"]


def install(machine, store, name, revision, **kw):
    return skill_install.install(store, name, revision, machine.runtimes, machine=machine.home, **kw)


def backups(machine):
    root = machine.home / "skill-backups"
    return sorted(p.relative_to(root).as_posix() for p in root.glob("*/*/*")) if root.exists() else []


def test_install_places_the_revision_in_every_runtime_skill_folder(machine, store, tmp_path):
    rev = publish(machine, store, tmp_path, "tidy", files={"references/r.md": "ref\n"})
    result = install(machine, store, "tidy", rev)
    assert [(r["runtime"], r["action"]) for r in result["runtimes"]] == [("codex", "installed"), ("claude", "installed")]
    for rt in ("codex", "claude"):
        target = machine.installed("tidy", rt)
        assert (target / "references" / "r.md").read_text() == "ref\n"
        assert json.loads((target / skillfmt.INSTALL_MARKER).read_text())["revision"] == rev
    assert machine.installed("tidy", "codex") == machine.user_home / ".agents" / "skills" / "tidy"
    assert catalog.discover(store, runtimes=machine.runtimes)[0]["installed"] == [
        {"runtime": "codex", "revision": rev}, {"runtime": "claude", "revision": rev}]
    leftovers = [p.name for p in (machine.user_home / ".claude" / "skills").iterdir()]
    assert leftovers == ["tidy"]


def test_installing_the_same_revision_again_changes_nothing(machine, store, tmp_path):
    rev = publish(machine, store, tmp_path, "again")
    install(machine, store, "again", rev)
    result = install(machine, store, "again", rev)
    assert {r["action"] for r in result["runtimes"]} == {"unchanged"}
    assert backups(machine) == []


def test_downloaded_scripts_are_never_run_and_not_made_executable(machine, store, tmp_path):
    canary = tmp_path / "ran"
    script = f"#!/bin/sh\ntouch {canary}\n"
    rev = publish(machine, store, tmp_path, "scripted", files={"scripts/setup.sh": script, "setup.py":
                                                              f"open({str(canary)!r}, 'w')\n"})
    install(machine, store, "scripted", rev)
    installed = machine.installed("scripted") / "scripts" / "setup.sh"
    assert installed.read_text() == script
    assert not canary.exists()
    assert not os.stat(installed).st_mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def test_new_publication_leaves_installed_and_existing_remote_revisions_unchanged(machine, store, tmp_path):
    # INV skill-immutable, INV append-only
    r1 = publish(machine, store, tmp_path, "stable", description="First.", files={"a.md": "one\n"})
    install(machine, store, "stable", r1)
    remote_before, installed_before = store_objects(store), tree(machine.installed("stable"))
    r2 = publish(machine, store, tmp_path, "stable", description="Second.", files={"a.md": "two\n"})
    assert r2 != r1
    after = store_objects(store)
    assert {k: v for k, v in after.items() if r1 in k} == remote_before
    assert tree(machine.installed("stable")) == installed_before
    [found] = catalog.discover(store, runtimes=machine.runtimes)
    assert [r["revision"] for r in found["revisions"]] == sorted([r1, r2], reverse=True)
    assert {i["revision"] for i in found["installed"]} == {r1}


def test_update_refuses_to_replace_by_default_and_replace_keeps_a_backup(machine, store, tmp_path):
    r1 = publish(machine, store, tmp_path, "evolving", files={"a.md": "one\n"})
    install(machine, store, "evolving", r1)
    (machine.installed("evolving") / "local-edit.md").write_text("mine\n")  # the owner's local change
    before = {rt.name: tree(rt.skills_root / "evolving") for rt in machine.runtimes}
    r2 = publish(machine, store, tmp_path, "evolving", files={"a.md": "two\n"})

    with pytest.raises(Conflict, match="already installed") as refused:
        install(machine, store, "evolving", r2)
    assert "--diff" in str(refused.value.hint) and "--replace" in str(refused.value.hint)
    assert {rt.name: tree(rt.skills_root / "evolving") for rt in machine.runtimes} == before

    preview = install(machine, store, "evolving", r2, diff=True, dry_run=True)
    claude = next(r for r in preview["runtimes"] if r["runtime"] == "claude")
    assert claude["action"] == "none" and claude["state"] == "different"
    assert "-one\n+two\n" in claude["diff"] and "installed/local-edit.md" in claude["diff"]
    assert {rt.name: tree(rt.skills_root / "evolving") for rt in machine.runtimes} == before

    result = install(machine, store, "evolving", r2, replace=True)
    assert {r["action"] for r in result["runtimes"]} == {"replaced"}
    for item in result["runtimes"]:
        assert tree(Path(item["backup"])) == before[item["runtime"]]
        assert str(machine.home / "skill-backups" / item["runtime"] / "evolving") in item["backup"]
    assert (machine.installed("evolving") / "a.md").read_text() == "two\n"
    assert not (machine.installed("evolving") / "local-edit.md").exists()


def test_a_skill_installed_by_hand_is_not_replaced_without_consent(machine, store, tmp_path):
    rev = publish(machine, store, tmp_path, "handmade")
    own = write_skill(machine.installed("handmade"), body="My own version.\n")
    before = tree(own)
    with pytest.raises(Conflict):
        install(machine, store, "handmade", rev)
    assert tree(own) == before
    assert not machine.installed("handmade", "codex").exists()  # all or nothing across runtimes


def test_a_symlinked_installation_is_backed_up_as_a_link_and_its_target_untouched(machine, store, tmp_path):
    rev = publish(machine, store, tmp_path, "linked")
    checkout = write_skill(tmp_path / "checkout" / "linked", body="dev copy\n")
    before = tree(checkout)
    target = machine.installed("linked")
    target.parent.mkdir(parents=True)
    os.symlink(checkout, target)
    result = install(machine, store, "linked", rev, replace=True)
    claude = next(r for r in result["runtimes"] if r["runtime"] == "claude")
    assert os.readlink(claude["backup"]) == str(checkout)
    assert tree(checkout) == before
    assert not target.is_symlink() and (target / "SKILL.md").is_file()


def test_failed_download_leaves_the_existing_installation_intact(machine, store, tmp_path):
    # INV skill-install-safe
    r1 = publish(machine, store, tmp_path, "fragile", files={"a.md": "one\n", "b.md": "b\n"})
    install(machine, store, "fragile", r1)
    before = tree(machine.installed("fragile"))
    r2 = publish(machine, store, tmp_path, "fragile", files={"a.md": "two\n", "b.md": "b2\n"})
    with pytest.raises(Offline):
        install(machine, FaultyStore(store, gets_ok=1), "fragile", r2, replace=True)
    assert tree(machine.installed("fragile")) == before
    assert backups(machine) == []
    assert [p.name for p in machine.installed("fragile").parent.iterdir()] == ["fragile"]
    assert not [p for p in machine.home.iterdir() if p.name.startswith(".tmp-")]


def test_install_without_any_enabled_runtime_says_so(machine, store, tmp_path):
    rev = publish(machine, store, tmp_path, "nowhere")
    with pytest.raises(NotConfigured):
        skill_install.install(store, "nowhere", rev, [], machine=machine.home)


# ---------------------------------------------------------------- hostile sources


@pytest.fixture
def existing(machine, store, tmp_path):
    """A good revision of `victim`, installed; returns a function asserting it is still untouched."""
    rev = publish(machine, store, tmp_path, "victim", files={"a.md": "good\n"})
    install(machine, store, "victim", rev)
    before = {rt.name: tree(rt.skills_root) for rt in machine.runtimes}

    def untouched():
        assert {rt.name: tree(rt.skills_root) for rt in machine.runtimes} == before
        assert backups(machine) == []
        assert not [p for p in machine.home.iterdir() if p.name.startswith(".tmp-")]

    return untouched


HOSTILE_REV = "20261130T101010101Z-hhhhhhhh"
GOOD_MD = b"---\nname: victim\ndescription: Looks fine.\n---\nbody\n"


@pytest.mark.parametrize("name, revision", [
    ("../victim", HOSTILE_REV), ("victim/../../x", HOSTILE_REV), ("/etc", HOSTILE_REV),
    ("victim", "../" + HOSTILE_REV), ("victim", "/abs"), ("victim", ".."), ("agent-memory", HOSTILE_REV),
])
def test_hostile_names_are_rejected_with_the_installation_untouched(machine, store, existing, name, revision):
    with pytest.raises(InvalidInput):
        install(machine, store, name, revision, replace=True)
    existing()


def test_the_core_skill_cannot_be_installed_or_replaced_from_the_store(machine, store_case, store):
    # INV core-skill-reserved
    core = write_skill(machine.installed("agent-memory"), body="core client\n")
    before = tree(core)
    store_case.place(f"skills/agent-memory/{HOSTILE_REV}/SKILL.md",
                     b"---\nname: agent-memory\ndescription: impostor\n---\n")
    with pytest.raises(InvalidInput, match="reserved"):
        install(machine, store, "agent-memory", HOSTILE_REV, replace=True)
    assert tree(core) == before


def test_an_oversized_file_in_the_store_is_rejected(machine, store_case, store, existing):
    store_case.place(f"skills/victim/{HOSTILE_REV}/big.bin", b"0" * (skillfmt.MAX_FILE_BYTES + 1))
    store_case.place(f"skills/victim/{HOSTILE_REV}/SKILL.md", GOOD_MD)
    with pytest.raises(InvalidInput, match="larger than"):
        install(machine, store, "victim", HOSTILE_REV, replace=True)
    existing()


def test_a_skill_md_declaring_another_name_is_rejected(machine, store_case, store, existing):
    store_case.place(f"skills/victim/{HOSTILE_REV}/SKILL.md", GOOD_MD.replace(b"name: victim", b"name: other"))
    with pytest.raises(InvalidInput, match="declares the name"):
        install(machine, store, "victim", HOSTILE_REV, replace=True)
    existing()


def test_a_symlink_in_the_folder_store_is_rejected(machine, store_case, store, existing, tmp_path):
    if store_case.kind != "folder":
        pytest.skip("only a folder store can hold a symlink")
    secret = tmp_path / "secret.txt"
    secret.write_text("do not copy me\n")
    store_case.place(f"skills/victim/{HOSTILE_REV}/SKILL.md", GOOD_MD)
    link = tmp_path / "store" / "skills" / "victim" / HOSTILE_REV / "leak.md"
    os.symlink(secret, link)
    with pytest.raises(InvalidInput, match="symbolic link"):
        install(machine, store, "victim", HOSTILE_REV, replace=True)
    existing()


@pytest.mark.parametrize("linked", ["revision", "skill"])
def test_a_symlinked_folder_in_the_folder_store_is_rejected(machine, store_case, store, existing, tmp_path, linked):
    if store_case.kind != "folder":
        pytest.skip("only a folder store can hold a symlink")
    elsewhere = tmp_path / "elsewhere" / "victim" / HOSTILE_REV
    elsewhere.mkdir(parents=True)
    (elsewhere / "SKILL.md").write_bytes(GOOD_MD)
    skill_dir = tmp_path / "store" / "skills" / "victim"
    if linked == "revision":
        os.symlink(elsewhere, skill_dir / HOSTILE_REV)
    else:
        os.symlink(elsewhere.parent, tmp_path / "store" / "skills" / "alias")
    name = "victim" if linked == "revision" else "alias"
    with pytest.raises(InvalidInput, match="symbolic link"):
        install(machine, store, name, HOSTILE_REV, replace=True)
    existing()


def test_a_file_where_a_folder_is_expected_is_rejected(machine, store_case, store, existing):
    if store_case.kind == "folder":  # the revision folder itself is a file
        store_case.place(f"skills/victim/{HOSTILE_REV}", GOOD_MD)
    else:  # a bucket can hold "scripts" and "scripts/run.sh" side by side
        store_case.place(f"skills/victim/{HOSTILE_REV}/scripts/run.sh", b"echo hi\n")
        store_case.place(f"skills/victim/{HOSTILE_REV}/scripts", b"a file\n")
        store_case.place(f"skills/victim/{HOSTILE_REV}/SKILL.md", GOOD_MD)
    with pytest.raises(InvalidInput, match="expects a folder"):
        install(machine, store, "victim", HOSTILE_REV, replace=True)
    existing()


def test_a_traversal_path_placed_in_a_bucket_never_lands_outside_the_skill(machine, store_case, store, tmp_path):
    if store_case.kind != "bucket":
        pytest.skip("a folder cannot hold a '..' name")
    for evil in ("../../../../escaped.md", "a/../../../escaped.md", "/abs/escaped.md"):
        store_case.place(f"skills/victim/{HOSTILE_REV}/{evil}", b"escaped\n")
    store_case.place(f"skills/victim/{HOSTILE_REV}/SKILL.md", GOOD_MD)
    try:
        result = install(machine, store, "victim", HOSTILE_REV)
    except InvalidInput:
        result = None
    assert not list(tmp_path.rglob("escaped.md"))
    if result is not None:  # the store could not address those objects, so only SKILL.md came
        assert sorted(tree(machine.installed("victim"))) == [".agentmem-skill.json", "SKILL.md"]


@pytest.mark.parametrize("path, message", [
    ("skills/victim/r/../../../etc/passwd", "unsafe file path"),
    ("skills/victim/r//etc/passwd", "unsafe file path"),
    ("skills/victim/r/.hidden", "unsafe file path"),
    ("skills/victim/r/a\\..\\..\\x", "unsafe file path"),
    ("skills/other/r/x.md", "outside"),
    ("skills/victim/r/scripts", "expects a folder"),
    ("skills/victim/r/huge.bin", "larger than"),
])
def test_a_hostile_store_listing_is_rejected_before_any_download(path, message):
    size = skillfmt.MAX_FILE_BYTES + 1 if path.endswith("huge.bin") else 3
    listing = [ObjectInfo("skills/victim/r/SKILL.md", 10), ObjectInfo("skills/victim/r/scripts/run.sh", 5),
               ObjectInfo(path, size)]
    with pytest.raises(InvalidInput, match=message):
        skill_install.validate_listing("skills/victim/r", listing)


def test_a_listing_that_understates_a_size_is_caught_at_download(machine, store_case, store, existing):
    class Understating(FaultyStore):
        def list(self, prefix):
            return [ObjectInfo(o.path, 1) for o in self.inner.list(prefix)]

    store_case.place(f"skills/victim/{HOSTILE_REV}/big.bin", b"0" * (skillfmt.MAX_FILE_BYTES + 1))
    store_case.place(f"skills/victim/{HOSTILE_REV}/SKILL.md", GOOD_MD)
    with pytest.raises(InvalidInput, match="larger than"):
        install(machine, Understating(store), "victim", HOSTILE_REV, replace=True)
    existing()


def test_a_file_where_the_runtime_expects_a_skill_folder_is_kept_unless_replaced(machine, store, tmp_path):
    rev = publish(machine, store, tmp_path, "clash")
    target = machine.installed("clash")
    target.parent.mkdir(parents=True)
    target.write_text("a stray file\n")
    with pytest.raises(Conflict):
        install(machine, store, "clash", rev)
    assert target.read_text() == "a stray file\n"
    result = install(machine, store, "clash", rev, replace=True)
    claude = next(r for r in result["runtimes"] if r["runtime"] == "claude")
    assert Path(claude["backup"]).read_text() == "a stray file\n"
    assert (target / "SKILL.md").is_file()



def test_replace_keeps_a_backup_when_the_machine_folder_is_on_another_filesystem(store, tmp_path):
    import shutil
    import tempfile

    from tests.skillkit import SkillMachine

    if not os.path.isdir("/dev/shm") or os.stat("/dev/shm").st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("needs a second filesystem (/dev/shm) to force a copying backup")
    other_fs = Path(tempfile.mkdtemp(prefix="agentmem-test-", dir="/dev/shm"))
    try:
        m = SkillMachine(other_fs / "agentmem", tmp_path / "home")
        m.user_home.mkdir()
        r1 = publish(m, store, tmp_path, "far", files={"a.md": "one\n"})
        install(m, store, "far", r1)
        (m.installed("far") / "mine.md").write_text("local\n")
        before = tree(m.installed("far"))
        r2 = publish(m, store, tmp_path, "far", files={"a.md": "two\n"})
        result = install(m, store, "far", r2, replace=True)
        claude = next(r for r in result["runtimes"] if r["runtime"] == "claude")
        assert tree(Path(claude["backup"])) == before
        assert (m.installed("far") / "a.md").read_text() == "two\n"
        assert [p.name for p in m.installed("far").parent.iterdir()] == ["far"]
    finally:
        shutil.rmtree(other_fs, ignore_errors=True)


def test_a_staging_folder_left_by_a_crash_is_swept_on_the_next_install(machine, store, tmp_path):
    root = machine.installed("any").parent
    leftover = write_skill(root / ".tmp-agentmem-crashed" / "half")
    recent = write_skill(root / ".tmp-agentmem-running" / "other")
    old = 1_000_000_000
    os.utime(leftover.parent, (old, old))
    rev = publish(machine, store, tmp_path, "after-crash")
    install(machine, store, "after-crash", rev)
    assert not leftover.parent.exists()
    assert recent.exists()  # might belong to an installation still running
    assert sorted(p.parent.name for p in root.glob("*/SKILL.md")) == ["after-crash"]  # no half-built skill


def test_runtimes_sharing_one_skill_folder_get_one_installation(machine, store, tmp_path):
    from agentmem.runtimes.registry import runtime

    rev = publish(machine, store, tmp_path, "shared-root")
    claude = runtime("claude", machine.env)
    result = skill_install.install(store, "shared-root", rev, [claude, claude], machine=machine.home)
    assert [r["action"] for r in result["runtimes"]] == ["installed"]
    assert (machine.installed("shared-root") / "SKILL.md").is_file()
