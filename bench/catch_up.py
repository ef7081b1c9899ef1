"""A new machine joining a big folder store: its searches during the catch-up, `agentmem sync`, `agentmem setup`.

    python bench/catch_up.py [--notes 100000] [--root /tmp/agentmem-big] [--searches 5] [--no-setup] [--json]

A copy of big_store.py's store (notes hard-linked) and machines that never saw it. The reference for the
copies is `cp -r` of the store's notes folder on the same disk, timed in the same run; the reference for
the searches is a search once caught up, in the same run.

- Searches during the catch-up: `--searches` times, another machine puts one note into the store, then
  the joining machine searches for it as a fresh CLI process (each search downloads for memory/sync.py's
  SEARCH_CATCH_UP seconds and answers "catching up: N of M"): its wall, how far it got, and whether the
  note saved a moment ago is in the answer (the headline promise).
- `agentmem sync` then brings that machine all the way: its wall beside `cp -r`.
- `agentmem setup` on a second new machine (the template's files beside its config, no agent CLI enabled):
  setup verifies the store, then catches up; its wall beside `cp -r`, and whether its next search is current.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO))

SETTLE = 10.0  # seconds of pause before each copy is timed, for a store of 10k notes or more (`settled`)
WORD = "arrived"  # in the notes another machine saves during the catch-up alone


def _env(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTMEM_") and k != "PYTHONDONTWRITEBYTECODE"}
    return env | {"AGENTMEM_HOME": str(home), "HOME": str(home.parent / "user-home")}


def cli(home: Path, work: Path, *args: str) -> tuple[float, dict]:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "agentmem", *args, "--json"], cwd=work, env=_env(home),
                          capture_output=True, text=True)
    wall = time.perf_counter() - t0
    try:
        return wall, json.loads(done.stdout)
    except ValueError:
        raise SystemExit(f"agentmem {' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}") from None


def settled(seconds: float) -> None:
    """Flush what was written and removed, and wait: the disk frees removed files in the background (this one
    mounts with `discard`), and files created meanwhile paid for it (100k made right after 100k were removed:
    44-53 s; after a pause: 7-18 s), so neither `cp -r` nor a sync is timed right after a removal."""
    os.sync()
    time.sleep(seconds)


def copy_reference(notes: Path, scratch: Path, settle: float) -> float:
    """Seconds `cp -r` takes to copy the store's notes folder on the same disk (the copy is removed), each
    timing after `settled`."""
    target = scratch / "cp-r-copy"
    shutil.rmtree(target, ignore_errors=True)
    settled(settle)
    t0 = time.perf_counter()
    subprocess.run(["cp", "-r", str(notes), str(target)], check=True)
    wall = time.perf_counter() - t0
    subprocess.run(["rm", "-rf", str(target)], check=True)  # shutil.rmtree takes minutes on a loaded machine
    settled(settle)
    return wall


def other_machine_note(folder: Path, i: int) -> str:
    """One note put into the store as another machine's save would (a temp file renamed into place)."""
    from agentmem.note import document

    n = document.build(body=f"{WORD} {i}", title=f"{WORD} {i}", kind="note", project="big", agent="other")
    tmp = folder / f".tmp-{n.id}"
    tmp.write_bytes(n.render())
    os.rename(tmp, folder / f"{n.id}.md")
    return n.id


def setup_machine(home: Path, store: Path, work: Path) -> None:
    """A machine folder as Copier leaves it, enough for `agentmem setup`: config, core skill, block."""
    import big_store

    home.mkdir(parents=True)
    (home.parent / "user-home").mkdir(exist_ok=True)
    big_store.config(home, store, work, "\n[runtimes]\nenabled = []\n")
    shutil.copytree(REPO / "template" / "agent-memory", home / "agent-memory")
    shutil.copy2(REPO / "template" / "instructions-block.md", home / "instructions-block.md")


