"""What a rerun with nothing changed costs: `doctor`, and the first search after the helper is reinstalled.

    python bench/reruns.py [--notes 100000] [--root /tmp/agentmem-big] [--against CHECKOUT] [--json]

A copy of big_store.py's caught-up machine (`--notes` synthetic notes, the cache hard-linked, the index
copied), for this checkout and, with `--against`, for another one (its code on PYTHONPATH, this
interpreter); each command a fresh `python -m agentmem` process.

doctor: a first run (no record of an earlier check) and reruns with nothing changed, each both cold (the
index file dropped from the page cache first, posix_fadvise) and warm (the file read through first).

Screening: a search (the reference: nothing changed); then the package copied elsewhere, every file
written anew with the same bytes, as an upgrade or a reinstall that leaves `safety/` as it was, and a
search run from the copy (before: every cached note screened again), and a second one; then one rule
module of the copy edited, and a search from it: what a real change of the rules costs (all notes).
"""

from __future__ import annotations

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

QUERY = "nopa"


def _run(code: Path, home: Path, work: Path, *args: str) -> tuple[float, dict]:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "agentmem", *args, "--json"], cwd=work,
                          env=big_store.cli_env(home, code), capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode not in (0, 1):  # doctor exits 1 when a check fails (none does here)
        raise SystemExit(f"agentmem {' '.join(args)} ({code}) exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return wall, json.loads(done.stdout)


def _evict(path: Path) -> None:
    """Drop a file's pages from the page cache (what a cold start finds), without root or a global drop."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fdatasync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def _warm(path: Path) -> None:
    """Read a file through, so its pages are in the page cache (what a run soon after another finds)."""
    with open(path, "rb") as fh:
        while fh.read(1 << 20):
            pass


def _reinstalled(code: Path, dest: Path) -> Path:
    """A copy of `code`'s package with the same bytes and new file times, compiled (what pip leaves after an
    upgrade)."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(code / "agentmem", dest / "agentmem", copy_function=shutil.copyfile,
                    ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(dest)], check=True)  # as pip does
    return dest


def measure(name: str, code: Path, base: Path, root: Path, repeat: int) -> dict:
    home, store, work = big_store.clone(base, root / f"reruns-{name}")
    [index] = list(home.rglob("ranked.sqlite"))
    checked = index.parent / "checked.json"  # doctor's record (this checkout's; an older one keeps none)
    _run(code, home, work, "search", QUERY, "--offline")  # the copy's first search settles its folders: not timed
    out: dict = {"code": str(code), "doctor": {}, "screening": {}}
    rows: dict[str, list[float]] = {k: [] for k in ("first_cold", "rerun_cold", "first_warm", "rerun_warm")}
    for _ in range(repeat):
        for key in ("first_cold", "rerun_cold", "first_warm", "rerun_warm"):
            if key.startswith("first") and checked.exists():
                checked.unlink()
            (_evict if key.endswith("cold") else _warm)(index)
            wall, report = _run(code, home, work, "doctor")
            rows[key].append(wall)
            [check] = [c for c in report["checks"] if c["name"] == f"index {big_store.PROJECT}"]
            out["doctor"]["index_check"] = f"{check['status']}: {check['detail']}"
    out["doctor"].update({k: statistics.median(v) for k, v in rows.items()})
    screening = out["screening"]
    screening["search"] = statistics.median(_run(code, home, work, "search", QUERY, "--offline")[0]
                                            for _ in range(repeat))
    copy = _reinstalled(code, root / f"reruns-{name}-reinstalled")
    screening["first_search_after_reinstall"] = _run(copy, home, work, "search", QUERY, "--offline")[0]
    screening["second_search_after_reinstall"] = _run(copy, home, work, "search", QUERY, "--offline")[0]
    with open(copy / "agentmem" / "safety" / "tokens.py", "a", encoding="utf-8") as fh:
        fh.write("\n# a rule changed (bench/reruns.py)\n")
    screening["first_search_after_a_rule_changed"] = _run(copy, home, work, "search", QUERY, "--offline")[0]
    shutil.rmtree(copy)
    shutil.rmtree(root / f"reruns-{name}")
    return out


def main(argv=None) -> int:
    args = big_store.arguments(__doc__, 100000, repeat=3, against="another checkout to measure beside this one"
                               ).parse_args(argv)
    root = Path(args.root)
    base = big_store.make(args.notes, root)
    trees = big_store.trees(args.against)
    report: dict = {"notes": args.notes, "load": os.getloadavg()[0], "trees": {}}
    for name, code in trees.items():
        report["trees"][name] = measure(name, code, base, root, args.repeat)
    report["load_after"] = os.getloadavg()[0]
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{args.notes} notes, median of {args.repeat} (load {report['load']:.1f} -> {report['load_after']:.1f})")
    for name, tree in report["trees"].items():
        d, s = tree["doctor"], tree["screening"]
        print(f"{name} ({tree['code']}): index check {d['index_check']}")
        for temp in ("cold", "warm"):
            first, rerun = d[f"first_{temp}"], d[f"rerun_{temp}"]
            print(f"  doctor, {temp}: first run {first:6.2f} s | rerun, nothing changed {rerun:6.2f} s "
                  f"({rerun / first:.2f}x)")
        ref = s["search"]
        print(f"  search (reference) {ref:6.2f} s | first after a reinstall, same rules "
              f"{s['first_search_after_reinstall']:6.2f} s | the next {s['second_search_after_reinstall']:6.2f} s | "
              f"first after a rule changed {s['first_search_after_a_rule_changed']:6.2f} s")
        print(f"  first search after a reinstall / after a rule changed: "
              f"{s['first_search_after_reinstall'] / s['first_search_after_a_rule_changed']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
