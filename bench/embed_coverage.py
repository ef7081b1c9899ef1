"""Hybrid coverage over time: how many notes have sentence vectors after each hybrid search, and `sync --embed`.

    python bench/embed_coverage.py [--notes 10000] [--searches 20] [--budget S] [--finish] [--root DIR] [--json]

A machine caught up with big_store.py's store of `--notes` synthetic notes (its cache hard-linked, its
ranked index built, no vectors), hybrid its search mode. Then `--searches` hybrid searches as fresh CLI
processes, each embedding for `[search] embed_budget` seconds (`--budget`, default the config's default)
before it answers: after each, its wall time, the notes embedded so far (`embedding` in its JSON) and the
wall time since the first. Beside them, in the same run: a ranked search of the same query (what a search
costs without embedding), before and after (the copy's very first search, which lists its notes folder,
is not timed). With `--finish`, `agentmem sync --embed`
embeds the rest (its wall and rate: what the first hybrid search alone cost before budgets, scaled to
every note), then a hybrid search over the complete index.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO))

import big_store  # noqa: E402 - bench/big_store.py: the store, the machine, the arguments

QUERY = "nopa deploy"


def cli(home: Path, work: Path, *args: str) -> tuple[float, dict]:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "agentmem", *args, "--json"], cwd=work,
                          env=big_store.cli_env(home), capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"agentmem {' '.join(args)} exited {done.returncode}: {done.stderr.strip()}")
    return wall, json.loads(done.stdout)


def main(argv=None) -> int:
    from agentmem import config

    ap = big_store.arguments(__doc__, 10000)
    ap.add_argument("--searches", type=int, default=20)
    ap.add_argument("--budget", type=float, default=config.DEFAULT_EMBED_BUDGET, help="[search] embed_budget")
    ap.add_argument("--finish", action="store_true", help="then `sync --embed` the rest, and search once more")
    args = ap.parse_args(argv)
    big_store.need_hybrid()
    base = big_store.make(args.notes, Path(args.root))
    home, store, work = big_store.clone(base, Path(args.root) / f"embed-{args.notes}")
    big_store.config(home, store, work, f'\n[search]\nmode = "hybrid"\nembed_budget = {args.budget!r}\n')
    report: dict = {"notes": args.notes, "budget_s": args.budget, "searches": []}
    cli(home, work, "search", QUERY, "--mode", "ranked")  # the copy's first search lists its notes folder: not timed
    report["ranked_before_s"] = cli(home, work, "search", QUERY, "--mode", "ranked")[0]
    started = time.perf_counter()
    for _ in range(args.searches):
        wall, out = cli(home, work, "search", QUERY)
        done = out.get("embedding", {"done": args.notes, "total": args.notes})
        report["searches"].append({"wall_s": wall, "embedded": done["done"], "total": done["total"],
                                   "since_first_s": time.perf_counter() - started, "results": len(out["results"])})
        if "embedding" not in out:
            break
    report["ranked_after_s"] = cli(home, work, "search", QUERY, "--mode", "ranked")[0]
    if args.finish:
        wall, out = cli(home, work, "sync", "--embed")
        report["sync_embed"] = {"wall_s": wall, **out["embedding"]}
        report["hybrid_complete_s"] = cli(home, work, "search", QUERY)[0]
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    n = args.notes
    print(f"{n} notes, [search] embed_budget {args.budget:g} s; ranked search (reference): "
          f"{report['ranked_before_s']:.2f} s")
    previous = 0  # the clone holds no vectors
    for i, row in enumerate(report["searches"], start=1):
        gained, previous = row["embedded"] - previous, row["embedded"]
        print(f"{n} notes, hybrid search {i}: {row['wall_s']:5.2f} s, {row['embedded']} of {row['total']} embedded "
              f"(+{gained}), {row['since_first_s']:6.1f} s since the first, {row['results']} results")
    print(f"{n} notes, ranked search after them (reference): {report['ranked_after_s']:.2f} s")
    if args.finish:
        s = report["sync_embed"]
        rate = s["wall_s"] / max(s["embedded"], 1)
        print(f"{n} notes, sync --embed: {s['wall_s']:.1f} s for the other {s['embedded']} ({rate * 1000:.0f} ms a note; "
              f"one search embedding all {n} at that rate, as before budgets: {rate * n:.0f} s)")
        print(f"{n} notes, hybrid search once every note is embedded: {report['hybrid_complete_s']:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
