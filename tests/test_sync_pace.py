"""`agentmem sync` at close to the disk's pace (issue W, item 3): a sync reads the store's next batch while it
screens and writes this one, and screening many notes builds each pattern once (docs/benchmarks.md)."""

from __future__ import annotations

import threading

from agentmem import config
from agentmem.memory import sync
from agentmem.replica import cache, redacted_copies
from agentmem.safety import credentials, tokens
from agentmem.store.folder import FolderStore
from tests.fixtures_core import new_folder_store
from tests.test_cache import put_notes


def test_a_sync_reads_the_next_batch_from_the_store_while_it_writes_the_notes_of_this_one(laptop, store_dir,
                                                                                            monkeypatch):
    # INV atomic-cache, INV change-token: every note still arrives whole, newest first, and the token is kept
    new_folder_store(store_dir)
    ids = put_notes(FolderStore(store_dir), "app", 3 * cache.FETCH_BATCH)
    cfg = config.load(laptop.home)
    written = threading.Event()  # a note put into the cache since the batch being read began
    overlapped: list[bool] = []
    order: list[str] = []
    real_get_many, real_put = FolderStore._get_many, redacted_copies.put

    def get_many(self, targets, limit):
        written.clear()
        if overlapped or order:  # not the first batch: was a note of the one before written meanwhile?
            overlapped.append(written.wait(5))
        return real_get_many(self, targets, limit)

    def put(pdir, note_id, data, **kw):
        order.append(note_id)
        real_put(pdir, note_id, data, **kw)
        written.set()

    monkeypatch.setattr(FolderStore, "_get_many", get_many)
    monkeypatch.setattr(redacted_copies, "put", put)
    done = sync.sync(str(laptop.home), cfg, "app")
    assert done["notes"] == len(ids) and done["added"] == len(ids) and not done["stale"]
    assert overlapped and all(overlapped), overlapped
    assert order == sorted(ids, reverse=True)
    assert sorted(cache.cached_ids(laptop.home, cfg.store, "app")) == sorted(ids)
    assert not [t for t in threading.enumerate() if t.name == "agentmem-read-ahead"]


def test_screening_many_notes_builds_each_separators_pattern_once(monkeypatch):
    # A sync screens every note it caches (INV no-credentials); the patterns' sources were rebuilt for each
    # note, a third of a clean note's screening (docs/benchmarks.md)
    built: list[str] = []
    real = tokens._pass_pattern
    monkeypatch.setattr(tokens, "_pass_pattern", lambda sep: built.append(sep) or real(sep))
    texts = [f"note {i}: see foo_bar-baz.qux:{i}~A and ghp_{'x' * 4}" for i in range(20)]
    for text in texts:
        credentials.scan(text)
    assert len(built) == len(set(built)) <= len(tokens.PASSES)
    token = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cD1fG3hJ5"
    assert [f.kind for f in credentials.scan(f"token {token} here")] == ["github-token"]
