"""A search where the cache cannot be written (an agent's read-only sandbox) still answers from the store.

The machine folder is made read-only the way a sandbox makes it: for a user, its permission bits; for
root (who writes through those), a read-only bind mount in a private mount namespace (`unshare -m`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.fixtures_core import missing_prerequisite


def _read_only_run(m, folder, *args, cwd):
    """`agentmem ARGS` on machine `m` with `folder` read-only; returns (status, stdout, stderr)."""
    argv = [sys.executable, "-m", "agentmem", *map(str, args)]
    if os.geteuid() == 0:
        if shutil.which("unshare") is None:
            missing_prerequisite("unshare (util-linux) makes a read-only folder for root")
        script = 'mount --bind -o ro "$0" "$0" && exec "$@"'
        argv = ["unshare", "-m", "sh", "-c", script, str(folder), *argv]
        proc = subprocess.run(argv, cwd=cwd, env=m.env, capture_output=True, text=True, timeout=120)
    else:
        modes = {}
        for root, dirs, _ in os.walk(folder):
            for d in [root, *(os.path.join(root, n) for n in dirs)]:
                modes.setdefault(d, os.stat(d).st_mode & 0o7777)
        try:
            for d, mode in modes.items():
                os.chmod(d, mode & ~0o222)
            proc = subprocess.run(argv, cwd=cwd, env=m.env, capture_output=True, text=True, timeout=120)
        finally:
            for d, mode in modes.items():
                os.chmod(d, mode)
    if "mount:" in proc.stderr and proc.returncode:
        missing_prerequisite(f"a read-only bind mount: {proc.stderr.strip()}")
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture
def pair(machines, tmp_path):
    checkout = tmp_path / "app"
    checkout.mkdir()
    a, b = machines("a", {checkout: "app"}), machines("b", {checkout: "app"})
    _, first, _ = a.json("save", "--title", "Zebra first", input="the zebra stripes are cached on B\n", cwd=checkout)
    status, out, err = b.json("search", "zebra", cwd=checkout)
    assert status == 0 and [r["id"] for r in out["results"]] == [first["id"]], (out, err)
    return a, b, checkout, first["id"]


@pytest.mark.parametrize("mode", ["ranked", "literal", "hybrid"])
def test_a_search_in_a_read_only_machine_folder_finds_a_note_another_machine_saved_and_says_nothing_was_cached(
        pair, mode):
    # INV loud-unwritable, INV read-your-writes: the store answered, so the answer is current (stale false)
    a, b, checkout, first = pair
    _, giraffe, _ = a.json("save", "--title", "Giraffe from A", input="the giraffe note is new to B\n", cwd=checkout)
    status, text, err = _read_only_run(b, b.home, "search", "giraffe", "--mode", mode, "--json", cwd=checkout)
    out = json.loads(text)
    assert status == 0, (out, err)
    assert out["results"][0]["id"] == giraffe["id"], out  # (hybrid may add the zebra note below it)
    assert out["stale"] is False and out["stale_reason"] is None, out
    assert out["not_cached"].startswith("nothing was cached: cannot write the cache in "), out
    assert "1 note(s) read from the store for this answer only" in out["not_cached"]
    assert "--sandbox workspace-write" in out["not_cached"]  # the fix, said with the cause
    assert not any(p.name.startswith(giraffe["id"]) for p in b.home.rglob("*.md"))  # nothing was written

    status, text, err = _read_only_run(b, b.home, "search", "giraffe", "--mode", mode, cwd=checkout)
    assert status == 0 and "Giraffe from A" in text, (text, err)
    assert "warning: nothing was cached: cannot write the cache in " in text and "may be stale" not in text

    status, out, err = b.json("search", "giraffe", "--mode", mode, cwd=checkout)  # writable again: cached now
    assert status == 0 and out["results"][0]["id"] == giraffe["id"] and out["not_cached"] is None
    assert any(p.name.startswith(giraffe["id"]) for p in (b.home / "cache").rglob("*.md"))


def test_a_read_only_search_finds_the_cached_notes_and_the_new_ones_together_newest_first(pair):
    # INV loud-unwritable
    a, b, checkout, first = pair
    _, second, _ = a.json("save", "--title", "Zebra second", input="another zebra, not cached on B\n", cwd=checkout)
    status, text, err = _read_only_run(b, b.home, "search", "zebra", "--json", cwd=checkout)
    out = json.loads(text)
    assert status == 0 and out["stale"] is False, (out, err)
    assert {r["id"] for r in out["results"]} == {first, second["id"]}, out
    status, text, err = _read_only_run(b, b.home, "search", "--json", cwd=checkout)  # an empty query: most recent
    assert [r["id"] for r in json.loads(text)["results"]] == [second["id"], first], (text, err)


def test_a_note_gone_from_the_store_is_not_listed_by_a_read_only_search_although_its_cached_copy_stays(
        pair, store_dir):
    # INV loud-unwritable, INV cache-kept-on-failure: the cached copy is not pruned by a search that cannot write
    a, b, checkout, first = pair
    [stored] = store_dir.rglob(f"{first}.md")
    stored.unlink()  # a note removed from the store (by hand: notes are append-only for agentmem)
    status, text, err = _read_only_run(b, b.home, "search", "zebra", "--json", cwd=checkout)
    out = json.loads(text)
    assert status == 0 and out["results"] == [] and out["stale"] is False, (out, err)
    assert out["not_cached"].startswith("nothing was cached: cannot write the cache in "), out
    assert list((b.home / "cache").rglob(f"{first}.md"))  # still cached: the next writable refresh prunes it
    status, out, err = b.json("search", "zebra", cwd=checkout)
    assert status == 0 and out["results"] == [] and not list((b.home / "cache").rglob(f"{first}.md"))


def test_a_note_purged_elsewhere_stays_out_of_a_read_only_search_though_its_purge_could_not_be_cached(pair):
    # INV loud-unwritable: what the store says must not exist is not shown from memory either
    a, b, checkout, first = pair
    _, second, _ = a.json("save", "--title", "Zebra leaked", input="a zebra note to purge\n", cwd=checkout)
    status, out, _ = b.json("search", "zebra", cwd=checkout)  # B has cached it...
    assert second["id"] in [r["id"] for r in out["results"]]
    status, out, err = a.json("purge", second["id"], "--yes", "--reason", "leaked", cwd=checkout)  # ...A purges it
    assert status == 0, (out, err)
    status, text, err = _read_only_run(b, b.home, "search", "zebra", "--json", cwd=checkout)
    out = json.loads(text)
    assert status == 0 and out["stale"] is False and out["not_cached"], (out, err)
    assert [r["id"] for r in out["results"]] == [first], out
    assert list((b.home / "cache").rglob(f"{second['id']}.md"))  # still on disk: the sandbox could not remove it
