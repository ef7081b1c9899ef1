"""What `search` and `read` say about how current they are, and the progress of a long first sync."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys

from agentmem.note import document
from tests.fixtures_core import new_folder_store


def _store_with(machines, tmp_path, count: int = 0):
    store = tmp_path / "shared-store"
    new_folder_store(store)
    checkout = tmp_path / "app"
    checkout.mkdir()
    folder = store / "projects" / "app" / "notes"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        note = document.build(body=f"bulk note {i}", title=f"bulk {i}", kind="note", project="app", agent="x")
        (folder / f"{note.id}.md").write_bytes(note.render())
    return checkout


def test_a_note_saved_on_one_machine_is_found_by_the_next_search_on_another_even_right_after_it_searched(
        machines, tmp_path):
    # INV read-your-writes: no staleness window, and the answer never claims to be current when it is not
    checkout = _store_with(machines, tmp_path)
    a, b = machines("a", {checkout: "app"}), machines("b", {checkout: "app"})
    status, out, _ = b.json("search", "zebra", cwd=checkout)
    assert status == 0 and out["results"] == [] and out["stale"] is False
    _, saved, _ = a.json("save", "--title", "zebra", input="the zebra migration is done\n", cwd=checkout)
    status, out, _ = b.json("search", "zebra", cwd=checkout)
    assert [r["id"] for r in out["results"]] == [saved["id"]]
    assert out["stale"] is False and out["refreshed"] is True and out["checked_at"].endswith("Z")


def test_text_output_warns_only_when_the_answer_could_miss_notes(machines, tmp_path):
    checkout = _store_with(machines, tmp_path, count=1)
    m = machines("m", {checkout: "app"})
    status, text, _ = m.run("search", "bulk", cwd=checkout)
    assert status == 0 and "warning" not in text
    status, text, _ = m.run("search", "bulk", "--offline", cwd=checkout)
    assert text.startswith("warning: results may be stale - offline mode: cache last refreshed")
    m.write_config((m.home / "config.toml").read_text() + "\n[cache]\nmax_age = 3600\n")
    status, out, _ = m.json("search", "bulk", cwd=checkout)
    assert out["stale"] is True and out["stale_error"] == "not-checked" and "max_age" in out["stale_reason"]
    status, text, _ = m.run("search", "bulk", cwd=checkout)
    assert text.startswith("warning: results may be stale - the store was not asked")


def test_reading_an_id_the_cache_lacks_first_brings_the_cache_up_to_date(machines, tmp_path):
    # INV read-your-writes, for read: even within max_age
    checkout = _store_with(machines, tmp_path)
    a, b = machines("a", {checkout: "app"}), machines("b", {checkout: "app"})
    b.write_config((b.home / "config.toml").read_text() + "\n[cache]\nmax_age = 3600\n")
    b.json("search", cwd=checkout)
    _, first, _ = a.json("save", "--title", "first", input="one\n", cwd=checkout)
    _, second, _ = a.json("save", "--title", "second", input="two\n", cwd=checkout)
    status, out, err = b.json("read", second["id"], cwd=checkout)
    assert status == 0 and out["source"] == "cache" and out["refreshed"] is True and out["stale"] is False, err
    status, out, _ = b.json("search", "--offline", cwd=checkout)
    assert {r["id"] for r in out["results"]} == {first["id"], second["id"]}  # what changed came with it
    status, out, _ = b.json("read", first["id"], cwd=checkout)
    assert out["source"] == "cache" and out["refreshed"] is False  # cached: within max_age, not asked
    assert out["stale"] is True and out["stale_error"] == "not-checked"  # a retraction made since could be missing


def _search_with_stderr_on_a_terminal(m, checkout, *args) -> str:
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "agentmem", "search", *args], cwd=checkout, env=m.env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    proc.communicate(timeout=120)
    os.close(master)
    assert proc.returncode == 0, seen
    return seen.decode()


def test_a_long_first_sync_shows_a_count_on_a_terminal_and_nothing_in_json_or_a_pipe(machines, tmp_path):
    checkout = _store_with(machines, tmp_path, count=250)
    shown = machines("tty", {checkout: "app"})
    # A search catches up within its budget (a tenth of a second), so how far it gets depends on the machine's
    # load; what it must do is show the count on a terminal.
    assert re.search(r"syncing notes from the store: \d+/250", _search_with_stderr_on_a_terminal(shown, checkout, "bulk"))
    in_json = machines("json", {checkout: "app"})
    assert "syncing" not in _search_with_stderr_on_a_terminal(in_json, checkout, "bulk", "--json")
    piped = machines("pipe", {checkout: "app"})
    status, _, err = piped.run("search", "bulk", cwd=checkout)
    assert status == 0 and err == ""
