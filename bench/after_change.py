"""Search right after a change at scale: notes arriving in a big folder store while an agent searches.

    python bench/after_change.py [--notes 100000] [--root /tmp/agentmem-big] [--seconds 10] [--json]

A copy of big_store.py's store (notes hard-linked) and of its caught-up machine; a writer process puts one
new note into the store every second while searches run back to back as fresh CLI processes, for
`--seconds`: `search arrived` (asks the store: a folder stat, a listing when it changed), each followed
by `search arrived --offline` (the cache alone, just after the refresh changed it). Printed: per-search wall (median, max), how many listed the
store, and whether each new note was found; beside the same searches with nothing arriving (the reference).
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
sys.path.insert(0, str(REPO))

WORD = "arrived"  # in the new notes alone: each answer shows which of them it found
WRITER = r"""
import os, sys, time
from agentmem.memory import notes
folder, seconds = sys.argv[1], float(sys.argv[2])
end = time.time() + seconds
i = 0
while time.time() < end:
    n = notes.build(body=f"arrived {i}", title=f"arrived {i}", kind="note", project="big", agent="writer")
    tmp = os.path.join(folder, ".tmp-" + n.id)
    with open(tmp, "wb") as fh:
        fh.write(n.render())
    os.rename(tmp, os.path.join(folder, n.id + ".md"))
    print(n.id, flush=True)
    i += 1
    time.sleep(1.0)
"""


def _env(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTMEM_") and k != "PYTHONDONTWRITEBYTECODE"}
    return env | {"AGENTMEM_HOME": str(home)}


def searches(home: Path, work: Path, seconds: float, *extra: str) -> list[tuple[float, dict]]:
    out: list[tuple[float, dict]] = []
    end = time.time() + seconds
    while not out or time.time() < end:
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "agentmem", "search", WORD, "--limit", "200", "--json", *extra],
                              cwd=work, env=_env(home), capture_output=True, text=True, check=True)
        out.append((time.perf_counter() - t0, json.loads(done.stdout)))
    return out


def summary(runs: list[tuple[float, dict]]) -> dict:
    walls = [t for t, _ in runs]
    return {"searches": len(runs), "median_s": statistics.median(walls), "max_s": max(walls)}


def main(argv=None) -> int:
    import big_store
    from search_latency import settle

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--notes", type=int, default=100000)
    ap.add_argument("--root", default=os.path.join("/tmp", "agentmem-big"))
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    base = big_store.make(args.notes, Path(args.root))
    home, store, work = big_store.clone(base, Path(args.root) / f"after-change-{args.notes}")
    folder = store / "projects" / big_store.PROJECT / "notes"
    searches(home, work, 0.1)  # the copied store is another folder: one full listing
    settle(folder)
    searches(home, work, 0.1)  # settled
    report: dict = {"notes": args.notes, "quiet": summary(searches(home, work, min(args.seconds, 5)))}
    report["quiet_offline"] = summary(searches(home, work, min(args.seconds, 5), "--offline"))
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(folder), str(args.seconds)],
                              stdout=subprocess.PIPE, text=True, env=_env(home))
    online, offline = [], []
    end = time.time() + args.seconds
    while time.time() < end:  # each search that refreshed is followed by one from the cache alone
        online += searches(home, work, 0)
        offline += searches(home, work, 0, "--offline")
    written = writer.communicate()[0].split()
    found = {r["id"] for r in online[-1][1]["results"]}
    report["arriving"] = summary(online) | {"written": len(written),
                                            "missing_from_last_answer": len(set(written[:-1]) - found)}
    report["arriving_offline"] = summary(offline)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for name in ("quiet", "quiet_offline", "arriving", "arriving_offline"):
        row = report[name]
        print(f"{args.notes} notes, {name:<17} {row['searches']:3d} searches: median {row['median_s'] * 1000:7.1f} ms, "
              f"max {row['max_s'] * 1000:7.1f} ms" + (f"; {row['written']} notes written, "
                                                       f"{row['missing_from_last_answer']} missing from the last answer"
                                                       if "written" in row else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
