"""`search ""` (the most recent notes) at scale, beside a word search of the same store in the same run.

    python bench/recent_notes.py [--notes 100000] [--root /tmp/agentmem-big] [--repeat 5] [--json]

The store and its caught-up machine come from big_store.py (made once, reused). Each search is a fresh
CLI process with `--offline` (no store check: what is measured is the answer, not the refresh), median
of `--repeat` runs: `search ""` in ranked mode, in literal mode, and `search WORD` (ranked), the reference; and, once, in-process, the scan of every
note that `search ""` used to be (what the index now spares).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
# A word of middling frequency in big_store's notes (rank ~2,000 of its Zipf vocabulary: ~1.5k notes at 100k).
WORD = "nopa"


def timed_search(home: Path, work: Path, *args: str) -> tuple[float, dict]:
    # Byte-compiled as an installed helper runs (this shell may say PYTHONDONTWRITEBYTECODE).
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTMEM_") and k != "PYTHONDONTWRITEBYTECODE"}
    env["AGENTMEM_HOME"] = str(home)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "agentmem", "search", *args, "--offline", "--json"], cwd=work,
                          env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - t0, json.loads(done.stdout)


def main(argv=None) -> int:
    import big_store

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--notes", type=int, default=100000)
    ap.add_argument("--root", default=os.path.join("/tmp", "agentmem-big"))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    base = big_store.make(args.notes, Path(args.root))
    home, work = base / "synced", base / "work"
    timed_search(home, work, "warm-up")
    rows = {}
    for name, query in (("recent_ranked", ("", "--mode", "ranked")), ("recent_literal", ("", "--mode", "literal")),
                        ("word_ranked", (WORD, "--mode", "ranked"))):
        runs = [timed_search(home, work, *query) for _ in range(args.repeat)]
        rows[name] = {"median_s": statistics.median(t for t, _ in runs), "results": len(runs[-1][1]["results"]),
                      "more": runs[-1][1].get("more")}
    # The way it was answered before the index served it: every cached note read and parsed (in-process).
    from agentmem import config
    from agentmem.search import find

    desc = config.load(home).store
    t0 = time.perf_counter()
    find.literal(find.candidates(home, desc, big_store.PROJECT, {}), "", 10)
    rows["recent_by_scan"] = {"median_s": time.perf_counter() - t0, "results": 10, "more": None}
    report = {"notes": args.notes, **rows}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    ref = rows["word_ranked"]["median_s"]
    for name, row in rows.items():
        print(f"{args.notes} notes, search {name:<15} {row['median_s'] * 1000:7.1f} ms "
              f"({row['median_s'] / ref:4.1f}x the word search; {row['results']} results, more={row['more']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
