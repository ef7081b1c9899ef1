"""The project cache against a folder store: an O(1) change check, complete listings, atomic downloads,
and a cache kept through failures."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from agentmem.note import document
from agentmem.replica import cache
from agentmem.store import dirwatch
from agentmem.store.base import Changes, Listed
from agentmem.store.folder import FolderStore
from tests.fixtures_core import REPO, new_folder_store


def put_notes(store: FolderStore, project: str, count: int, size: int = 40) -> list[str]:
    ids = []
    for i in range(count):
        note = document.build(body=f"note {i} " + "x" * size, title=f"n{i}", kind="note", project=project, agent="t")
        store.put(document.note_path(project, note.id), note.render())
        ids.append(note.id)
    return ids


def test_refresh_downloads_only_missing_notes_and_prunes_only_after_a_complete_listing(tmp_path):
    store = new_folder_store(tmp_path / "store")
    home = tmp_path / "home"
    ids = put_notes(store, "app", 3)
    put_notes(store, "other", 2)  # another project's history is never downloaded
    first = cache.refresh(home, store.description, "app")
    assert not first.stale and sorted(first.added) == sorted(ids)
    assert sorted(cache.cached_ids(home, store.description, "app")) == sorted(ids)
    assert not os.path.exists(cache.project_dir(home, store.description, "other"))
    second = cache.refresh(home, store.description, "app")
    assert second.added == [] and second.removed == []
    # the owner deletes a note in the store: a complete listing prunes it
    os.unlink(os.path.join(store.root, document.note_path("app", ids[0])))
    third = cache.refresh(home, store.description, "app")
    assert third.removed == [ids[0]]


def test_a_refresh_with_nothing_new_asks_one_stat_and_lists_nothing(tmp_path, monkeypatch):
    store = new_folder_store(tmp_path / "store")
    home = tmp_path / "home"
    put_notes(store, "app", 3)
    monkeypatch.setattr(dirwatch, "RACY_SECONDS", 0.0)  # as if the last change were long ago (tested below)
    assert cache.refresh(home, store.description, "app").how == "listing"
    listed = []
    monkeypatch.setattr(FolderStore, "_names", lambda self, *a: listed.append(a) or [])
    status = cache.refresh(home, store.description, "app")
    assert not status.stale and status.how == "unchanged (one stat)" and listed == []


def test_a_change_right_after_a_listing_is_looked_for_again_until_the_folder_times_settle(tmp_path, monkeypatch):
    # INV read-your-writes: a second write in the same timestamp granule leaves the folder's times as
    # they were, so a signature first seen less than RACY_SECONDS before a listing is never trusted
    store = new_folder_store(tmp_path / "store")
    home = tmp_path / "home"
    put_notes(store, "app", 1)
    monkeypatch.setattr(dirwatch, "filesystem_type", lambda folder: "vfat")  # 2 s granules: the elapsed-time rule
    clock = [time.time()]
    monkeypatch.setattr("agentmem.store.folder.time.time", lambda: clock[0])
    assert cache.refresh(home, store.description, "app").how == "listing"
    clock[0] += dirwatch.RACY_SECONDS / 2
    assert cache.refresh(home, store.description, "app").how == "listing"  # same signature, not yet trusted
    clock[0] += dirwatch.RACY_SECONDS
    assert cache.refresh(home, store.description, "app").how == "listing"  # this listing began late enough
    assert cache.refresh(home, store.description, "app").how == "unchanged (one stat)"


def test_a_folder_signature_is_trusted_only_after_a_listing_that_began_a_granule_later():
    sig = [1, 2, 3, 4, 5]  # on FAT (2 s granules) only elapsed time settles a signature
    first = dirwatch.next_token(None, sig, "vfat", now=1000.0)
    assert not first["settled"] and not dirwatch.unchanged(first, sig, "vfat")
    soon = dirwatch.next_token(first, sig, "vfat", now=1000.0 + dirwatch.RACY_SECONDS - 0.1)
    assert not soon["settled"] and soon["seen"] == 1000.0
    later = dirwatch.next_token(soon, sig, "vfat", now=1000.0 + dirwatch.RACY_SECONDS)
    assert later["settled"] and dirwatch.unchanged(later, sig, "vfat")
    assert not dirwatch.unchanged(later, [1, 2, 3, 9, 5], "vfat")  # ctime moved: a sync tool reset mtime
    assert not dirwatch.unchanged(later, [1, 7, 3, 4, 5], "vfat")  # another folder at the same path
    back = dirwatch.next_token(first, sig, "vfat", now=900.0)  # the wall clock stepped back
    assert not back["settled"]


def test_on_a_filesystem_with_fine_times_a_listing_begun_a_moment_after_the_folder_time_settles_it():
    mtime = 1_000_000_000_123_456_789
    sig = [1, 2, mtime, mtime, 5]
    late = mtime / 1e9 + dirwatch.FINE_SECONDS + 1e-6  # a float at 1e9 s holds about 0.1 us
    assert dirwatch.next_token(None, sig, "ext4", now=late)["settled"]  # one listing, at once
    assert not dirwatch.next_token(None, sig, "ext4", now=late - 0.1)["settled"]  # too close to the change
    assert not dirwatch.next_token(None, sig, "vfat", now=late)["settled"]  # 2 s granules
    whole = [1, 2, 1_000_000_000_000_000_000, mtime, 5]  # whole seconds: an ext4 with small inodes
    assert not dirwatch.next_token(None, whole, "ext4", now=late)["settled"]


def test_a_change_costs_one_listing_once_the_folder_time_is_a_moment_old(tmp_path, monkeypatch):
    # INV read-your-writes: at 100k notes every search listed the whole folder for 3 s after any change
    store = new_folder_store(tmp_path / "store")
    home = tmp_path / "home"
    put_notes(store, "app", 3)
    if dirwatch.filesystem_type(store.root) not in dirwatch.FINE_TYPES:
        pytest.skip(f"{tmp_path} is on {dirwatch.filesystem_type(store.root)}, whose times are not fine-grained")
    cache.refresh(home, store.description, "app")
    time.sleep(dirwatch.FINE_SECONDS + 0.05)
    [late] = put_notes(store, "app", 1)
    time.sleep(dirwatch.FINE_SECONDS + 0.05)
    status = cache.refresh(home, store.description, "app")
    assert status.how == "listing" and status.added == [late]
    assert cache.refresh(home, store.description, "app").how == "unchanged (one stat)"


def test_a_changed_folder_is_compared_by_names_and_only_the_new_names_are_looked_at(tmp_path, monkeypatch):
    # INV read-your-writes, at a cost that follows the change (issue 26, item 8): a listing after a change is one os.listdir compared as sets;
    # only the names new to the cache are checked (links and folders are not notes) and parsed
    store = new_folder_store(tmp_path / "store")
    home = tmp_path / "home"
    put_notes(store, "app", 40)
    monkeypatch.setattr(dirwatch, "RACY_SECONDS", 0.0)
    cache.refresh(home, store.description, "app")
    asked: list[set[str]] = []
    real = FolderStore._regular
    monkeypatch.setattr(FolderStore, "_regular", staticmethod(lambda base, names: asked.append(set(names))
                                                              or real(base, names)))
    [late] = put_notes(store, "app", 1)
    folder = os.path.join(store.root, "projects", "app", "notes")
    os.symlink(os.path.join(folder, f"{late}.md"), os.path.join(folder, "20261130T000000000Z-linkedaa.md"))
    status = cache.refresh(home, store.description, "app", store=store)
    assert status.how == "listing" and status.added == [late]
    assert asked == [{f"{late}.md", "20261130T000000000Z-linkedaa.md"}]
    assert "20261130T000000000Z-linkedaa" not in cache.cached_ids(home, store.description, "app")
    assert len(cache.cached_ids(home, store.description, "app")) == 41


def test_a_second_write_in_the_granule_of_the_first_is_still_found(tmp_path, monkeypatch):
    # INV read-your-writes: a search right after a change waits until the folder time is FINE_SECONDS old
    # before it lists, so a second write in the same clock tick (one that leaves the folder's signature as
    # it was) lands before the listing and is found; the listing then settles, and the next search stats
    store = new_folder_store(tmp_path / "store")
    home = tmp_path / "home"
    put_notes(store, "app", 1)
    monkeypatch.setattr(dirwatch, "filesystem_type", lambda folder: "ext4")
    monkeypatch.setattr(dirwatch, "granule", lambda: dirwatch.FINE_SECONDS)  # the widest, whatever the tick here
    folder = os.path.join(store.root, "projects", "app", "notes")
    assert cache.refresh(home, store.description, "app").how == "listing"
    time.sleep(dirwatch.FINE_SECONDS + 0.05)
    [first] = put_notes(store, "app", 1)
    tick = dirwatch.signature(folder)
    real = dirwatch.signature
    monkeypatch.setattr(dirwatch, "signature", lambda f: tick if f == folder else real(f))  # as one tick leaves it
    pauses: list[float] = []
    second: list[str] = []
    real_sleep = time.sleep

    def pause(seconds: float) -> None:
        if not pauses:
            second.extend(put_notes(store, "app", 1))  # lands while the search waits
        pauses.append(seconds)
        real_sleep(seconds)

    monkeypatch.setattr(time, "sleep", pause)
    status = cache.refresh(home, store.description, "app")
    assert 0 < pauses[0] <= dirwatch.FINE_SECONDS
    assert status.how == "listing" and sorted(status.added) == sorted([first, *second])
    assert cache.refresh(home, store.description, "app").how == "unchanged (one stat)"


def test_the_kernels_folder_times_lag_the_clock_by_less_than_fine_seconds(tmp_path):
    # What FINE_SECONDS rests on (store/dirwatch.py): a folder's time is stamped from a clock never ahead
    # of time.time() and at most a tick behind it. Measured here, on the machine the suite runs on.
    if dirwatch.filesystem_type(str(tmp_path)) not in dirwatch.FINE_TYPES:
        pytest.skip(f"{tmp_path} is on {dirwatch.filesystem_type(str(tmp_path))}, whose times are not fine-grained")
    worst = 0
    for i in range(500):
        before = time.time_ns()
        (tmp_path / f"f{i}").touch()
        stamp = os.stat(tmp_path).st_mtime_ns
        after = time.time_ns()
        assert stamp <= after
        worst = max(worst, before - stamp)
    assert worst < dirwatch.FINE_SECONDS * 1e9 / 2, f"folder times lag the clock by up to {worst / 1e6:.1f} ms"


def test_network_and_unknown_filesystems_are_listed_on_every_search(tmp_path, monkeypatch):
    store = new_folder_store(tmp_path / "store")
    home = tmp_path / "home"
    put_notes(store, "app", 2)
    monkeypatch.setattr(dirwatch, "RACY_SECONDS", 0.0)
    monkeypatch.setattr(dirwatch, "filesystem_type", lambda folder: "nfs4")
    for _ in range(3):
        status = cache.refresh(home, store.description, "app")
        assert not status.stale and status.how == "listing (nfs4: folder times not trusted)"
    monkeypatch.setattr(dirwatch, "filesystem_type", lambda folder: "ext4")
    monkeypatch.setenv(dirwatch.ENV_CHECK, "list")
    cache.refresh(home, store.description, "app")
    assert cache.refresh(home, store.description, "app").how.startswith("listing")


def test_the_filesystem_type_comes_from_the_longest_mount_point_holding_the_folder(tmp_path):
    found = subprocess.run(["findmnt", "-n", "-o", "FSTYPE", "--target", str(tmp_path)],
                           capture_output=True, text=True).stdout.strip()
    assert dirwatch.filesystem_type(str(tmp_path)) == found
    assert dirwatch.filesystem_type("/proc/self") == "proc"
    assert not dirwatch.trusted_type("proc") and not dirwatch.trusted_type("fuse.sshfs")


def test_a_note_arriving_while_a_refresh_lists_is_found_by_the_next_refresh_and_never_dropped(tmp_path, monkeypatch):
    # INV read-your-writes, INV change-token: the folder is stat'ed before it is listed, so a note landing
    # during the listing moves the times past the token's (racy window off: this alone must catch it)
    monkeypatch.setattr(dirwatch, "RACY_SECONDS", 0.0)
    store = new_folder_store(tmp_path / "store")
    home = tmp_path / "home"
    put_notes(store, "app", 2)
    cache.refresh(home, store.description, "app")
    writer = FolderStore(store.root)
    late: list[str] = []
    real_names = FolderStore._names

    def names_then_another_machine_saves(self, prefix, base):
        listed = real_names(self, prefix, base)
        if not late:
            late.extend(put_notes(writer, "app", 1))
        return listed

    monkeypatch.setattr(FolderStore, "_names", names_then_another_machine_saves)
    put_notes(writer, "app", 1)  # a change, so the next refresh lists
    during = cache.refresh(home, store.description, "app")
    assert late and late[0] not in during.added  # it landed after the listing
    monkeypatch.undo()
    after = cache.refresh(home, store.description, "app")
    assert after.added == late and late[0] in cache.cached_ids(home, store.description, "app")


def test_a_note_another_process_caches_during_a_listing_is_not_pruned_by_it(tmp_path, monkeypatch):
    # INV cache-kept-on-failure: a listing that could not have seen a note never removes it
    store = new_folder_store(tmp_path / "store")
    home = tmp_path / "home"
    put_notes(store, "app", 1)
    cache.refresh(home, store.description, "app")
    fresh = document.build(body="saved while the other search listed", title="t", kind="note", project="app", agent="t")
    real_names = FolderStore._names

    def names_then_this_machine_saves(self, prefix, base):
        listed = real_names(self, prefix, base)
        time.sleep(0.01)
        FolderStore(store.root).put(document.note_path("app", fresh.id), fresh.render())
        cache.add_confirmed(home, store.description, "app", fresh.id, fresh.render())
        return listed

    monkeypatch.setattr(FolderStore, "_names", names_then_this_machine_saves)
    put_notes(FolderStore(store.root), "app", 1)
    status = cache.refresh(home, store.description, "app")
    assert fresh.id not in status.removed
    assert fresh.id in cache.cached_ids(home, store.description, "app")


def test_failed_listing_keeps_the_previous_cache_and_says_why(tmp_path):
    # INV cache-kept-on-failure
    drive = tmp_path / "drive"
    drive.mkdir()
    store = new_folder_store(drive / "store")
    home = tmp_path / "home"
    ids = put_notes(store, "app", 4)
    cache.refresh(home, store.description, "app")
    before = {i: cache.read_cached(home, store.description, "app", i) for i in ids}
    drive.rename(tmp_path / "unplugged")  # the store vanishes
    status = cache.refresh(home, store.description, "app")
    assert status.stale and status.error == "offline" and "could not check the store" in status.reason
    assert "last checked" in status.reason and status.checked_at is not None
    assert {i: cache.read_cached(home, store.description, "app", i) for i in ids} == before


def test_offline_mode_uses_the_cache_and_says_it_may_be_stale(tmp_path):
    store = new_folder_store(tmp_path / "store")
    home = tmp_path / "home"
    put_notes(store, "app", 1)
    never = cache.ensure_fresh(home, store.description, "app", max_age=0, offline=True)
    assert never.stale and "never refreshed" in never.reason
    cache.refresh(home, store.description, "app")
    status = cache.ensure_fresh(home, store.description, "app", max_age=0, offline=True)
    assert status.stale and "offline" in status.reason and status.checked_at is not None


def test_within_max_age_the_store_is_not_asked_and_the_answer_says_it_may_be_stale(tmp_path):
    store = new_folder_store(tmp_path / "store")
    home = tmp_path / "home"
    cache.refresh(home, store.description, "app")
    put_notes(store, "app", 1)
    skipped = cache.ensure_fresh(home, store.description, "app", max_age=3600)
    assert skipped.refreshed is False and skipped.stale and skipped.error == "not-checked"
    assert "max_age" in skipped.reason
    assert cache.ensure_fresh(home, store.description, "app", max_age=0).added != []


def test_hostile_listing_entries_never_escape_the_cache_folder(tmp_path):
    class HostileStore(FolderStore):
        def changes(self, prefix, token):
            found = super().changes(prefix, None)
            hostile = [Listed(p, 3) for p in ("projects/app/notes/../../../../evil.md", "projects/other/notes/x.md",
                                               "projects/app/notes/sub/deep.md", "projects/app/notes/.hidden.md")]
            return Changes(Changes.FULL, found.token, found.how, listing=found.listing + hostile)

    new_folder_store(tmp_path / "store")
    store = HostileStore(tmp_path / "store")
    home = tmp_path / "home"
    ids = put_notes(store, "app", 1)
    status = cache.refresh(home, store.description, "app", store=store)
    assert status.added == ids
    assert sorted(p.name for p in (home).rglob("*.md")) == [f"{ids[0]}.md"]


def test_an_interrupted_download_never_appears_as_a_complete_cached_note(tmp_path):
    # INV atomic-cache, INV change-token: kill a refresh mid-way, repeatedly; every cached note is whole,
    # and the next refresh, from the token the killed ones never replaced, brings the rest
    store = new_folder_store(tmp_path / "store")
    home = tmp_path / "home"
    put_notes(store, "app", 300, size=20000)
    script = (
        "import sys; from pathlib import Path; from agentmem.replica import cache; from agentmem.store.folder import FolderStore;"
        f"s = FolderStore({str(store.root)!r}); cache.refresh(Path({str(home)!r}), s.description, 'app')"
    )
    for delay in (0.15, 0.25, 0.35):
        proc = subprocess.Popen([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": str(REPO)})
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        for note_id in cache.cached_ids(home, store.description, "app"):
            cached = cache.read_cached(home, store.description, "app", note_id)
            assert cached == store.get(document.note_path("app", note_id))
    final = cache.refresh(home, store.description, "app")
    assert not final.stale
    assert len(cache.cached_ids(home, store.description, "app")) == 300


def test_records_are_found_among_the_new_names_even_with_a_record_named_file_in_the_notes_cache(tmp_path):
    # INV read-your-writes: a refresh looks for the store's records among the names the notes cache lacks (a
    # walk of 100k names cost 26 ms a change); a record-named file in the notes cache, which could hide one
    # there, makes it look at every listed name instead
    from agentmem.note import records

    store = new_folder_store(tmp_path / "store")
    home = tmp_path / "home"
    first, second = put_notes(store, "app", 2)
    cache.refresh(home, store.description, "app")
    pdir = cache.project_dir(home, store.description, "app")
    retract = records.build("retract", first, "app", "t")
    store.put(retract.path(), retract.render())
    cache.refresh(home, store.description, "app")
    assert records.cached_files(pdir) == {retract.file}
    pin = records.build("pin", second, "app", "t")
    store.put(pin.path(), pin.render())
    with open(os.path.join(pdir, "notes", pin.file), "wb") as fh:  # a stray copy, where no record belongs
        fh.write(pin.render())
    cache.refresh(home, store.description, "app")
    assert records.cached_files(pdir) == {retract.file, pin.file}
