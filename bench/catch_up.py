"""A new machine joining a big folder store: searches during the catch-up, and `agentmem sync`.

    python bench/catch_up.py [--notes 100000] [--root /tmp/agentmem-big] [--searches 5] [--json]

A copy of big_store.py's store (notes hard-linked) and a machine that never saw it. First `--searches`
searches as fresh CLI processes (each downloads for memory/sync.py's SEARCH_CATCH_UP seconds, indexes
what came and answers "catching up: N of M"): wall and notes here after each. Then `agentmem sync` finishes
the catch-up: its wall, and its rate. Then the first search after it, and the reference in the same run:
a search once caught up.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO))


def _env(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTMEM_") and k != "PYTHONDONTWRITEBYTECODE"}
    return env | {"AGENTMEM_HOME": str(home)}


def cli(home: Path, work: Path, *args: str) -> tuple[float, dict]:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "agentmem", *args, "--json"], cwd=work, env=_env(home),
                          capture_output=True, text=True)
    return time.perf_counter() - t0, json.loads(done.stdout)


def main(argv=None) -> int:
    import big_store

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--notes", type=int, default=100000)
    ap.add_argument("--root", default=os.path.join("/tmp", "agentmem-big"))
    ap.add_argument("--searches", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    base = big_store.make(args.notes, Path(args.root))
    home, _, work = big_store.clone(base, Path(args.root) / f"catch-up-{args.notes}", with_cache=False)
    report: dict = {"notes": args.notes, "searches": []}
    for _ in range(args.searches):
        wall, out = cli(home, work, "search", "nopa")
        report["searches"].append({"wall_s": wall, "stale": out["stale"], "catching_up": out.get("catching_up"),
                                   "reason": out["stale_reason"]})
        if not out.get("catching_up"):
            break
    wall, out = cli(home, work, "sync")
    report["sync"] = {"wall_s": wall, "added": out["added"], "notes": out["notes"], "stale": out["stale"],
                      "rounds": out["rounds"]}
    for name in ("first_search_after_sync", "caught_up_search"):
        wall, out = cli(home, work, "search", "nopa")
        report[name] = {"wall_s": wall, "stale": out["stale"]}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for i, row in enumerate(report["searches"], start=1):
        have = row["catching_up"]
        print(f"{args.notes} notes, search {i} during the catch-up: {row['wall_s']:6.2f} s, "
              + (f"{have['have']} of {have['total']} here" if have else f"stale={row['stale']} ({row['reason']})"))
    s = report["sync"]
    print(f"{args.notes} notes, agentmem sync: {s['wall_s']:6.1f} s for {s['added']} notes "
          f"({s['wall_s'] / max(s['added'], 1) * 1000:.2f} ms a note, {s['rounds']} rounds), "
          f"{s['notes']} here, stale={s['stale']}")
    print(f"{args.notes} notes, the first search after it: {report['first_search_after_sync']['wall_s']:6.2f} s")
    print(f"{args.notes} notes, a search once caught up (reference): {report['caught_up_search']['wall_s']:6.2f} s, "
          f"stale={report['caught_up_search']['stale']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
