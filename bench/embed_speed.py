"""How fast `agentmem sync --embed` embeds notes, and what it costs the kernel, beside another checkout.

    python bench/embed_speed.py [--notes 200] [--repeat 3] [--against CHECKOUT] [--root DIR] [--json]

big_store.py's synthetic notes (`--notes` of them, its store and caught-up machine under `--root`); each
run is a fresh copy of that machine (its index, no vectors) embedding every note with `python -m agentmem
sync --embed` as a child process of this interpreter. Per run: the wall time, notes per second, and what
the child used (user and system CPU, minor page faults, from getrusage). With `--against`, the same runs
of another checkout's code (PYTHONPATH, this interpreter and its numpy), taking turns with this one, then
the two indexes' vectors compared byte for byte (they must be the same). Last, one hybrid search with the
default embedding budget on a fresh copy for each checkout: how many notes it embedded before answering.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO))

import big_store  # noqa: E402 - bench/big_store.py: the store, the machine, the arguments


def _run(checkout: Path, home: Path, work: Path, *args: str) -> tuple[float, dict, dict]:
    """(wall seconds, the command's JSON, the child's CPU and faults) of one `agentmem` command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "agentmem", *args, "--json"], cwd=work,
                          env=big_store.cli_env(home, checkout), capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"agentmem {' '.join(args)} ({checkout}) exited {done.returncode}: {done.stderr.strip()}")
    used = {"user_s": after.ru_utime - before.ru_utime, "sys_s": after.ru_stime - before.ru_stime,
            "minor_faults": after.ru_minflt - before.ru_minflt}
    return wall, json.loads(done.stdout), used


def vectors_digest(home: Path) -> str:
    """SHA-256 of every stored vector (spans, scales, both int8 planes), by note ID."""
    from agentmem.replica import cache
    from agentmem.search import index
    from agentmem.store.base import StoreDescription

    [store] = [line.split('"')[1] for line in (home / "config.toml").read_text().splitlines()
               if line.startswith("location")]
    path = index.index_path(cache.project_dir(home, StoreDescription("folder", store), "big"))
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT d.id, v.spans, v.scales, v.vec, v.fine FROM vectors v JOIN docs d "
                            "ON d.num = v.num ORDER BY d.id").fetchall()
    finally:
        conn.close()
    digest = hashlib.sha256()
    for note_id, spans, scales, vec, fine in rows:
        digest.update(f"{note_id} {spans} {len(vec)}\n".encode())
        digest.update(scales + vec + fine)
    return f"{len(rows)} notes {digest.hexdigest()[:16]}"


def main(argv=None) -> int:
    args = big_store.arguments(__doc__, 200, repeat=3, against="another checkout whose `sync --embed` to time "
                               "beside this one").parse_args(argv)
    big_store.need_hybrid()
    base = big_store.make(args.notes, Path(args.root))
    trees = big_store.trees(args.against)
    report: dict = {"notes": args.notes, "load": os.getloadavg()[0], "runs": {name: [] for name in trees},
                    "trees": {name: str(path) for name, path in trees.items()}}
    digests: dict[str, str] = {}
    for _ in range(args.repeat):
        for name, checkout in trees.items():
            home, store, work = big_store.clone(base, Path(args.root) / f"embed-speed-{args.notes}-{name}")
            wall, out, used = _run(checkout, home, work, "sync", "--embed")
            embedded = out["embedding"]["embedded"]
            report["runs"][name].append({"wall_s": wall, "embedded": embedded, "notes_per_s": embedded / wall, **used})
            digests[name] = vectors_digest(home)
    report["vectors"] = digests
    report["same_vectors"] = len(set(digests.values())) == 1
    report["hybrid_search"] = {}
    for name, checkout in trees.items():
        home, store, work = big_store.clone(base, Path(args.root) / f"embed-speed-{args.notes}-{name}")
        big_store.config(home, store, work, '\n[search]\nmode = "hybrid"\n')
        _run(checkout, home, work, "search", "nopa", "--mode", "ranked")  # the copy's first listing: not timed
        wall, out, _ = _run(checkout, home, work, "search", "nopa deploy")
        done = out.get("embedding", {"done": args.notes})["done"]  # no "embedding": every note has its vectors
        report["hybrid_search"][name] = {"wall_s": wall, "embedded": done}
        shutil.rmtree(Path(args.root) / f"embed-speed-{args.notes}-{name}")
    report["load_after"] = os.getloadavg()[0]
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{args.notes} notes, sync --embed, median of {args.repeat} (load {report['load']:.1f} -> "
          f"{report['load_after']:.1f})")
    for name, runs in report["runs"].items():
        med = {k: statistics.median(r[k] for r in runs) for k in ("wall_s", "notes_per_s", "user_s", "sys_s",
                                                                   "minor_faults")}
        print(f"  {name:8s} {med['notes_per_s']:6.2f} notes/s  wall {med['wall_s']:6.1f} s  user {med['user_s']:6.1f} s  "
              f"sys {med['sys_s']:5.1f} s  minor faults {med['minor_faults']:>10,.0f}  ({trees[name]})")
    if len(trees) > 1:
        ratio = (statistics.median(r["notes_per_s"] for r in report["runs"]["this"])
                 / statistics.median(r["notes_per_s"] for r in report["runs"]["against"]))
        print(f"  this / against: {ratio:.2f}x notes/s; vectors {'the same' if report['same_vectors'] else 'DIFFER'}: "
              + ", ".join(f"{k} {v}" for k, v in digests.items()))
    for name, row in report["hybrid_search"].items():
        print(f"  one hybrid search ({name}): {row['wall_s']:.2f} s, {row['embedded']} notes embedded")
    return 0 if report["same_vectors"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
