"""What `agentmem review` costs at 10k notes, and what records cost a search that finds nothing new.

    python bench/review.py [--notes 10000] [--repeat 5] [--json]

A marked folder store holds `--notes` synthetic notes (search_latency.py's generator) of which 1 in
100 is a near-duplicate of the one before (a word changed), 1 in 100 has a review date in the past,
and 1 in 200 is corrected twice; one machine's cache holds them all and its index is built. Then,
medians of `--repeat` fresh processes (`python -m agentmem`, so a few ms of `site` above the
installed helper's start):

- `search WORD --json` with nothing new, before any record exists (the reference);
- the same after 1 in 100 notes was retracted and 20 pinned (records in the store, synced once), and
  in this process what a search spends on records (`states.project_states`), with and without them;
- `review --json` (goal: under 2 s at 10k notes; its CPU time beside it), and `review.queue` in this
  process.

The planted near-duplicates, due notes and double corrections must all be in the queue and every
search must come back `stale: false`; the script exits 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

GOAL_SECONDS = 2.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--notes", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    from search_latency import Generator, folder_machine, settle

    from agentmem import config
    from agentmem.memory import review
    from agentmem.note import document
    from agentmem.store.folder import FolderStore, create_store

    work = Path(tempfile.mkdtemp(prefix="bench-review-"))
    home, store_dir, checkout = folder_machine(work, cache_only=False)
    create_store(str(store_dir))
    # A first sync of 10k notes on a slow shared disk outlasts the default 20 s budget (fsync per note).
    (home / "config.toml").write_text((home / "config.toml").read_text() + "\n[network]\ntimeout = 900\n")
    folder = store_dir / "projects" / "big" / "notes"
    folder.mkdir(parents=True)
    gen = Generator()
    planted = {"near-duplicate": set(), "review-due": set(), "corrected-repeatedly": set()}
    previous: tuple[str, bytes] | None = None
    ids: list[str] = []
    for i in range(args.notes):
        note_id, data = gen.note(i)
        if i % 100 == 99 and previous is not None:  # a near-duplicate of the note before: one word changed
            parsed = document.parse(previous[1])
            words = parsed.body.split()
            words[len(words) // 2] = "changed"
            twin = document.build(body=" ".join(words), title=parsed.title + " again", kind="note", project="big",
                                  agent="bench", note_id=note_id)
            data = twin.render()
            planted["near-duplicate"].add((previous[0], note_id))
        elif i % 100 == 50:
            parsed = document.parse(data)
            data = document.build(body=parsed.body, title=parsed.title, kind="note", project="big", agent="bench",
                                  note_id=note_id, review_by="2025-06-01").render()
            planted["review-due"].add(note_id)
        elif i % 200 in (20, 21) and i >= 200:  # the second correction of a note corrected at i % 200 == 10
            target = ids[i - i % 200 + 10 - 200]
            parsed = document.parse(data)
            data = document.build(body=parsed.body, title=parsed.title, kind="note", project="big", agent="bench",
                                  note_id=note_id, corrects=target).render()
            planted["corrected-repeatedly"].add(target)
        (folder / f"{note_id}.md").write_bytes(data)
        ids.append(note_id)
        previous = (note_id, data)
    env = dict(os.environ, AGENTMEM_HOME=str(home), PYTHONPATH=str(REPO))
    query = "changed"

    def cli(*a: str) -> dict:
        done = subprocess.run([sys.executable, "-m", "agentmem", *a, "--json"], cwd=checkout, env=env,
                              capture_output=True, text=True, check=True)
        return json.loads(done.stdout)

    def median(fn) -> float:
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    failures: list[str] = []

    def fresh_search() -> None:
        if cli("search", query)["stale"]:
            failures.append("a search came back stale")

    started = time.perf_counter()
    cli("sync")  # the first sync (as setup brings a joining machine all the way), then the index build
    cli("search", query)
    first_sync = time.perf_counter() - started
    settle(folder)  # from here on, nothing new is one stat
    cli("search", query)
    report: dict = {"notes": args.notes, "first_sync_s": round(first_sync, 2)}
    report["search_nothing_new_no_records_s"] = median(fresh_search)
    store = FolderStore(store_dir)
    for n, note_id in enumerate(ids[5::100]):
        store.put(*_record("retract", note_id))
        if n < 20:
            store.put(*_record("pin", ids[7 + 100 * n]))
    cli("search", query)  # the records arrive
    settle(folder)
    cli("search", query)
    report["search_nothing_new_with_records_s"] = median(fresh_search)
    report["records"] = len(ids[5::100]) + 20
    queue: dict = {}

    def run_review() -> None:
        queue.update(cli("review"))

    before = os.times()
    report["review_cli_s"] = median(run_review)
    after = os.times()
    # CPU time of the review processes: on a shared, loaded machine wall time also counts waiting for a core.
    report["review_cli_cpu_s"] = round((after.children_user + after.children_system - before.children_user
                                        - before.children_system) / args.repeat, 3)
    cfg = config.load(home)
    report["states_with_records_us"] = _states_us(home, cfg.store, "big")
    report["states_without_records_us"] = _states_us(home, cfg.store, "none")
    started = time.perf_counter()
    review.queue(str(home), cfg, "big")
    report["review_library_s"] = round(time.perf_counter() - started, 3)
    found = {kind: {tuple(i["notes"]) if kind == "near-duplicate" else i["notes"][0]
                    for i in queue["items"] if i["kind"] == kind} for kind in planted}
    retracted = set(ids[5::100])
    for kind, wanted in planted.items():
        live = {w for w in wanted if not (set(w) if isinstance(w, tuple) else {w}) & retracted}
        missing = live - found[kind]
        report[f"{kind}_planted"], report[f"{kind}_found"] = len(live), len(found[kind])
        if missing:
            failures.append(f"{len(missing)} planted {kind} item(s) missing from the queue")
    if report["review_cli_s"] >= GOAL_SECONDS:
        failures.append(f"review took {report['review_cli_s']:.2f} s, over the {GOAL_SECONDS:g} s goal")
    report["failures"] = failures
    import shutil

    shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            shown = f"{value * 1000:.1f} ms" if key.endswith("_s") and isinstance(value, float) and value < 10 else value
            shown = f"{value} us" if key.endswith("_us") else shown
            print(f"{key:40} {shown}")
    return 1 if failures else 0


def _states_us(home: Path, store, project: str) -> float:
    """Microseconds a search spends on records (their states: a stat, records.json, pending), median of 200."""
    from agentmem.replica import states

    times = []
    for _ in range(200):
        start = time.perf_counter()
        states.project_states(str(home), store, project)
        times.append(time.perf_counter() - start)
    return round(statistics.median(times) * 1e6, 1)


def _record(kind: str, note_id: str) -> tuple[str, bytes]:
    from agentmem.note import records

    record = records.build(kind, note_id, "big", "bench")
    return record.path(), record.render()


if __name__ == "__main__":
    sys.exit(main())
