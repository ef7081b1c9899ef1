"""Publishing shared skills: frozen snapshots, SKILL.md last, resume, discovery, reading."""

from __future__ import annotations

import os
import re

import pytest

from agentmem.errors import InvalidInput, NotFound
from agentmem.note.ids import ALLOCATED
from agentmem.skills import catalog
from agentmem.skills import install as skill_install
from agentmem.skills import publish as skills
from agentmem.skills import spec as skillfmt
from tests.skillkit import (  # noqa: F401 - fixtures
    FaultyStore,
    bucket_case,
    machine,
    make_skill_machine,
    store,
    store_case,
    store_objects,
    tree,
    write_skill,
)


def test_publication_uploads_every_supporting_file_before_skill_md(machine, store, tmp_path):
    # INV skill-entrypoint-last
    src = write_skill(tmp_path / "src" / "lint-fixer", files={"scripts/run.py": "print(1)\n",
                                                              "references/guide.md": "# Guide\n"})
    recorder = FaultyStore(store)
    result = skills.publish(src, machine.home, recorder)
    assert result["status"] == "published"
    prefix = f"skills/lint-fixer/{result['revision']}"
    assert recorder.put_paths[-1] == f"{prefix}/SKILL.md"
    assert sorted(recorder.put_paths) == sorted(f"{prefix}/{p}" for p in ("SKILL.md", "scripts/run.py",
                                                                          "references/guide.md"))
    assert store.get(f"{prefix}/scripts/run.py") == b"print(1)\n"
    assert not (machine.home / "pending-skills" / "lint-fixer").exists()


def test_revision_ids_are_fresh_and_sort_by_time():
    a, b = skillfmt.new_revision(), skillfmt.new_revision()
    assert a != b and ALLOCATED.match(a) and ALLOCATED.match(b)
    assert a[:18] <= b[:18]


@pytest.mark.parametrize("puts_ok", [0, 1])
def test_interrupted_publication_stays_undiscoverable_and_resume_completes_it(machine, store_case, store,
                                                                             tmp_path, puts_ok):
    # INV skill-entrypoint-last, INV nothing-lost
    src = write_skill(tmp_path / "src" / "deploy-notes", description="Deploy checklist.",
                      files={"references/a.md": "A\n", "references/b.md": "B\n"})
    result = skills.publish(src, machine.home, FaultyStore(store, puts_ok=puts_ok))
    assert result["status"] == "pending"
    revision = result["revision"]
    assert "--resume deploy-notes " + revision in str(result["message"])

    assert catalog.discover(store) == []
    with pytest.raises(NotFound):
        catalog.read_file(store, "deploy-notes", revision)
    with pytest.raises(NotFound):
        skill_install.install(store, "deploy-notes", revision, machine.runtimes, machine=machine.home)
    assert not machine.installed("deploy-notes").exists()
    assert [p["revision"] for p in skills.pending_publications(machine.home)] == [revision]

    # The source changes after the interruption: the resume still sends the frozen files.
    (src / "references" / "a.md").write_text("changed later\n")
    done = skills.resume(machine.home, "deploy-notes", revision, opener=lambda d, timeout: store_case.open(d))
    assert done["status"] == "published" and done["revision"] == revision
    found = catalog.discover(store)
    assert [(s["name"], [r["revision"] for r in s["revisions"]]) for s in found] == [("deploy-notes", [revision])]
    assert store.get(f"skills/deploy-notes/{revision}/references/a.md") == b"A\n"
    assert skills.pending_publications(machine.home) == []


def test_resume_after_a_crash_past_the_upload_is_a_no_op(machine, store_case, store, tmp_path):
    # The upload finished but the process died before dropping the frozen copy. INV append-only
    src = write_skill(tmp_path / "src" / "crashy", files={"x.md": "x\n"})
    frozen = skills.freeze(src, machine.home, store.description)
    for item in frozen.files:
        store.put(f"skills/crashy/{frozen.revision}/{item['path']}", frozen.data(item["path"]))
    before = store_objects(store)
    done = skills.resume(machine.home, "crashy", frozen.revision, opener=lambda d, timeout: store_case.open(d))
    assert done["status"] == "published"
    assert store_objects(store) == before
    assert skills.pending_publications(machine.home) == []


def test_resume_uses_the_store_recorded_at_publication_not_the_current_one(machine, tmp_path):
    from tests.skillkit import folder_case

    first, second = folder_case(tmp_path / "first"), folder_case(tmp_path / "second")
    src = write_skill(tmp_path / "src" / "pinned")
    result = skills.publish(src, machine.home, FaultyStore(first.open(), puts_ok=0))
    opened = []
    skills.resume(machine.home, "pinned", result["revision"],
                  opener=lambda d, timeout: opened.append(d) or first.open(d))
    assert opened == [first.desc]
    assert catalog.discover(second.open()) == []


