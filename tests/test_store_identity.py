"""A store proves it is the store: a vanished, replaced or foreign folder store is unreachable, never empty."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from agentmem import config
from agentmem.errors import EXIT_PENDING
from agentmem.setup import runner
from agentmem.store import identity
from agentmem.store.base import StoreDescription
from agentmem.store.folder import MARKER, create_store, read_marker
from tests.fixtures_core import make_machine


@pytest.fixture
def two(tmp_path):
    """Machines a and b on a marked folder store on a "drive", both having searched it once."""
    drive = tmp_path / "drive"
    store = drive / "agent-memory"
    create_store(str(store))
    checkout = tmp_path / "src" / "app"
    checkout.mkdir(parents=True)
    a = make_machine(tmp_path, "a", store, {checkout: "app"})
    b = make_machine(tmp_path, "b", store, {checkout: "app"})
    for m in (a, b):
        m.checkout = checkout
    _, saved, _ = a.json("save", "--title", "kept", input="a note the cache must keep\n", cwd=checkout)
    status, out, err = b.json("search", "kept", cwd=checkout)
    assert status == 0 and [r["id"] for r in out["results"]] == [saved["id"]], (out, err)
    b.saved, b.store = saved["id"], store
    return a, b


def _search(m, *args):
    status, out, err = m.json("search", "kept", *args, cwd=m.checkout)
    assert status == 0, err
    return out


def _assert_unreachable_and_nothing_lost(a, b, why: str) -> None:
    out = _search(b)
    assert out["stale"] is True and why in out["stale_reason"], out
    assert [r["id"] for r in out["results"]] == [b.saved]  # INV cache-kept-on-failure: nothing pruned
    status, text, _ = b.run("search", "kept", cwd=b.checkout)
    assert text.startswith("warning: results may be stale - could not check the store")
    status, saved, err = a.json("save", "--title", "later", input="saved while the store is away\n", cwd=a.checkout)
    assert status == EXIT_PENDING and saved["status"] == "pending", (saved, err)  # INV nothing-lost


def test_a_store_folder_gone_while_its_parent_is_there_is_unreachable_and_never_recreated(two):
    # INV store-identity: an unmounted drive leaves its mount point; the store is not "empty"
    a, b = two
    shutil.move(b.store, b.store.parent.parent / "elsewhere")
    _assert_unreachable_and_nothing_lost(a, b, "is not there")
    assert not b.store.exists()  # the save did not recreate the folder inside the mount point


def test_a_store_folder_replaced_by_an_empty_one_is_unreachable(two):
    # INV store-identity
    a, b = two
    shutil.move(b.store, b.store.parent.parent / "elsewhere")
    b.store.mkdir()
    _assert_unreachable_and_nothing_lost(a, b, f"has no {MARKER} marker")
    assert os.listdir(b.store) == []  # nothing written into the impostor


@pytest.mark.parametrize("marker", [
    json.dumps({"agentmem": "store", "id": "0123456789abcdef0123456789abcdef"}),
    "not json at all",
    json.dumps({"agentmem": "store", "id": "../../etc"}),
])
def test_a_store_folder_with_a_foreign_marker_is_unreachable(two, marker):
    # INV store-identity: another store's marker (another drive mounted there), or one agentmem never wrote
    a, b = two
    (b.store / MARKER).write_text(marker)
    _assert_unreachable_and_nothing_lost(a, b, "marker" if "agentmem" not in marker or ".." in marker
                                         else "is another store")


def test_the_first_machine_to_prove_a_store_records_it_and_then_expects_it(two):
    a, b = two
    desc = StoreDescription("folder", str(b.store))
    assert identity.recorded(b.home, desc) == read_marker(str(b.store))
    assert identity.recorded(a.home, desc) == read_marker(str(b.store))


def test_a_store_made_before_markers_keeps_working_until_setup_marks_it(tmp_path):
    store = tmp_path / "old-store"
    store.mkdir()  # no marker: made by an earlier agentmem
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = make_machine(tmp_path, "m", store, {checkout: "app"})
    status, saved, _ = m.json("save", "--title", "old", input="an old store still takes notes\n", cwd=checkout)
    assert status == 0 and saved["status"] == "saved"
    status, out, _ = m.json("search", "old", cwd=checkout)
    assert out["stale"] is False and [r["id"] for r in out["results"]] == [saved["id"]]
    assert not (store / MARKER).exists()  # only setup marks a store
    report = runner.SetupReport(str(m.home))
    assert runner._store_step(report, m.home, config.load(m.home), 5)
    assert report.steps[-1].status == "changed" and "marked" in report.steps[-1].detail
    desc = StoreDescription("folder", str(store))
    assert identity.recorded(m.home, desc) == read_marker(str(store)) is not None


def _setup_store(m, *, new_store: bool = False):
    report = runner.SetupReport(str(m.home))
    ok = runner._store_step(report, m.home, config.load(m.home), 5, new_store)
    return ok, report.steps[-1], report.exit_code


def test_setup_creates_a_missing_folder_store_only_on_a_machines_first_setup_or_when_told(tmp_path):
    store = tmp_path / "drive" / "agent-memory"
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = make_machine(tmp_path, "m", store, {checkout: "app"})
    ok, step, _ = _setup_store(m)
    assert ok and step.status == "changed" and "created folder store" in step.detail  # the first setup
    assert read_marker(str(store)) is not None
    m.json("search", cwd=checkout)
    shutil.rmtree(store)  # the drive is not mounted at the next setup (copier update runs it)
    ok, step, code = _setup_store(m)
    assert not ok and step.status == "failed" and "no new one was created" in step.detail and code == 7
    assert "agentmem setup --new-store" in step.detail and not store.exists()
    ok, step, _ = _setup_store(m, new_store=True)
    assert ok and "created folder store" in step.detail and store.is_dir()


def test_setup_refuses_another_store_at_the_location_unless_told_it_is_new(tmp_path):
    store = tmp_path / "agent-memory"
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = make_machine(tmp_path, "m", store, {checkout: "app"})
    assert _setup_store(m)[0]
    shutil.rmtree(store)
    create_store(str(store))  # another store now sits at the path
    ok, step, code = _setup_store(m)
    assert not ok and "is another store" in step.detail and code == 7
    ok, step, _ = _setup_store(m, new_store=True)
    assert ok and identity.recorded(m.home, StoreDescription("folder", str(store))) == read_marker(str(store))
    status, out, _ = m.json("search", cwd=checkout)
    assert status == 0 and out["stale"] is False