def main(argv=None) -> int:
    import big_store

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--notes", type=int, default=100000)
    ap.add_argument("--root", default=os.path.join("/tmp", "agentmem-big"))
    ap.add_argument("--searches", type=int, default=5)
    ap.add_argument("--no-setup", action="store_true", help="skip the second machine's `agentmem setup`")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    base = big_store.make(args.notes, Path(args.root))
    dest = Path(args.root) / f"catch-up-{args.notes}"
    home, store, work = big_store.clone(base, dest, with_cache=False)
    (dest / "user-home").mkdir()
    folder = store / "projects" / big_store.PROJECT / "notes"
    settle = SETTLE if args.notes >= 10000 else 0.0
    report: dict = {"notes": args.notes, "load": os.getloadavg(), "cp_r_s": copy_reference(folder, dest, settle),
                    "searches": []}
    for i in range(args.searches):
        fresh = other_machine_note(folder, i)
        time.sleep(0.1)
        wall, out = cli(home, work, "search", WORD, "--limit", "50")
        report["searches"].append({"wall_s": wall, "stale": out["stale"], "catching_up": out.get("catching_up"),
                                   "reason": out["stale_reason"],
                                   "newest_found": fresh in {r["id"] for r in out["results"]}})
        if not out.get("catching_up"):
            break
    wall, out = cli(home, work, "sync")
    report["sync"] = {"wall_s": wall, "added": out["added"], "notes": out["notes"], "stale": out["stale"],
                      "rounds": out["rounds"]}
    for name in ("first_search_after_sync", "caught_up_search"):
        wall, out = cli(home, work, "search", WORD, "--limit", "50")
        report[name] = {"wall_s": wall, "stale": out["stale"]}
    if not args.no_setup:
        second = dest / "second" / "home"
        setup_machine(second, store, work)
        wall, out = cli(second, work, "setup")
        report["setup"] = {"wall_s": wall, "outcome": out.get("status"),
                           "steps": [s for s in out.get("steps", []) if s["name"].startswith(("catch up", "verify"))]}
        wall, out = cli(second, work, "search", WORD, "--limit", "50")
        report["search_after_setup"] = {"wall_s": wall, "stale": out["stale"], "catching_up": out.get("catching_up")}
    report["load_after"] = os.getloadavg()
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    ref, cp = report["caught_up_search"]["wall_s"], report["cp_r_s"]
    print(f"{args.notes} notes; load {report['load'][0]:.2f} before, {report['load_after'][0]:.2f} after")
    print(f"  cp -r of the store's notes folder (reference): {cp:6.2f} s")
    print(f"  a search once caught up (reference):           {ref:6.2f} s, stale={report['caught_up_search']['stale']}")
    for i, row in enumerate(report["searches"], start=1):
        have = row["catching_up"]
        print(f"  search {i} during the catch-up: {row['wall_s']:6.2f} s ({row['wall_s'] / ref:4.1f}x the reference), "
              + (f"{have['have']} of {have['total']} here" if have else f"stale={row['stale']} ({row['reason']})")
              + f"; the note saved a moment before: {'found' if row['newest_found'] else 'NOT FOUND'}")
    s = report["sync"]
    print(f"  agentmem sync: {s['wall_s']:6.1f} s ({s['wall_s'] / cp:.1f}x cp -r) for {s['added']} notes "
          f"({s['wall_s'] / max(s['added'], 1) * 1000:.2f} ms a note, {s['rounds']} rounds), {s['notes']} here, "
          f"stale={s['stale']}")
    print(f"  the first search after it: {report['first_search_after_sync']['wall_s']:6.2f} s")
    if "setup" in report:
        s = report["setup"]
        print(f"  agentmem setup on a second new machine: {s['wall_s']:6.1f} s ({s['wall_s'] / cp:.1f}x cp -r), "
              f"outcome {s['outcome']}; its next search: {report['search_after_setup']['wall_s']:.2f} s, "
              f"stale={report['search_after_setup']['stale']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
