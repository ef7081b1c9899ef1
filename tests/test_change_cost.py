"""After a change, a search pays for the change, not for the store (issue W, item 1): after this machine's own
save the next search is one stat of each folder, and after another machine's note it lists the store's folder
once and the cache's not at all; what lets it skip a listing is kept only when nothing else changed."""

from __future__ import annotations

import os
import time

import pytest

from agentmem import config
from agentmem.memory import recall, save
from agentmem.replica import cache, kept_names
from agentmem.store import dirwatch, witness
from agentmem.store.folder import FolderStore
from tests.fixtures_core import new_folder_store
from tests.test_cache import put_notes


def _fine(path) -> None:
    fs = dirwatch.filesystem_type(str(path))
    if fs not in dirwatch.FINE_TYPES:
        pytest.skip(f"{path} is on {fs}, whose folder times are not fine-grained")


def _settle() -> None:
    time.sleep(dirwatch.granule() + 0.02)


def _listings(monkeypatch) -> list[str]:
    """Every folder os.listdir or os.scandir is asked for from now on."""
    listed: list[str] = []
    real_listdir, real_scandir = os.listdir, os.scandir

    def listdir(path="."):
        listed.append(os.path.realpath(os.fspath(path)) if not isinstance(path, int) else str(path))
        return real_listdir(path)

    def scandir(path="."):
        listed.append(os.path.realpath(os.fspath(path)) if not isinstance(path, int) else str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "listdir", listdir)
    monkeypatch.setattr(os, "scandir", scandir)
    return listed


@pytest.fixture
def joined(laptop, store_dir):
    """The laptop caught up with a store of 40 notes and settled: its next search is one stat."""
    _fine(store_dir)
    new_folder_store(store_dir)
    put_notes(FolderStore(store_dir), "app", 40)
    cfg = config.load(laptop.home)
    _settle()
    recall.search(str(laptop.home), cfg, "app", "note")  # lists the store, builds the index
    _settle()
    assert recall.search(str(laptop.home), cfg, "app", "note")["stale"] is False
    folders = (os.path.realpath(store_dir / "projects" / "app" / "notes"),
               os.path.realpath(cache.notes_dir(laptop.home, cfg.store, "app")))
    return laptop, cfg, folders


def test_after_this_machines_own_save_the_next_search_lists_neither_the_store_nor_the_cache(joined, monkeypatch):
    # INV read-your-writes: the note is in the next answer; INV change-token: the save saw that its upload
    # was the store folder's only change, so the token moves past it and the next search is one stat
    laptop, cfg, folders = joined
    if witness._inotify() is None:
        pytest.skip("no inotify here: a save cannot prove its upload was the store folder's only change")
    saved = save.save(str(laptop.home), cfg, "app", "The deploy key rotates every Monday.", title="Key rotation")
    assert saved.outcome.status == "saved"
    listed = _listings(monkeypatch)
    out = recall.search(str(laptop.home), cfg, "app", "deploy key rotates")
    assert [r["id"] for r in out["results"]][:1] == [saved.outcome.entry.id] and out["stale"] is False
    assert [f for f in listed if f in folders] == [], listed


def test_after_another_machines_note_a_search_lists_the_store_once_and_the_cache_not_at_all(joined, monkeypatch):
    # INV read-your-writes at a cost that follows the change: the store's folder is listed once (a plain
    # folder says no more); the cache's names are the kept ones, and the index is told with the folder's time
    laptop, cfg, (store_notes, cache_notes) = joined
    [fresh] = put_notes(FolderStore(laptop.home.parent.parent / "shared-store"), "app", 1, size=5)
    _settle()
    listed = _listings(monkeypatch)
    out = recall.search(str(laptop.home), cfg, "app", "note 0 xxxxx")
    assert fresh in [r["id"] for r in out["results"]] and out["stale"] is False
    assert listed.count(store_notes) == 1 and cache_notes not in listed, listed
    listed.clear()
    recall.search(str(laptop.home), cfg, "app", "note")
    assert store_notes not in listed and cache_notes not in listed, listed  # settled again: one stat each


