"""A corrected note says so in search results and is listed below its correction; both stay listed."""

from __future__ import annotations

import pytest

from agentmem.errors import EXIT_PENDING
from agentmem.search import corrections

BODY = "The release build signs artifacts with the staging key before upload."


def _save(m, cwd, body, *args):
    status, out, err = m.json("save", *args, input=body, cwd=cwd)
    assert status in (0, EXIT_PENDING), err
    return out["id"]


def _ids(m, cwd, *args):
    status, out, err = m.json("search", *args, cwd=cwd)
    assert status == 0, err
    return out["results"]


@pytest.fixture
def app(machines, tmp_path):
    checkout = tmp_path / "app"
    checkout.mkdir()
    return machines("laptop", {checkout: "app"}), checkout


@pytest.mark.parametrize("query", [["release build signs artifacts"], ["staging key", "--mode", "literal"], []])
def test_a_corrected_note_is_marked_and_listed_below_its_correction_in_every_mode(app, query):
    # INV corrections-visible
    m, cwd = app
    old = _save(m, cwd, BODY, "--title", "Release signing")
    fix = _save(m, cwd, BODY.replace("staging", "production") + " (the staging key was retired)",
                "--title", "Release signing", "--corrects", old)
    results = _ids(m, cwd, *query)
    assert [r["id"] for r in results][:2] == [fix, old]
    assert results[1]["corrected_by"] == [fix] and "corrected_by" not in results[0]
    assert results[0]["corrects"] == old
    text = m.run("search", *query, cwd=cwd)[1]
    assert text.index(fix) < text.index(old) and f"[CORRECTED by {fix}: read that first]" in text


def test_a_correction_outside_the_top_results_is_pulled_in_above_the_note_it_corrects(app):
    m, cwd = app
    old = _save(m, cwd, BODY, "--title", "Release signing")
    fix = _save(m, cwd, "Use the production key.", "--title", "Key rotation", "--corrects", old)
    for i in range(4):
        _save(m, cwd, f"{BODY} Variant {i} of the same words.", "--title", f"Release signing {i}")
    results = _ids(m, cwd, "release build signs artifacts staging", "--limit", "3")
    ids = [r["id"] for r in results]
    assert len(ids) == 3 and fix in ids and old in ids and ids.index(fix) == ids.index(old) - 1


def test_corrections_that_arrive_later_or_wait_for_upload_mark_the_note_too(machines, tmp_path, store_dir):
    checkout = tmp_path / "app"
    checkout.mkdir()
    laptop, desktop = machines("laptop", {checkout: "app"}), machines("desktop", {checkout: "app"})
    old = _save(laptop, checkout, BODY, "--title", "Release signing")
    assert "corrected_by" not in _ids(laptop, checkout, "staging key")[0]  # the pairs file now exists
    fix = _save(desktop, checkout, "Use the production key.", "--title", "Key rotation", "--corrects", old)
    results = _ids(laptop, checkout, "staging key", "--refresh")  # the correction arrives in laptop's cache
    assert [r["id"] for r in results] == [fix, old] and results[1]["corrected_by"] == [fix]

    # A correction saved while the store is unreachable is this machine's pending note: it counts.
    store_dir.rename(tmp_path / "store-away")
    store_dir.write_text("an unmounted drive")  # the same store, unreachable
    pending_fix = _save(laptop, checkout, "Staging key: never again.", "--title", "Again", "--corrects", old)
    results = _ids(laptop, checkout, "staging key", "--offline")
    ids = [r["id"] for r in results]
    assert ids.index(pending_fix) == ids.index(old) - 1 and fix in ids  # below its newest correction
    assert results[ids.index(old)]["corrected_by"] == [pending_fix, fix]


class R:
    def __init__(self, id):
        self.id, self.corrected_by = id, []


def test_chains_settle_and_the_limit_never_drops_a_correction_or_what_it_corrects():
    # a corrected by b, b corrected by c; x and y unrelated. Ranked: a, x, b, y.
    by = corrections.corrected_by({"b": "a", "c": "b"})
    out = corrections.mark([R("a"), R("x"), R("b"), R("y")], by, lambda i: R(i), limit=4)
    order = [r.id for r in out]
    assert order.index("c") < order.index("b") < order.index("a") and len(order) == 4 and "y" not in order
    assert {r.id: r.corrected_by for r in out}["a"] == ["b"]
