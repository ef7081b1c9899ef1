"""`search ""` (the most recent notes) is served from the index's creation times: it answers exactly what a
scan of every note answers (pending notes in, retracted and purged ones out, corrections beside what they
correct, the `more` count) and reads only the notes it lists."""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime

from agentmem import config
from agentmem.memory import recall
from agentmem.note import document
from agentmem.replica import cache
from agentmem.search import find, index


def _save(m, text: str, *extra: str) -> str:
    status, out, err = m.json("save", "--title", text, "--text", text, *extra, cwd=m.checkout)
    assert status in (0, 10), (out, err)
    return out["id"]


def _recent(m, *extra: str) -> dict:
    status, out, err = m.json("search", "", "--offline", *extra, cwd=m.checkout)
    assert status == 0, (out, err)
    return {"ids": [(r["id"], r["pending"], r.get("corrects"), r.get("retracted") is not None)
                    for r in out["results"]], "more": out["more"]}


def _tied_notes(store_dir, count: int) -> list[str]:
    """Notes written straight into the store, all created in the same millisecond (ties sort by ID)."""
    folder = store_dir / "projects" / "app" / "notes"
    folder.mkdir(parents=True, exist_ok=True)
    when = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    out = []
    for i in range(count):
        n = document.build(body=f"tied {i}", title=f"tied {i}", kind="note", project="app", agent="other", now=when)
        (folder / f"{n.id}.md").write_bytes(n.render())
        out.append(n.id)
    return out


def test_recent_notes_from_the_index_are_the_ones_a_scan_of_every_note_lists(laptop, store_dir):
    # INV index-derived, INV corrections-visible
    m = laptop
    first = _save(m, "first finding")
    saved = [_save(m, f"finding {i}") for i in range(4)]
    _save(m, "first finding, corrected", "--corrects", first)
    assert m.run("retract", saved[1], "--reason", "wrong", cwd=m.checkout)[0] == 0
    assert m.run("purge", saved[2], "--reason", "leaked", "--yes", cwd=m.checkout)[0] == 0
    _tied_notes(store_dir, 3)
    assert m.run("search", "finding", cwd=m.checkout)[0] == 0  # brings the tied notes into the cache
    os.rename(store_dir, str(store_dir) + ".away")  # the drive is gone: the next saves stay pending
    _save(m, "pending finding")
    _save(m, "pending correction", "--corrects", saved[0])
    os.rename(str(store_dir) + ".away", store_dir)
    pdir = cache.project_dir(m.home, config.load(m.home).store, "app")
    index.discard(pdir)
    cases = [(), ("--limit", "1"), ("--limit", "3"), ("--limit", "50"), ("--include-retracted", "--limit", "4")]
    scanned = {case: _recent(m, "--mode", "literal", *case) for case in cases}  # no index: every note read
    assert not os.path.exists(index.index_path(pdir))
    served = {case: _recent(m, "--mode", "ranked", *case) for case in cases}
    assert os.path.exists(index.index_path(pdir))
    assert served == scanned
    assert _recent(m, "--mode", "literal") == scanned[()]  # literal mode uses the index once there is one
    everything = scanned[("--limit", "50")]
    assert everything["more"] == 0 and len(everything["ids"]) == 9  # 11 saved or written, 1 retracted, 1 purged
    assert any(pending for _, pending, _, _ in everything["ids"])
    assert scanned[("--limit", "3")]["more"] == 6


def test_listing_recent_notes_reads_only_the_notes_it_lists(laptop, store_dir):
    m = laptop
    _tied_notes(store_dir, 60)
    cfg = config.load(m.home)
    recall.search(str(m.home), cfg, "app", "tied", limit=5)  # the cache and its index
    ndir = cache.notes_dir(m.home, cfg.store, "app")
    opened: list[str] = []
    watching = [True]

    def audit(event: str, args) -> None:
        if watching[0] and event == "open" and isinstance(args[0], str) and args[0].startswith(ndir + os.sep):
            opened.append(args[0])

    sys.addaudithook(audit)
    try:
        out = recall.search(str(m.home), cfg, "app", "", limit=5, offline=True)
    finally:
        watching[0] = False
    assert len(out["results"]) == 5 and out["more"] == 55
    assert len(opened) <= 5, f"{len(opened)} notes read to list 5"


def test_recent_notes_without_a_usable_index_are_still_listed(laptop, store_dir):
    m = laptop
    tied = _tied_notes(store_dir, 4)
    cfg = config.load(m.home)
    recall.search(str(m.home), cfg, "app", "tied", limit=5)
    pdir = cache.project_dir(m.home, cfg.store, "app")
    index.discard(pdir)
    os.makedirs(index.index_path(pdir))  # not a file: the index cannot be opened or built
    found, total = find.recent(str(m.home), cfg.store, "app", 3)
    assert [r.id for r in found] == sorted(tied, reverse=True)[:3] and total == 4  # ties: the higher ID first


def test_setup_verification_notes_stay_out_of_the_recent_list_and_its_count_and_a_search_still_finds_them(
        machines, tmp_path):
    # Three machines set up on one store: their verification notes once took 3 of the 5 places of `search ""`.
    checkout = tmp_path / "app"
    checkout.mkdir()
    desks = [machines(name, {checkout: "app"}) for name in ("a", "b", "c")]
    for m in desks:
        m.checkout = checkout
        status, out, err = m.json("bucket", "verify", cwd=checkout)
        assert status == 0 and out["id"].startswith("setup-verification-"), (out, err)
    m = desks[0]
    mine = [_save(m, "the build cache lives in /var/cache/ci"), _save(m, "the deploy needs the release branch")]
    assert m.run("sync", cwd=checkout)[0] == 0  # the other machines' setup notes in this one's cache too
    listed = _recent(m, "--limit", "5")
    assert [i for i, *_ in listed["ids"]] == mine[::-1] and listed["more"] == 0
    for pdir in m.home.rglob("ranked.sqlite"):  # without an index: the scan answers the same
        pdir.unlink()
    scanned = _recent(m, "--limit", "5", "--mode", "literal")
    assert [i for i, *_ in scanned["ids"]] == mine[::-1] and scanned["more"] == 0
    status, out, _ = m.json("search", "Memory setup verification", "--offline", cwd=checkout)
    assert status == 0 and sum(r["id"].startswith("setup-verification-") for r in out["results"]) == 3