def test_resume_refuses_frozen_files_that_were_changed(machine, store, tmp_path):
    src = write_skill(tmp_path / "src" / "tampered", files={"a.md": "a\n"})
    result = skills.publish(src, machine.home, FaultyStore(store, puts_ok=0))
    frozen = machine.home / "pending-skills" / "tampered" / result["revision"] / "files" / "a.md"
    frozen.write_text("edited\n")
    with pytest.raises(InvalidInput, match="changed"):
        skills.resume(machine.home, "tampered", result["revision"], opener=lambda d, timeout: store)


def test_two_agents_publish_revisions_of_the_same_skill_without_touching_each_others(store_case, tmp_path):
    # INV append-only: two machines, one store
    a, b = make_skill_machine(tmp_path, "a"), make_skill_machine(tmp_path, "b")
    src_a = write_skill(tmp_path / "src-a" / "shared", description="From A.", files={"a.md": "A\n"})
    src_b = write_skill(tmp_path / "src-b" / "shared", description="From B.", files={"b.md": "B\n"})
    ra = skills.publish(src_a, a.home, store_case.open())
    snapshot_a = store_objects(store_case.open())
    rb = skills.publish(src_b, b.home, store_case.open())
    assert ra["revision"] != rb["revision"]
    after = store_objects(store_case.open())
    assert {k: v for k, v in after.items() if ra["revision"] in k} == snapshot_a
    assert sorted(k for k in after if rb["revision"] in k) == [
        f"skills/shared/{rb['revision']}/SKILL.md", f"skills/shared/{rb['revision']}/b.md"]
    [found] = catalog.discover(store_case.open())
    descriptions = {r["revision"]: r["description"] for r in found["revisions"]}
    assert descriptions == {ra["revision"]: "From A.", rb["revision"]: "From B."}


def _bad_sources(tmp_path):
    """(expected message, folder) pairs of sources publication must refuse."""
    cases = []
    (tmp_path / "nomd").mkdir(parents=True)
    cases.append(("has no SKILL.md", tmp_path / "nomd"))
    d = tmp_path / "nodesc"
    d.mkdir()
    (d / "SKILL.md").write_text("---\nname: nodesc\n---\nbody\n")
    cases.append(("has no 'description'", d))
    cases.append(("longer than 1024", write_skill(tmp_path / "longdesc", description="x" * 1025)))
    cases.append(("but the folder is named", write_skill(tmp_path / "folder-name", name="other-name")))
    cases.append(("invalid skill name '../trav'", write_skill(tmp_path / "trav", name="../trav")))
    cases.append(("invalid skill name 'Upper'", write_skill(tmp_path / "Upper")))
    cases.append(("reserved core memory skill", write_skill(tmp_path / "agent-memory")))
    cases.append(("unsafe file path", write_skill(tmp_path / "bslash", files={"up\\..\\..\\x.md": "x"})))
    cases.append(("larger than", write_skill(tmp_path / "big", files={"blob.bin": b"0" * (skillfmt.MAX_FILE_BYTES + 1)})))
    link = write_skill(tmp_path / "linked")
    (tmp_path / "secret.txt").write_text("secret")
    os.symlink(tmp_path / "secret.txt", link / "notes.md")
    cases.append(("is a symbolic link", link))
    fifo = write_skill(tmp_path / "fifo")
    os.mkfifo(fifo / "pipe")
    cases.append(("not a regular file", fifo))
    many = write_skill(tmp_path / "many", files={f"f{i}.md": "x" for i in range(skillfmt.MAX_FILES)})
    cases.append(("at most 200 files", many))
    return cases


def test_publication_refuses_unsafe_or_malformed_sources_and_leaves_nothing_behind(machine, store, tmp_path):
    for label, src in _bad_sources(tmp_path / "bad"):
        with pytest.raises(InvalidInput, match=re.escape(label)):
            skills.publish(src, machine.home, store)
        assert store.list("skills") == [], label
        assert skills.pending_publications(machine.home) == [], label
        leftovers = list((machine.home / "pending-skills").iterdir()) if (machine.home / "pending-skills").exists() else []
        assert leftovers == [], label


def test_discovery_searches_names_and_descriptions_case_insensitively(machine, store, tmp_path):
    skills.publish(write_skill(tmp_path / "s" / "pdf-tools", description="Split and merge PDF files."),
                   machine.home, store)
    skills.publish(write_skill(tmp_path / "s" / "release", description="Cut a RELEASE branch."), machine.home, store)
    assert [s["name"] for s in catalog.discover(store)] == ["pdf-tools", "release"]
    assert [s["name"] for s in catalog.discover(store, "merge pdf")] == ["pdf-tools"]
    assert [s["name"] for s in catalog.discover(store, "release")] == ["release"]
    assert [s["name"] for s in catalog.discover(store, "PDF-T")] == ["pdf-tools"]
    assert catalog.discover(store, "nothing-like-this") == []


