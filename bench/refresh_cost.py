"""Refresh cost through the bucket store, measured by the loopback stand-in's request log.

Claims checked (exit status 1 if one fails):
- a refresh with nothing new costs at most 2 requests and no listing: the bucket
  info alone once its updatedAt is settled, plus one read of the events feed
  within SETTLE_SECONDS of a change;
- a refresh after k new notes reads the feed and downloads exactly those k notes,
  with no listing;
- with the feed missing (404) or answering `reset`, the refresh falls back to one
  complete listing (its pages counted) and still downloads exactly the k new notes;
- a refresh of k new notes (k = 1, 10, 100) costs at most k + 3 requests, downloading
  exactly k files, beside the one-note-at-a-time reference measured in the same run
  (the refresh asking `get` per note, as before batching: 2 + 2k).

A download is counted as a file asked of huggingface_hub's `download_bucket_files`
(one Xet transfer reconstructs them all; the bytes come from hf_xet's local CAS
folder, not over HTTP, and the transfer costs one HEAD and one read token).

Run: python bench/refresh_cost.py [--notes N] [--new K] [--page-size P] [--sweep 1,10,100]
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="bench-hf-home-")
atexit.register(shutil.rmtree, os.environ["HF_HOME"], True)  # a scratch folder, gone at exit
os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=40)
    ap.add_argument("--new", type=int, default=3)
    ap.add_argument("--page-size", type=int, default=50, help="tree entries per page (the Hub's is larger)")
    ap.add_argument("--sweep", default="1,10,100", help="new-note counts k for the requests-per-refresh table")
    args = ap.parse_args()

    from huggingface_hub import HfApi

    from agentmem.note import document
    from agentmem.replica import cache
    from agentmem.search import follow
    from agentmem.store.base import StoreDescription
    from agentmem.store.bucket import BucketStore
    from tests.hubstub import Hub

    files_asked: list[str] = []
    real_download = HfApi.download_bucket_files

    def counted_download(self, bucket_id, files, **kwargs):  # counts, then the real transfer
        files_asked.extend(getattr(remote, "path", remote) for remote, _ in files)
        return real_download(self, bucket_id, files, **kwargs)

    HfApi.download_bucket_files = counted_download  # type: ignore[method-assign]

    work = Path(tempfile.mkdtemp(prefix="bench-refresh-"))
    atexit.register(shutil.rmtree, work, True)
    hub = Hub(work / "hub", page_size=args.page_size).start()
    os.environ["HF_ENDPOINT"] = hub.url
    os.environ["HF_TOKEN"] = hub.add_user("alice")
    hub.add_bucket("alice/agent-memory")
    store = StoreDescription("bucket", "alice/agent-memory")

    def add_notes(count: int) -> int:
        total = 0
        for i in range(count):
            note = document.build(body=f"# Note {i}\n" + "finding\n" * 20, title=None, kind="note", project="app", agent="bench")
            data = note.render()
            hub.put_file("alice/agent-memory", document.note_path("app", note.id), data)  # written by "another machine"
            total += len(data)
        return total

    add_notes(args.notes)
    home = work / "machine"
    failures = []

    def measured_refresh(label: str, one_by_one: bool = False):
        hub.clear_log()
        files_asked.clear()
        started = time.perf_counter()
        opened = OneByOne(BucketStore(store.location, timeout=20)) if one_by_one else None
        status = cache.refresh(home, store, "app", timeout=20, store=opened, index=follow.update)
        elapsed = time.perf_counter() - started
        # huggingface_hub's once-a-day user-agent registry fetch is the client's, not the refresh's.
        log = [r for r in hub.requests() if r.route != "agent-harnesses"]
        routes = Counter(f"{r.method} {r.route}" for r in log)
        cached = [cache.read_cached(home, store, "app", i) or b"" for i in status.added]
        row = {
            "case": label,
            "requests": len(log),
            "by route": dict(routes),
            "downloads": len(files_asked),
            "note bytes": sum(len(data) for data in cached),
            "http bytes out": sum(r.bytes_out for r in log),
            "seconds": round(elapsed, 3),
            "stale": status.stale,
        }
        print(row)
        for r in log:
            if r.route == "unknown":
                print("   unrecognised request:", r.method, r.path, r.status)
        return row, status

    def check(row, *, downloads: int, at_most: int | None = None, listing: bool = False, exact=None) -> None:
        if row["downloads"] != downloads:
            failures.append(f"{row['case']}: {row['downloads']} downloads, expected {downloads}")
        if at_most is not None and row["requests"] > at_most:
            failures.append(f"{row['case']}: {row['requests']} requests, expected at most {at_most}")
        if ("GET tree" in row["by route"]) != listing:
            failures.append(f"{row['case']}: {'no ' if listing else ''}listing: {row['by route']}")
        if exact is not None and row["by route"] != exact:
            failures.append(f"{row['case']}: requests {row['by route']}, expected {exact}")

    def long_ago():  # as if the bucket's last change were a minute old: its updatedAt is settled
        hub.buckets["alice/agent-memory"].updated_ms -= 60_000

    first, _ = measured_refresh(f"cold cache, {args.notes} notes (first look: a listing)")
    check(first, downloads=args.notes, listing=True)
    soon, _ = measured_refresh("nothing new, right after a change (feed read once more)")
    check(soon, downloads=0, at_most=2, exact={"GET info": 1, "GET events": 1})
    long_ago()
    measured_refresh("nothing new, updatedAt moved by the clock shift (feed read once more)")
    idle, _ = measured_refresh("nothing new, settled")
    check(idle, downloads=0, at_most=2, exact={"GET info": 1})

    new_bytes = add_notes(args.new)
    fresh, _ = measured_refresh(f"{args.new} new notes (events feed)")
    check(fresh, downloads=args.new, listing=False)
    if fresh["note bytes"] != new_bytes:
        failures.append(f"expected {new_bytes} note bytes downloaded, got {fresh['note bytes']}")

    for answer in ("404", "reset"):
        hub.feed = answer
        add_notes(args.new)
        fallback, _ = measured_refresh(f"{args.new} new notes, feed answers {answer} (listing fallback)")
        check(fallback, downloads=args.new, listing=True)
    hub.feed = "ok"

    print("\nrequests per refresh of k new notes (events feed):")
    for k in (int(n) for n in args.sweep.split(",") if n):
        add_notes(k)
        batched, _ = measured_refresh(f"{k} new, batched")
        check(batched, downloads=k, at_most=k + 3)
        add_notes(k)
        reference, _ = measured_refresh(f"{k} new, one by one (reference)", one_by_one=True)
        print(f"  k={k}: {batched['requests']} requests, {batched['downloads']} downloads, "
              f"{batched['seconds']} s; one by one: {reference['requests']} requests, {reference['seconds']} s")

    hub.stop()
    for f in failures:
        print("FAIL:", f)
    print("OK" if not failures else "FAILED")
    return 1 if failures else 0


class OneByOne:
    """The bucket store with `get_many` hidden: the refresh reads one note at a time (the reference)."""

    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        if name == "get_many":
            raise AttributeError(name)
        return getattr(self._inner, name)


if __name__ == "__main__":
    raise SystemExit(main())