def test_a_save_whose_upload_another_write_joined_leaves_the_next_search_to_list(joined, monkeypatch):
    # INV change-token: the token moves past this machine's upload only when the witness saw nothing else;
    # here another machine's note lands in the same moment, so the next search lists and finds it
    laptop, cfg, _ = joined
    other = FolderStore(laptop.home.parent.parent / "shared-store")
    landed: list[str] = []
    real_put = FolderStore.put

    def put_beside(self, path, data):
        real_put(self, path, data)
        if self is not other and not landed:
            landed.extend(put_notes(other, "app", 1, size=3))

    monkeypatch.setattr(FolderStore, "put", put_beside)
    save.save(str(laptop.home), cfg, "app", "The build cache lives on the fast disk.", title="Build cache")
    monkeypatch.undo()
    out = recall.search(str(laptop.home), cfg, "app", "note 0 xxx", limit=50)
    assert landed and landed[0] in [r["id"] for r in out["results"]] and out["stale"] is False


def test_a_note_removed_from_the_cache_by_hand_is_fetched_again_at_the_next_change(joined):
    # INV read-your-writes: the kept names are read only while the cache folder is as its last agentmem
    # writer left it; a hand's removal moves its signature, so the next change lists the folder again
    laptop, cfg, (_, cache_notes) = joined
    gone = sorted(os.listdir(cache_notes))[0]
    os.unlink(os.path.join(cache_notes, gone))
    put_notes(FolderStore(laptop.home.parent.parent / "shared-store"), "app", 1)
    _settle()
    status = cache.refresh(laptop.home, cfg.store, "app")
    assert gone[:-3] in status.added and os.path.exists(os.path.join(cache_notes, gone))


def test_a_writer_that_began_while_another_was_under_way_keeps_both_from_recording_the_folder(tmp_path):
    # What the kept names rest on (replica/kept_names.py): only a writer alone from its start to its end records
    pdir = tmp_path / "cache" / "app"
    (pdir / "notes").mkdir(parents=True)
    _fine(pdir)
    _settle()
    sig = dirwatch.signature(str(pdir / "notes"))
    kept_names.write(str(pdir), sig, set(), dirwatch.filesystem_type(str(pdir)))
    first = kept_names.Session(str(pdir))
    second = kept_names.Session(str(pdir))
    assert first.maintains and not second.maintains
    (pdir / "notes" / "a.md").write_text("a")
    (pdir / "notes" / "b.md").write_text("b")
    assert first.end({"a.md"}, set()) is None  # the second began since
    assert second.end({"b.md"}, set()) is None
    third = kept_names.Session(str(pdir))
    assert third.maintains  # alone: the others ended
    assert kept_names.read(str(pdir), dirwatch.signature(str(pdir / "notes"))) is None  # they recorded nothing
    (pdir / "notes" / "c.md").write_text("c")
    after = third.end({"c.md"}, set(), names=lambda: {"a.md", "b.md"})
    assert after == dirwatch.signature(str(pdir / "notes"))
    assert sorted(kept_names.read(str(pdir), after)[0]) == ["a.md", "b.md", "c.md"]
    (pdir / "notes" / "d.md").write_text("d")  # not agentmem's: the signature moves
    assert kept_names.read(str(pdir), dirwatch.signature(str(pdir / "notes"))) is None


