"""What withholding credentials costs: once per note where it enters the cache, and on every search.

Every note entering the cache passes `replica/redacted_copies.clean` (one scan of the file; a note with a
credential is rebuilt redacted). Timed here beside `credentials.scan` of the same bytes, the scan
`save` already pays for every note (the reference). A search adds three small steps (is the cache
screened by this scanner, which cached notes have a record, clean the pending notes: none here),
timed beside reading the project's state.json, which every search already does.

Figures are medians of `--repeat` warm runs, in milliseconds (per note) and microseconds (per search).

Run: python bench/redaction_cost.py [--repeat 200] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentmem.note import document
from agentmem.replica import cache, redacted_copies  # noqa: E402
from agentmem.safety import credentials  # noqa: E402
from agentmem.store.base import StoreDescription  # noqa: E402


def _note(lines: int, token: bool, rng: random.Random) -> bytes:
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9))) for _ in range(900)]
    body = [" ".join(rng.choice(words) for _ in range(12)) for _ in range(lines)]
    if token:
        body[len(body) // 2] += " push with ghp_" + "".join(rng.choice("ABCDEFGHabcdefgh2345") for _ in range(36))
    built = document.Note(id=document.new_id(), title="bench", kind="note", project="p", created="2026-12-01T00:00:00.000Z",
                          agent="bench", body="\n".join(body))
    return built.render()


def _median(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rng = random.Random(20261201)
    rows = []
    for label, lines, token in (("1 KiB note", 12, False), ("1 KiB note with a token", 12, True),
                                ("60 KiB note", 720, False), ("60 KiB note with a token", 720, True)):
        data = _note(lines, token, rng)
        text = data.decode()
        known = credentials.env_secrets()
        scan = _median(lambda: credentials.scan(text, known), args.repeat)
        clean = _median(lambda: redacted_copies.clean(data, known), args.repeat)
        rows.append({"note": label, "bytes": len(data), "scan_ms": scan * 1e3, "clean_ms": clean * 1e3})
    with tempfile.TemporaryDirectory() as machine:
        store = StoreDescription("folder", os.path.join(machine, "store"))
        pdir = cache.project_dir(machine, store, "p")
        os.makedirs(os.path.join(pdir, "notes"))
        redacted_copies.ensure_screened(pdir)

        def added():
            redacted_copies.ensure_screened(pdir)
            redacted_copies.recorded_ids(pdir)
            redacted_copies.clean_all({})

        per_search = _median(added, args.repeat * 10)
        state = _median(lambda: cache.last_checked(machine, store, "p"), args.repeat * 10)
    report = {"notes": rows, "per_search_us": per_search * 1e6, "state_read_us": state * 1e6}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for r in rows:
        print(f"{r['note']:>26} ({r['bytes']:>6} B): clean {r['clean_ms']:7.3f} ms | scan (what save pays) "
              f"{r['scan_ms']:7.3f} ms")
    print(f"per search: {report['per_search_us']:.1f} us added | reading state.json (every search does) "
          f"{report['state_read_us']:.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
