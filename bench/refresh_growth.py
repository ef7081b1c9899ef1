"""Refresh cost and memory as a project's note count grows (folder store).

    python bench/refresh_growth.py [--sizes 1000,10000] [--json]

For each size, a folder store holds that many synthetic notes (see
search_latency.py for how they are made). Each step runs in its own child
process, so its peak memory (max RSS) is its own:
- `full`: refresh into an empty cache (list everything, download everything);
- `unchanged`: refresh again when nothing changed (a listing only);
- `index`: the first ranked search, which builds the index;
- `plus100`: 100 new notes in the store, refresh (downloads them and updates the index in
  place), then a ranked search.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

STEP = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from agentmem.replica import cache
from agentmem.search import follow
from agentmem.search import ranked
from agentmem.store.base import StoreDescription
home, store, step = Path(sys.argv[2]), sys.argv[3], sys.argv[4]
desc = StoreDescription("folder", store)
t0 = time.perf_counter()
out = {}
if step == "index":
    ranked.rank(cache.project_dir(home, desc, "big"), "zibo kale", 10)
else:
    status = cache.refresh(home, desc, "big", index=follow.update)
    out = {"added": len(status.added), "removed": len(status.removed), "stale": status.stale}
    if step == "plus100":
        ranked.rank(cache.project_dir(home, desc, "big"), "zibo kale", 10)
out["seconds"] = time.perf_counter() - t0
out["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def run_step(home: Path, store: Path, step: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", STEP, str(REPO), str(home), str(store), step],
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    from search_latency import Generator  # same synthetic notes as the latency benchmark

    from agentmem.note import document

    gen = Generator()
    rows = []
    with tempfile.TemporaryDirectory(prefix="agentmem-refresh-") as tmp:
        for size in [int(s) for s in args.sizes.split(",")]:
            root = Path(tmp) / str(size)
            store, home = root / "store", root / "home"
            ndir = store / "projects" / "big" / "notes"
            ndir.mkdir(parents=True)
            home.mkdir()

            def fill(start: int, stop: int) -> None:
                for i in range(start, stop):
                    note_id, data = gen.note(i)
                    (ndir / f"{document.check_id(note_id)}.md").write_bytes(data)

            fill(0, size)
            row = {"notes": size}
            for step in ("full", "unchanged", "index"):
                row[step] = run_step(home, store, step)
            fill(size, size + 100)
            time.sleep(0.01)
            row["plus100"] = run_step(home, store, "plus100")
            rows.append(row)
            if not args.json:
                print(f"{size:>7} notes: full refresh {row['full']['seconds']:6.2f} s "
                      f"({row['full']['max_rss_mb']:.0f} MB) | unchanged {row['unchanged']['seconds']:5.2f} s "
                      f"({row['unchanged']['max_rss_mb']:.0f} MB) | index build {row['index']['seconds']:5.2f} s "
                      f"({row['index']['max_rss_mb']:.0f} MB) | +100 notes, refresh + search "
                      f"{row['plus100']['seconds']:5.2f} s ({row['plus100']['max_rss_mb']:.0f} MB)", flush=True)
    if args.json:
        print(json.dumps({"python": sys.executable, "sizes": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