def test_a_witness_seals_only_a_folder_that_this_process_alone_changed(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    fs = dirwatch.filesystem_type(str(folder))
    _fine(folder)
    mine = witness.Witness(str(folder), fs)
    if not mine.watching:
        pytest.skip("no inotify here")
    (folder / "mine.md").write_text("x")
    (folder / ".tmp-mine").write_text("x")  # hidden: in no listing
    os.unlink(folder / ".tmp-mine")
    sealed = mine.seal({"mine.md"})
    assert sealed == dirwatch.signature(str(folder))
    assert time.time() - sealed[2] / 1e9 >= dirwatch.granule()  # no later change can carry its time
    theirs = witness.Witness(str(folder), fs)
    (folder / "mine2.md").write_text("x")
    (folder / "theirs.md").write_text("x")
    assert theirs.seal({"mine2.md"}) is None


# -- another machine's save, through the store's journal (store/journal.py) --------------------------------


@pytest.fixture
def desktop(joined, machines):
    """Another machine on the same folder store and project; it never searched (no change token)."""
    laptop, _, _ = joined
    if witness._inotify() is None:
        pytest.skip("no inotify here: a save cannot prove its upload was the store folder's only change")
    other = machines("desktop", {laptop.checkout: "app"})
    return other, config.load(other.home)


def _journal(store_notes: str) -> str:
    from agentmem.store import journal

    return journal.path(store_notes)


def test_another_machines_save_is_in_the_next_search_without_a_listing_of_the_store(joined, desktop, monkeypatch):
    # INV read-your-writes at a cost that follows the change: the desktop's witnessed upload is a link in the
    # store's journal from the folder's settled signature to its new one, which the laptop's one stat matches
    laptop, cfg, (store_notes, cache_notes) = joined
    other, other_cfg = desktop
    saved = save.save(str(other.home), other_cfg, "app", "The staging database moved to the new rack.",
                      title="Staging database")
    assert saved.outcome.status == "saved"
    listed = _listings(monkeypatch)
    out = recall.search(str(laptop.home), cfg, "app", "staging database rack")
    assert [r["id"] for r in out["results"]][:1] == [saved.outcome.entry.id] and out["stale"] is False
    assert store_notes not in listed and cache_notes not in listed, listed
    listed.clear()
    assert recall.search(str(laptop.home), cfg, "app", "staging")["stale"] is False
    assert store_notes not in listed and cache_notes not in listed, listed  # settled: one stat each


@pytest.mark.parametrize("hand_first", [False, True], ids=["hand-copy-after-the-save", "hand-copy-before-the-save"])
def test_a_note_copied_in_by_hand_beside_another_machines_save_is_in_the_next_search(joined, desktop, hand_first):
    # INV read-your-writes: a note no agentmem writer journaled moves the folder's signature where no link
    # leads, so the search lists the folder in that same search, whatever the journal says
    laptop, cfg, (store_notes, _) = joined
    other, other_cfg = desktop
    hand: list[str] = []
    if hand_first:
        hand = put_notes(FolderStore(laptop.home.parent.parent / "shared-store"), "app", 1, size=7)
    saved = save.save(str(other.home), other_cfg, "app", "The staging database moved to the new rack.",
                      title="Staging database")
    if not hand_first:
        hand = put_notes(FolderStore(laptop.home.parent.parent / "shared-store"), "app", 1, size=7)
    assert os.path.getsize(_journal(store_notes)) > 0  # the desktop's save left a link
    out = recall.search(str(laptop.home), cfg, "app", "staging database note 0 xxxxxxx", limit=50)
    found = [r["id"] for r in out["results"]]
    assert saved.outcome.entry.id in found and hand[0] in found and out["stale"] is False


def test_a_torn_or_garbage_journal_line_never_hides_a_note(joined, desktop):
    # A line torn by a crash, bytes that are no JSON, and links of the wrong shape link nothing: the chain from
    # the laptop's signature breaks at the torn link, so it lists, and both machines' notes are found
    laptop, cfg, (store_notes, _) = joined
    other, other_cfg = desktop
    first = save.save(str(other.home), other_cfg, "app", "The staging database moved to the new rack.",
                      title="Staging database")
    path = _journal(store_notes)
    with open(path, "rb+") as fh:  # the first link torn part-way, as a crash in its write would leave it
        fh.truncate(os.path.getsize(path) - 25)
    with open(path, "ab") as fh:
        fh.write(b"\xff\xfe\x00garbage\n{not json}\n[1, 2]\n"
                 b'{"from": [1, 2, 3, 4, 5], "to": "x", "add": ["a.md"]}\n'
                 b'{"from": [1, 2, 3, 4, 5], "to": [1, 2, 3, 4, 6], "add": ["../../escape.md"]}\n')
    second = save.save(str(other.home), other_cfg, "app", "The release train leaves on Thursdays.",
                       title="Release train")
    out = recall.search(str(laptop.home), cfg, "app", "staging database release train", limit=50)
    found = [r["id"] for r in out["results"]]
    assert first.outcome.entry.id in found and second.outcome.entry.id in found and out["stale"] is False


def test_a_journal_is_followed_only_along_one_unbroken_way_to_the_folders_signature(tmp_path):
    from agentmem.store import journal

    folder = tmp_path / "notes"
    folder.mkdir()
    a, b, c, d = ([1, 2, 3, 4, n] for n in range(4))
    journal.append(str(folder), a, b, {"x.md"})
    journal.append(str(folder), b, c, {"y.md"})
    names, at = journal.follow(str(folder), a, c, [0, 0])
    assert names == ["x.md", "y.md"]
    assert journal.follow(str(folder), a, d, [0, 0]) is None  # the links end short of the folder's signature
    journal.append(str(folder), c, d, {"z.md"})
    size = os.path.getsize(journal.path(str(folder)))
    later, at2 = journal.follow(str(folder), c, d, at)  # read from the cursor: the links since, and the last again
    assert later == ["z.md"] and at[1] < at2[1] < size
    assert journal.follow(str(folder), a, c, [at[0] + 1, size])[0] == ["x.md", "y.md"]  # another file: from its start
    journal.append(str(folder), b, d, {"w.md"})  # a second way on from b: no witness allows that
    assert journal.follow(str(folder), a, d, [0, 0]) is None
