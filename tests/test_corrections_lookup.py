"""A search finds the corrections of its results by their IDs in the index, not by reading every pair of the
project (issue W, item 2: 8.5 ms a search at 100k notes with no correction at all)."""

from __future__ import annotations

import sqlite3

from agentmem.search import corrections, ranked
from agentmem.search import index as rindex
from tests.test_ranked import pdir, write_note  # noqa: F401 - the fixture, and notes placed as a refresh does


def _plan(idx: rindex.Index, sql: str, args: list[str]) -> str:
    return " ".join(str(row[-1]) for row in idx.conn.execute("EXPLAIN QUERY PLAN " + sql, args))


def test_a_search_asks_the_index_for_its_results_corrections_alone(tmp_path, monkeypatch):
    # INV corrections-visible: the correction of a result is still pulled in and marked
    from pathlib import Path

    from agentmem.replica import cache
    from agentmem.search import find
    from agentmem.store.base import StoreDescription

    store = StoreDescription("folder", str(tmp_path / "store"))
    notes_dir = Path(cache.notes_dir(tmp_path, store, "app"))
    notes_dir.mkdir(parents=True)
    pdir = notes_dir.parent
    old = write_note(pdir, "the deploy key lives in the vault")
    fix = write_note(pdir, "where keys live: the new vault", minutes=1, corrects=old)
    for i in range(30):
        other = write_note(pdir, f"unrelated note {i}", minutes=2 + i)
        write_note(pdir, f"unrelated note {i} again", minutes=40 + i, corrects=other)
    ranked.rank(pdir, "deploy")  # builds the index

    def whole(self):
        raise AssertionError("a search read every correction of the project")

    monkeypatch.setattr(rindex.Index, "corrections", whole)
    asked = []
    real = rindex.Index.correcting
    monkeypatch.setattr(rindex.Index, "correcting", lambda self, targets: asked.append(set(targets))
                        or real(self, targets))
    found = find.find(tmp_path, store, "app", "deploy", 5)
    assert [(r.id, r.corrected_by) for r in found] == [(fix, []), (old, [fix])]
    assert asked == [{old}, {fix}]  # the result, then the note correcting it (a chain could go on)


def test_corrections_follow_chains_pending_notes_and_leave_hidden_ones_out(pdir):  # noqa: F811
    a = write_note(pdir, "first word on the cache key")
    b = write_note(pdir, "second word on the cache key", minutes=1, corrects=a)
    c = write_note(pdir, "third word on the cache key", minutes=2, corrects=b)
    ranked.rank(pdir, "cache")
    pending = "20990101T000000000Z-pendingx"
    assert corrections.corrections_of(str(pdir), [a]) == {a: [b], b: [c]}
    assert corrections.corrections_of(str(pdir), [a], {pending: a}) == {a: [pending, b], b: [c]}
    assert corrections.corrections_of(str(pdir), [a], {pending: a}, {b}) == {a: [pending]}
    assert corrections.corrections_of(str(pdir), [c]) == {}


def test_the_lookup_uses_an_index_on_the_corrected_note_which_an_older_index_gains(pdir):  # noqa: F811
    a = write_note(pdir, "the note")
    write_note(pdir, "its correction", minutes=1, corrects=a)
    ranked.rank(pdir, "note")
    idx = rindex.open_index(str(pdir), ranked.rebuild)
    try:
        idx.conn.execute("DROP INDEX corrects_target")  # as an index written before it was added
        sql = ("SELECT docs.id, corrects.target FROM corrects CROSS JOIN docs ON docs.num = corrects.num "
               "WHERE corrects.target IN (?)")
        assert "corrects_target" not in _plan(idx, sql, [a])
        assert len(idx.correcting([a])) == 1
        assert "INDEX corrects_target" in _plan(idx, sql, [a])
    finally:
        idx.close()


def test_a_read_only_index_still_answers_the_corrections_of_a_result(pdir):  # noqa: F811
    a = write_note(pdir, "the note")
    fix = write_note(pdir, "its correction", minutes=1, corrects=a)
    ranked.rank(pdir, "note")
    idx = rindex.open_index(str(pdir), ranked.rebuild)
    idx.conn.execute("DROP INDEX corrects_target")
    idx.close()
    conn = sqlite3.connect(f"file:{rindex.index_path(pdir)}?mode=ro", uri=True)
    try:
        ro = rindex.Index(conn, str(pdir))
        assert ro.correcting([a]) == [(fix, a)]
    finally:
        conn.close()