def test_discovery_ignores_the_core_skill_and_malformed_names_placed_in_the_store(machine, store_case, store):
    md = b"---\nname: agent-memory\ndescription: impostor\n---\n"
    store_case.place("skills/agent-memory/20261130T000000000Z-aaaaaaaa/SKILL.md", md)
    store_case.place("skills/Bad_Name/r1/SKILL.md", b"---\nname: Bad_Name\ndescription: x\n---\n")
    assert catalog.discover(store) == []


def test_discovery_reports_a_malformed_skill_md_without_failing(machine, store_case, store):
    store_case.place("skills/broken/r1/SKILL.md", b"no frontmatter here\n")
    [found] = catalog.discover(store)
    assert found["revisions"][0]["description"] is None
    assert "frontmatter" in found["revisions"][0]["problem"]


def test_discovery_caches_skill_md_because_revisions_never_change(machine, store, tmp_path):
    result = skills.publish(write_skill(tmp_path / "s" / "cached"), machine.home, store)
    catalog.discover(store, machine=machine.home)
    cached = machine.home / "cache" / store.description.key / "skills" / "cached" / result["revision"] / "SKILL.md"
    assert cached.read_bytes() == store.get(f"skills/cached/{result['revision']}/SKILL.md")
    reads = FaultyStore(store, gets_ok=0)  # any download now fails
    assert catalog.discover(reads, machine=machine.home)[0]["revisions"][0]["problem"] is None


def test_read_returns_a_file_of_a_complete_revision_and_its_file_list(machine, store, tmp_path):
    result = skills.publish(write_skill(tmp_path / "s" / "reader", files={"references/x.md": "X body\n"}),
                            machine.home, store)
    got = catalog.read_file(store, "reader", result["revision"], "references/x.md")
    assert got["content"] == "X body\n"
    assert got["files"] == ["SKILL.md", "references/x.md"]
    assert "Do the thing." in catalog.read_file(store, "reader", result["revision"])["content"]
    for bad in ("../SKILL.md", "/etc/passwd", "references/../../x"):
        with pytest.raises(InvalidInput):
            catalog.read_file(store, "reader", result["revision"], bad)
    with pytest.raises(NotFound):
        catalog.read_file(store, "reader", result["revision"], "missing.md")


def test_a_publication_the_hub_cuts_off_stays_undiscoverable_until_resumed(machine, bucket_case, tmp_path):
    # INV skill-entrypoint-last, through the real client: the Hub fails every upload after the first.
    hub = bucket_case.hub
    src = write_skill(tmp_path / "src" / "cut-off", files={"a.md": "a\n", "b.md": "b\n"})
    hub.inject("batch", status=503, after=1)
    result = skills.publish(src, machine.home, bucket_case.open(timeout=3))
    assert result["status"] == "pending"
    hub.clear_faults()
    assert catalog.discover(bucket_case.open()) == []
    done = skills.resume(machine.home, "cut-off", result["revision"], opener=lambda d, timeout: bucket_case.open(d))
    assert done["status"] == "published"
    assert [s["name"] for s in catalog.discover(bucket_case.open())] == ["cut-off"]


def test_a_reply_lost_after_the_hub_stored_skill_md_is_resumed_without_a_second_copy(machine, bucket_case, tmp_path):
    # The upload of SKILL.md went through but its reply was lost: outcome unknown. INV append-only
    hub = bucket_case.hub
    src = write_skill(tmp_path / "src" / "lost-reply", files={"a.md": "a\n"})
    hub.inject("batch", "drop-after-apply", after=1, times=1)
    result = skills.publish(src, machine.home, bucket_case.open(timeout=3))
    assert result["status"] == "pending"
    before = store_objects(bucket_case.open())
    assert f"skills/lost-reply/{result['revision']}/SKILL.md" in before
    done = skills.resume(machine.home, "lost-reply", result["revision"], opener=lambda d, timeout: bucket_case.open(d))
    assert done["status"] == "published"
    assert store_objects(bucket_case.open()) == before


def test_hidden_entries_of_the_source_are_left_out_and_reported(machine, store, tmp_path):
    src = write_skill(tmp_path / "src" / "cloned", files={".git/config": "[core]\n", ".env": "TOKEN=x\n",
                                                          "references/.DS_Store": "junk", "references/r.md": "r\n"})
    os.symlink("/nonexistent", src / ".hidden-link")  # never even looked at
    result = skills.publish(src, machine.home, store)
    assert result["skipped"] == [".env", ".git", ".hidden-link", "references/.DS_Store"]
    assert sorted(result["files"]) == ["SKILL.md", "references/r.md"]
    assert sorted(o.path.split("/", 3)[3] for o in store.list("skills/cloned")) == ["SKILL.md", "references/r.md"]
