"""One contract for every storage backend: the folder store and the bucket store (through the stand-in)."""

from __future__ import annotations

import pytest

from agentmem import errors
from agentmem.store.base import StoreDescription, open_store
from agentmem.store.folder import create_store


@pytest.fixture(params=["folder", "bucket"])
def store(request, tmp_path):
    if request.param == "folder":
        create_store(str(tmp_path / "store"))
        return open_store(StoreDescription("folder", str(tmp_path / "store")))
    request.getfixturevalue("alice_bucket")
    return open_store(StoreDescription("bucket", "alice/agent-memory"), timeout=3)


P = "projects/app/notes"


def test_a_stored_object_can_be_read_listed_and_described(store):
    store.put(f"{P}/a.md", b"alpha\n")
    assert store.get(f"{P}/a.md") == b"alpha\n"
    assert store.info(f"{P}/a.md").size == 6
    assert [(o.path, o.size) for o in store.list("projects/app")] == [(f"{P}/a.md", 6)]


def test_an_empty_object_round_trips(store):
    store.put(f"{P}/empty.md", b"")
    assert store.get(f"{P}/empty.md") == b""
    assert store.info(f"{P}/empty.md").size == 0


def test_putting_the_same_bytes_again_is_a_no_op(store):
    # INV append-only
    store.put(f"{P}/a.md", b"alpha\n")
    store.put(f"{P}/a.md", b"alpha\n")
    assert [o.path for o in store.list(P)] == [f"{P}/a.md"]


def test_different_bytes_at_a_used_path_conflict_and_keep_the_original(store):
    # INV append-only
    store.put(f"{P}/a.md", b"alpha\n")
    with pytest.raises(errors.Conflict):
        store.put(f"{P}/a.md", b"alpha!\n")
    with pytest.raises(errors.Conflict):
        store.put(f"{P}/a.md", b"beta\n\n")  # another size
    assert store.get(f"{P}/a.md") == b"alpha\n"


def test_missing_objects_are_not_found_and_have_no_info(store):
    with pytest.raises(errors.NotFound):
        store.get(f"{P}/nope.md")
    assert store.info(f"{P}/nope.md") is None
    assert store.list("projects/none") == []


def test_a_listing_is_complete_across_pages_and_stays_below_its_prefix(store):
    # INV complete-listing: 11 objects are 4+ pages at the stand-in's 3 a page
    expected = [f"{P}/n{i:02d}.md" for i in range(11)]
    for path in expected:
        store.put(path, path.encode())
    store.put("projects/app2/notes/other.md", b"x")
    store.put("projects/app/skills-like/deeper/x.md", b"y")
    listed = [o.path for o in store.list(P)]
    assert listed == expected
    assert [o.path for o in store.list("projects/app")] == sorted(expected + ["projects/app/skills-like/deeper/x.md"])


@pytest.mark.parametrize("bad", ["", "/etc/passwd", "a/../../b", "../x", ".tmp-x/y", "a//b", "a/b/", "a\\b", "a/ b"])
def test_bad_paths_are_rejected_everywhere(store, bad):
    for call in (lambda: store.put(bad, b"x"), lambda: store.get(bad), lambda: store.info(bad), lambda: store.list(bad)):
        with pytest.raises(errors.InvalidInput):
            call()


def test_delete_removes_only_the_named_object_and_says_whether_it_was_there(store):
    # the one exception to INV append-only, for a purge
    store.put(f"{P}/a.md", b"alpha\n")
    store.put(f"{P}/b.md", b"beta\n")
    assert store.delete(f"{P}/a.md") is True
    with pytest.raises(errors.NotFound):
        store.get(f"{P}/a.md")
    assert [o.path for o in store.list(P)] == [f"{P}/b.md"]
    assert store.delete(f"{P}/a.md") is False
    with pytest.raises(errors.InvalidInput):
        store.delete("projects/../x.md")


def test_a_delete_is_a_change_the_next_changes_call_reports(store):
    store.put(f"{P}/a.md", b"alpha\n")
    first = store.changes(P, None)
    assert [o.path for o in first.listing] == [f"{P}/a.md"]
    store.delete(f"{P}/a.md")
    later = store.changes(P, first.token)
    assert later.kind != "same"
    assert f"{P}/a.md" in later.removed or [o.path for o in later.listing] == []
