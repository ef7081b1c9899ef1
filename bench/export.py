"""`agentmem export` at growing note counts, beside copying the same notes with `cp -r`.

    python bench/export.py [--sizes 1000,10000] [--repeat 3] [--json]

For each size a throwaway machine gets a folder store of that many synthetic notes over three projects
(bench/view.py's generator) and syncs them into its cache with `search ""`. Then, as a person runs it:

- `agentmem export DIR` into a new folder (every file written), and again into the same folder
  (nothing changed: the rerun must write nothing);
- `agentmem import --from agentmem DIR` on a second machine with an empty store: the dry run
  (it checks every file against the manifest and the store);
- the reference in the same run: `cp -r` of the cached notes folders (the bytes alone), and a bare
  `python -c pass`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import view  # noqa: E402 - bench/view.py: the same synthetic store and machine

PROJECTS = view.PROJECTS


def _cp(src: Path, dest: Path) -> float:
    t = time.perf_counter()
    subprocess.run(["cp", "-r", str(src), str(dest)], check=True)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    report: dict = {"sizes": []}
    with tempfile.TemporaryDirectory(prefix="agentmem-bench-export-") as tmp:
        report["python_start_s"] = statistics.median(view.timed([sys.executable, "-c", "pass"], {})[0]
                                                     for _ in range(args.repeat))
        for size in (int(s) for s in args.sizes.split(",")):
            root = Path(tmp) / f"n{size}"
            store = root / "store"
            from agentmem.store.folder import create_store

            create_store(str(store))
            view.fill(store, size)
            env = view.machine(root, store)
            for project in PROJECTS:  # sync every project into the cache first: export refreshes as search does
                view.timed(view.helper("search", "", "--project", project, "--json"), env)
            fresh, again = [], []
            for i in range(args.repeat):
                dest = root / f"export-{i}"
                t, out = view.timed(view.helper("export", str(dest), "--json"), env)
                fresh.append(t)
                first = json.loads(out)
                t, out = view.timed(view.helper("export", str(dest), "--json"), env)
                again.append(t)
                rerun = json.loads(out)
                if rerun["written"] or rerun["removed"]:
                    raise SystemExit(f"an unchanged rerun wrote {rerun['written']} and removed {rerun['removed']}")
            other = view.machine(root / "other", None)
            dry = statistics.median(view.timed(view.helper("import", "--from", "agentmem", str(root / "export-0"),
                                                           "--json"), other)[0] for _ in range(args.repeat))
            cache = Path(env["AGENTMEM_HOME"]) / "cache"
            cp = statistics.median(_cp(cache, root / f"cp-{i}") for i in range(args.repeat))
            report["sizes"].append({"notes": first["notes"], "export_s": statistics.median(fresh),
                                    "rerun_s": statistics.median(again), "import_dry_run_s": dry, "cp_r_s": cp})
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"reference: python -c pass {report['python_start_s'] * 1000:.0f} ms")
    print(f"{'notes':>6} {'export':>8} {'rerun':>8} {'import (dry)':>13} {'cp -r cache':>12}")
    for r in report["sizes"]:
        print(f"{r['notes']:>6} {r['export_s']:>7.2f}s {r['rerun_s']:>7.2f}s {r['import_dry_run_s']:>12.2f}s "
              f"{r['cp_r_s']:>11.2f}s")


if __name__ == "__main__":
    main()
