"""Search right after a change at scale: a note another machine put into a big folder store, this machine's
own save, and notes arriving while an agent searches.

    python bench/after_change.py [--notes 100000] [--root /tmp/agentmem-big] [--rounds 5] [--gap 2.5]
                                 [--seconds 10] [--json]

A copy of big_store.py's store (notes hard-linked) and of its caught-up machine. Every search is a fresh CLI
process, `search arrived` (asks the store: a folder stat, a listing when it changed); the reference is the same
search with nothing changed, timed in the same run, and each figure is printed beside it as a ratio:

- `other`: `--rounds` times, another machine saves one note into the store (`agentmem save` on a second machine
  using the same store, so its witnessed upload is in the store's journal), `--gap` seconds pass, one search
  (timed), then the search after it (`other_next`: settled again);
- `hand`: the same with a note copied into the store by hand (a temp file renamed into place, as a sync tool
  or a person would: no journal entry), and the search after it (`hand_next`);
- `own`: `--rounds` times, this machine saves a note (`agentmem save`, timed) and searches at once (timed);
- `paired`: a settled search before each of those rounds, so each figure is also given against searches run
  under the load of the same minutes (the machine is shared);
- `arriving` (`--seconds` > 0): a writer puts one note a second while searches run back to back, each
  followed by `search arrived --offline` (the cache alone, just after the refresh changed it).

Each answer is checked for the notes written so far: a missing one is counted, never hidden.
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
from agentmem.note import document
folder, seconds = sys.argv[1], float(sys.argv[2])
end = time.time() + seconds
i = 0
while True:
    n = document.build(body=f"arrived {i}", title=f"arrived {i}", kind="note", project="big", agent="writer")
    tmp = os.path.join(folder, ".tmp-" + n.id)
    with open(tmp, "wb") as fh:
        fh.write(n.render())
    os.rename(tmp, os.path.join(folder, n.id + ".md"))
    print(n.id, flush=True)
    i += 1
    if time.time() >= end:
        break
    time.sleep(1.0)
"""


def _env(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTMEM_") and k != "PYTHONDONTWRITEBYTECODE"}
    return env | {"AGENTMEM_HOME": str(home)}


def search(home: Path, work: Path, *extra: str) -> tuple[float, dict]:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "agentmem", "search", WORD, "--limit", "200", "--json", *extra],
                          cwd=work, env=_env(home), capture_output=True, text=True, check=True)
    return time.perf_counter() - t0, json.loads(done.stdout)


def searches(home: Path, work: Path, seconds: float, *extra: str) -> list[tuple[float, dict]]:
    out: list[tuple[float, dict]] = []
    end = time.time() + seconds
    while not out or time.time() < end:
        out.append(search(home, work, *extra))
    return out


def other_machine_note(home: Path, folder: Path) -> str:
    """One note put into the store as another machine's save would (a temp file renamed into place)."""
    done = subprocess.run([sys.executable, "-c", WRITER, str(folder), "0"], env=_env(home), capture_output=True,
                          text=True, check=True)
    return done.stdout.split()[0]


def own_save(home: Path, work: Path, i: int, who: str = "own") -> tuple[float, str]:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "agentmem", "save", "--title", f"arrived {who} {i}", "--text",
                           f"arrived {who} {i}", "--json"], cwd=work, env=_env(home), capture_output=True, text=True,
                          check=True)
    return time.perf_counter() - t0, json.loads(done.stdout)["id"]


def summary(walls: list[float], reference: float | None = None) -> dict:
    out = {"searches": len(walls), "median_s": statistics.median(walls), "min_s": min(walls), "max_s": max(walls)}
    if reference:
        out["x_reference"] = out["median_s"] / reference
    return out


def _found(answer: dict) -> set[str]:
    return {r["id"] for r in answer["results"]}


