"""Chaos on both stores: 8 writers x 50 notes with random faults and kills, then retries.

The store must hold exactly the notes written, each once and byte-identical, and a
search from a fresh machine must find every one. The harness is bench/chaos.py;
its figures are printed. # INV nothing-lost # INV same-bytes-retry # INV append-only
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("bench_chaos", Path(__file__).resolve().parent.parent / "bench" / "chaos.py")
chaos = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(chaos)

EXPECTED_FAULTS = {
    "folder": {"refused", "http-500", "reply-lost-after-apply", "killed"},
    "bucket": {"refused (outages)", "http-500", "reply-lost", "reply-lost-after-apply", "killed"},
}


@pytest.mark.slow
@pytest.mark.parametrize("store", ["folder", "bucket"])
def test_chaos_with_faults_and_kills_loses_and_duplicates_no_note(store, tmp_path, capsys):
    fig = chaos.run(store, writers=8, notes=50, seed=20261130, work=tmp_path / "chaos")
    with capsys.disabled():
        print("\n" + chaos.format_figures(fig))
    # The chaos happened: every kind of fault struck, and retries were needed.
    struck = {kind for kind, n in fig["faults_injected"].items() if n > 0}
    assert EXPECTED_FAULTS[store] <= struck, fig["faults_injected"]
    assert fig["saves_left_pending"] > 0 and fig["retries"] > 0 and fig["writer_restarts_after_kill"] > 0
    # And nothing was lost, doubled or changed.
    assert fig["problems"] == []
    assert fig["notes_written"] == 400
    assert fig["in_store"] == 400
    assert fig["lost"] == 0
    assert fig["duplicated"] == 0
    assert fig["changed_bytes"] == 0
    assert fig["stray_objects"] == 0
    assert fig["pending_left"] == 0
    assert fig["search_found"] == 400
