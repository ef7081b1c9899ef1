"""`agentmem export`: a first run, a rerun with nothing changed and a rerun after one change, beside `cp -r`.

    python bench/export.py [--sizes 10000,100000] [--repeat 3] [--root /tmp/agentmem-big] [--against CHECKOUT]
                           [--json]

For each size, big_store.py's caught-up machine (that many synthetic notes of one project in a folder store,
all cached, the index built) is copied for each tree (this checkout and, with `--against`, another one: its
code on PYTHONPATH, this interpreter), and each command runs as a person runs it, a fresh `python -m agentmem`:

- `export DIR` into a new folder (every file written and flushed);
- `export DIR` again, nothing changed (it must write nothing);
- `save` of one note (not timed), then `export DIR` again: what one change costs;
- the reference in the same run: `cp -r DIR` (the same files, no screening, no flush), and a bare
  `python -c pass`; and once a size, `import --from agentmem DIR` on a new machine (the dry run: every
  file checked against the manifest and the store).

The load average (`os.getloadavg`, as `uptime` shows it) is printed at the start and the end.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO))

import big_store  # noqa: E402 - bench/big_store.py: the store, the machine, the arguments

KEYS = ("first_s", "rerun_s", "one_change_s", "cp_r_s")


def _run(code: Path, home: Path, work: Path, *args: str) -> tuple[float, dict]:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "agentmem", *args, "--json"], cwd=work,
                          env=big_store.cli_env(home, code), capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"agentmem {' '.join(args)} ({code}) exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return wall, json.loads(done.stdout)


def _cp(src: Path, dest: Path) -> float:
    t = time.perf_counter()
    subprocess.run(["cp", "-r", str(src), str(dest)], check=True)
    return time.perf_counter() - t


def measure(name: str, code: Path, base: Path, root: Path, repeat: int) -> dict:
    home, _, work = big_store.clone(base, root / f"export-{name}")
    _run(code, home, work, "search", "nopa", "--offline")  # the copy's first search settles its folders: not timed
    rows: dict[str, list[float]] = {k: [] for k in KEYS}
    out: dict = {"code": str(code)}
    for i in range(repeat):
        dest = root / f"export-{name}-out-{i}"
        t, first = _run(code, home, work, "export", str(dest))
        rows["first_s"].append(t)
        t, rerun = _run(code, home, work, "export", str(dest))
        rows["rerun_s"].append(t)
        if rerun["written"] or rerun["removed"]:
            raise SystemExit(f"{name}: an unchanged rerun wrote {rerun['written']} and removed {rerun['removed']}")
        _run(code, home, work, "save", "--title", f"bench change {i}", "--text", f"one more finding, number {i}")
        t, changed = _run(code, home, work, "export", str(dest))
        rows["one_change_s"].append(t)
        if changed["written"] != 3:  # the note, the index, the manifest
            raise SystemExit(f"{name}: a rerun after one saved note wrote {changed['written']} files, not 3")
        rows["cp_r_s"].append(_cp(dest, root / f"export-{name}-cp-{i}"))
        out["notes"] = first["notes"]
        if i == 0 and name == "this":  # a new machine with an empty store of its own reads the export
            other, empty = root / f"export-{name}-importer", root / f"export-{name}-empty-store"
            other.mkdir()
            from agentmem.store.folder import create_store

            create_store(str(empty))
            big_store.config(other, empty, work)
            out["import_dry_run_s"] = _run(code, other, work, "import", "--from", "agentmem", str(dest))[0]
        shutil.rmtree(dest)
        shutil.rmtree(root / f"export-{name}-cp-{i}")
    out.update({k: statistics.median(v) for k, v in rows.items()})
    shutil.rmtree(root / f"export-{name}")
    for leftover in root.glob(f"export-{name}-*"):
        shutil.rmtree(leftover)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--against", type=Path, help="another checkout to measure beside this one")
    ap.add_argument("--root", default=big_store.ROOT)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    root = Path(args.root)
    report: dict = {"load": os.getloadavg()[0], "sizes": []}
    report["python_start_s"] = statistics.median(_python_start() for _ in range(args.repeat))
    for size in (int(s) for s in args.sizes.split(",")):
        base = big_store.make(size, root)
        trees = {name: measure(name, code, base, root, args.repeat) for name, code in big_store.trees(args.against).items()}
        report["sizes"].append({"notes": size, "trees": trees})
    report["load_after"] = os.getloadavg()[0]
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"median of {args.repeat}; load {report['load']:.1f} -> {report['load_after']:.1f}; "
          f"python -c pass {report['python_start_s'] * 1000:.0f} ms")
    print(f"{'notes':>7} {'tree':>8} {'first':>8} {'rerun':>15} {'one change':>15} {'cp -r':>8} {'import (dry)':>13}")
    for size in report["sizes"]:
        for name, r in size["trees"].items():
            dry = f"{r['import_dry_run_s']:>12.2f}s" if "import_dry_run_s" in r else ""
            print(f"{size['notes']:>7} {name:>8} {r['first_s']:>7.2f}s "
                  f"{r['rerun_s']:>7.2f}s ({r['rerun_s'] / r['first_s']:.2f}x) "
                  f"{r['one_change_s']:>7.2f}s ({r['one_change_s'] / r['first_s']:.2f}x) {r['cp_r_s']:>7.2f}s {dry}")
    return 0


def _python_start() -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - t


if __name__ == "__main__":
    raise SystemExit(main())
