"""What asking the store on every search costs, on a folder store, as the note count grows.

    python bench/freshness.py [--sizes 1000,10000,100000] [--repeat 7] [--new 1,10,100] [--json]

Run it with the interpreter agentmem is installed in. The CLI is timed as setup
installs it (the launcher of a helper venv built from this checkout, as in
search_latency.py). For each size (cumulative, in one folder), a marked folder
store holds that many synthetic notes (search_latency.py's generator), the
machine's cache holds them too and the index is built; then, medians of
`--repeat` fresh processes each:

- `search QUERY` with nothing new in the store (the default: one stat of the
  notes folder, no listing);
- `search QUERY --offline` (the cache only), the reference for the first;
- `rg -i -F -l WORD` over the store's notes folder (the query's rarest word);
- `search QUERY` right after 1, 10 and 100 new notes landed in the store (a
  names-only listing of the store and the cache, then k downloads, each an
  fsync'd atomic write, and the index updated by k notes); median of 3 rounds.

Every search must come back `stale: false` (and `--offline` true); the script
exits 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--new", default="1,10,100", help="how many new notes each round adds, per case")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    from search_latency import Generator, folder_machine, ripgrep, settle

    from agentmem.machine import helper_venv
    from agentmem.replica import cache
    from agentmem.search import follow, ranked
    from agentmem.store.base import StoreDescription
    from agentmem.store.folder import create_store

    rg = ripgrep()
    gen = Generator()
    failures: list[str] = []
    report: dict = {"python": sys.executable, "rg": rg, "sizes": []}
    with tempfile.TemporaryDirectory(prefix="agentmem-freshness-") as tmp:
        root = Path(tmp)
        home, store, work = folder_machine(root, cache_only=False, store_exists=False)
        create_store(str(store))
        desc = StoreDescription("folder", str(store))
        sdir = store / "projects" / "big" / "notes"
        sdir.mkdir(parents=True)
        pdir = Path(cache.project_dir(home, desc, "big"))
        cdir = pdir / "notes"
        cdir.mkdir(parents=True)
        [launcher] = helper_venv.install(home, REPO)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}
        env["AGENTMEM_HOME"] = str(home)

        def search(*extra) -> tuple[float, dict]:
            t0 = time.perf_counter()
            done = subprocess.run([launcher, "search", *extra, "--json"], cwd=work, env=env, check=True,
                                  capture_output=True, text=True)
            return time.perf_counter() - t0, json.loads(done.stdout)

        def timed(extra: tuple, want_stale: bool) -> float:
            times = []
            for _ in range(args.repeat):
                seconds, out = search(*extra)
                if out["stale"] is not want_stale:
                    failures.append(f"search {extra}: stale={out['stale']} ({out['stale_reason']})")
                times.append(seconds)
            return statistics.median(times)

        count = 0
        for size in [int(s) for s in args.sizes.split(",")]:
            bodies = []
            while count < size:
                note_id, data = gen.note(count)
                (sdir / f"{note_id}.md").write_bytes(data)
                (cdir / f"{note_id}.md").write_bytes(data)  # as a first sync leaves it, without 0.5 ms a note
                if len(bodies) < 500:
                    bodies.append(data.decode().rsplit("\n\n", 1)[-1])
                count += 1
            ranked.rebuild(str(pdir))
            cache.refresh(home, desc, "big", index=follow.update)  # this machine sees the folder's signature
            settle(sdir, cdir)
            cache.refresh(home, desc, "big", index=follow.update)  # a listing a granule later: from now on the signature is trusted
            if cache.refresh(home, desc, "big", index=follow.update).how != "unchanged (one stat)":
                failures.append(f"{size}: the signature did not settle")
            words = random.Random(size).choice(bodies).split()[:3]
            query = " ".join(words)
            rare = max(words, key=lambda w: gen.rank.get(w, 0))
            row = {
                "notes": size,
                "query": query,
                "plain_s": timed((query,), False),
                "offline_s": timed((query, "--offline"), True),
                "rg_s": statistics.median(
                    _time(lambda: subprocess.run([rg, "-i", "-F", "-l", "--", rare, str(sdir)],
                                                 stdout=subprocess.DEVNULL)) for _ in range(args.repeat)),
                "after_new_s": {},
            }
            for k in [int(n) for n in args.new.split(",")]:
                times = []
                for _ in range(3):
                    for _ in range(k):
                        note_id, data = gen.note(count)
                        (sdir / f"{note_id}.md").write_bytes(data)
                        count += 1
                    seconds, out = search(query)
                    if out["stale"]:
                        failures.append(f"search after {k} new: stale ({out['stale_reason']})")
                    times.append(seconds)
                    settle(sdir, cdir)  # before the next round
                    search(query)
                row["after_new_s"][k] = statistics.median(times)
            count_cached = len(os.listdir(cdir))
            if count_cached != count:
                failures.append(f"{size}: {count_cached} notes cached, {count} in the store")
            row["ratio"] = row["plain_s"] / row["offline_s"]
            report["sizes"].append(row)
            if not args.json:
                new = " | ".join(f"+{k}: {v * 1000:6.1f} ms" for k, v in row["after_new_s"].items())
                print(f"{size:>7} notes: search {row['plain_s'] * 1000:6.1f} ms, --offline "
                      f"{row['offline_s'] * 1000:6.1f} ms ({row['ratio']:.2f}x), rg {row['rg_s'] * 1000:6.1f} ms "
                      f"| after new notes {new}", flush=True)
    if args.json:
        print(json.dumps(report | {"failures": failures}, indent=2))
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


def _time(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    sys.exit(main())