def main(argv=None) -> int:
    import big_store
    from search_latency import settle

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--notes", type=int, default=100000)
    ap.add_argument("--root", default=os.path.join("/tmp", "agentmem-big"))
    ap.add_argument("--rounds", type=int, default=5, help="one-change rounds of each kind")
    ap.add_argument("--gap", type=float, default=2.5, help="seconds between another machine's note and the search")
    ap.add_argument("--seconds", type=float, default=10.0, help="notes arriving once a second (0: skip)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    base = big_store.make(args.notes, Path(args.root))
    home, store, work = big_store.clone(base, Path(args.root) / f"after-change-{args.notes}")
    folder = store / "projects" / big_store.PROJECT / "notes"
    other_home = home.parent / "other-home"  # another machine using the same store, its cache empty
    other_home.mkdir()
    big_store.config(other_home, store, work)
    searches(home, work, 0.1)  # the copied store is another folder: one full listing
    settle(folder)
    searches(home, work, 0.1)  # settled
    quiet = [t for t, _ in searches(home, work, min(max(args.seconds, 3), 5))]
    reference = statistics.median(quiet)
    report: dict = {"notes": args.notes, "load": os.getloadavg(), "quiet": summary(quiet)}
    written: list[str] = []
    missing = 0
    other, other_next, hand, hand_next, paired = [], [], [], [], []
    for i in range(args.rounds):
        for after, after_next in ((other, other_next), (hand, hand_next)):
            paired.append(search(home, work)[0])  # a settled search just before: the pair's reference
            written.append(own_save(other_home, work, i, "other")[1] if after is other
                           else other_machine_note(home, folder))
            time.sleep(args.gap)
            wall, answer = search(home, work)
            after.append(wall)
            missing += len(set(written) - _found(answer))
            after_next.append(search(home, work)[0])
    report["other"] = summary(other, reference) | {"gap_s": args.gap}
    report["other_next"] = summary(other_next, reference)
    report["hand"] = summary(hand, reference) | {"gap_s": args.gap}
    report["hand_next"] = summary(hand_next, reference)
    saves, own = [], []
    for i in range(args.rounds):
        settle(folder)
        paired.append(search(home, work)[0])
        wall, note_id = own_save(home, work, i)
        saves.append(wall)
        written.append(note_id)
        wall, answer = search(home, work)
        own.append(wall)
        missing += len(set(written) - _found(answer))
    report["own_save"] = summary(saves)
    report["own"] = summary(own, reference)
    report["missing_from_answers"] = missing
    # The same ratios against the settled searches run between them (the load of the moment, not of the start)
    report["paired"] = summary(paired)
    for name in ("other", "other_next", "hand", "hand_next", "own"):
        report[name]["x_paired"] = report[name]["median_s"] / report["paired"]["median_s"]
    if args.seconds > 0:
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(folder), str(args.seconds)],
                                  stdout=subprocess.PIPE, text=True, env=_env(home))
        online, offline = [], []
        end = time.time() + args.seconds
        while time.time() < end:  # each search that refreshed is followed by one from the cache alone
            online += searches(home, work, 0)
            offline += searches(home, work, 0, "--offline")
        arrived = writer.communicate()[0].split()
        last = search(home, work)[1]
        report["arriving"] = summary([t for t, _ in online], reference) | {
            "written": len(arrived), "missing_from_last_answer": len(set(arrived) - _found(last))}
        report["arriving_offline"] = summary([t for t, _ in offline], reference)
    report["load_after"] = os.getloadavg()
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{args.notes} notes; load {report['load'][0]:.2f} before, {report['load_after'][0]:.2f} after")
    labels = {"quiet": "settled (reference)", "paired": "settled, between the rounds below",
              "other": f"{args.gap:g} s after another machine's save",
              "other_next": "the search after that",
              "hand": f"{args.gap:g} s after a note copied in by hand", "hand_next": "the search after that",
              "own_save": "this machine's save (the save itself)",
              "own": "right after this machine's save", "arriving": "a note arriving each second",
              "arriving_offline": "  --offline right after"}
    for name, label in labels.items():
        row = report.get(name)
        if row is None:
            continue
        ratio = f", {row['x_reference']:.2f}x the reference" if "x_reference" in row else ""
        ratio += f", {row['x_paired']:.2f}x those between" if "x_paired" in row else ""
        print(f"  {label:<40} {row['searches']:3d}: median {row['median_s'] * 1000:7.1f} ms "
              f"(min {row['min_s'] * 1000:6.1f}, max {row['max_s'] * 1000:7.1f}){ratio}")
    print(f"  notes missing from an answer after they were written: {missing}"
          + (f"; arriving: {report['arriving']['written']} written, "
             f"{report['arriving']['missing_from_last_answer']} missing from the last answer"
             if "arriving" in report else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
