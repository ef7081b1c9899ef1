"""Chaos: many machines save notes while the store fails at random; afterwards nothing is lost or doubled.

W writers (each its own machine folder) save N notes each through the real save
path (`pending.persist`, then `delivery.deliver`) while faults are injected:

- folder store: W writer processes; each upload may be refused (Offline), answered
  with a server error (RemoteError), or applied with its reply lost (Offline after
  the write landed);
- bucket store: the real huggingface_hub + hf_xet against the loopback Hub
  stand-in (tests/hubstub.py); the writers are threads of one process (hf_xet's
  local CAS admits one process at a time), and the stand-in refuses connections
  for a moment, answers 500, drops replies before or after applying a batch;
- both: a writer is SIGKILLed between a confirmed upload and its pending cleanup
  (for the bucket store that kills all its threads: a machine crash), and is
  restarted to carry on.

Then every machine retries what is pending until nothing is. The store must hold
exactly the notes written (each once, byte-identical) and a search from a fresh
machine must find every one. Figures are printed; the exit status is 1 if any
note was lost, duplicated or changed.

Run: python bench/chaos.py [--store folder|bucket|both] [--writers 8] [--notes 50] [--seed N]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROJECT = "app"
BUCKET = "alice/agent-memory"
# Seconds per upload attempt. Below store.network's 10 s retry headroom, so an injected 5xx
# surfaces as a failed save instead of being retried inside the client.
ATTEMPT_TIMEOUT = 4.0
# Folder store fault odds per upload (together about one upload in five fails,
# enough that every writer meets every kind; a kill costs a process restart).
FOLDER_ODDS = {"refused": 0.08, "http-500": 0.05, "reply-lost-after-apply": 0.06}
KILLS_PER_FOLDER_WRITER = 1
BUCKET_KILLS = 3
# Bucket store: the next armed fault fires on one of the next FAULT_SPACING matching requests
# (a fair share of saves then fail; docs/benchmarks.md), and connections are refused for 0.05-0.2 s
# OUTAGE_RATE times a second.
FAULT_SPACING = 8
OUTAGE_RATE = 0.5
MAX_RETRY_ROUNDS = 60


def note_body(seed: int, w: int, i: int) -> str:
    rng = random.Random(f"{seed}-{w}-{i}")
    words = ["cache", "bucket", "retry", "deadline", "index", "lock", "merge", "token", "shard", "queue"]
    filler = " ".join(rng.choice(words) for _ in range(rng.randint(5, 400)))
    return f"# Chaos note w{w} n{i}\n\nMarker cw{w}x{i}y from chaoswriter{w}. {filler}\n"


def marker_of(data: bytes) -> tuple[int, int] | None:
    import re

    m = re.search(rb"Marker cw(\d+)x(\d+)y ", data)
    return (int(m.group(1)), int(m.group(2))) if m else None


# ----------------------------------------------------------------------------- child side


class Log:
    """Unbuffered JSON-lines appends, so a SIGKILL loses nothing already written."""

    def __init__(self, path: Path):
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.lock = threading.Lock()

    def write(self, **record) -> None:
        with self.lock:
            os.write(self.fd, (json.dumps(record) + "\n").encode())


def read_lines(path: Path) -> list[dict]:
    try:
        text = path.read_text()
    except FileNotFoundError:
        return []
    out = []
    for line in text.splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue  # a line cut by a kill
    return out


_kill_next: dict[str, tuple[Log, int, int]] = {}


def _install_faults(plan: dict, role: str, rng: random.Random, events: dict) -> None:
    """Patch the fault points into this child process: the folder store's put, and pending cleanup."""
    from agentmem import errors
    from agentmem.uploads import pending

    original_remove = pending.remove

    def remove(home, note_id):
        if note_id in _kill_next:
            log, w, i = _kill_next.pop(note_id)
            log.write(event="fault", kind="killed", w=w, i=i, phase=role)
            os.kill(os.getpid(), signal.SIGKILL)  # uploaded and confirmed, not yet cleaned up
        original_remove(home, note_id)

    pending.remove = remove
    if plan["store"] != "folder":
        return
    from agentmem.store.folder import FolderStore

    original_put = FolderStore.put
    lock = threading.Lock()

    def put(self, path, data):
        with lock:
            roll = rng.random()
        log = events[threading.get_ident()]
        refused, http500, lost = (FOLDER_ODDS[k] for k in ("refused", "http-500", "reply-lost-after-apply"))
        if roll < refused:
            log.write(event="fault", kind="refused")
            raise errors.Offline("injected: connection refused")
        if roll < refused + http500:
            log.write(event="fault", kind="http-500")
            raise errors.RemoteError("injected: the store answered HTTP 500")
        original_put(self, path, data)
        if roll < refused + http500 + lost:
            log.write(event="fault", kind="reply-lost-after-apply")
            raise errors.Offline("injected: the reply was lost after the store applied the write")

    FolderStore.put = put


def killed_plans(work: Path, w: int) -> set[tuple[int, int]]:
    """The planned kills (w, k) of writer w that already struck."""
    return {(r["w"], r["i"]) for r in read_lines(work / f"m{w}" / "events.jsonl") if r.get("kind") == "killed"}


def _writer(plan: dict, w: int, role: str, events: dict) -> None:
    from agentmem.note import document
    from agentmem.search import follow
    from agentmem.store.base import StoreDescription
    from agentmem.uploads import delivery, pending

    work = Path(plan["work"])
    home = work / f"m{w}" / "home"
    journal = Log(work / f"m{w}" / "journal.jsonl")
    log = Log(work / f"m{w}" / "events.jsonl")
    events[threading.get_ident()] = log
    desc = StoreDescription(plan["store"], plan["location"])

    if role == "retry":
        # A planned kill that met no confirmed upload while writing (every upload from its note on failed)
        # strikes at this writer's first confirmed retry instead, so every run has its kills.
        unstruck = [(kw, k) for kw, k in plan["kills"] if kw == w and (kw, k) not in killed_plans(work, w)]
        for round_no in range(1, MAX_RETRY_ROUNDS + 1):
            entries = pending.list_entries(home)
            if not entries:
                return
            for entry in entries:
                if unstruck:
                    _kill_next[entry.id] = (log, w, unstruck[0][1])
                try:
                    outcome = delivery.retry(home, entry.id, timeout=ATTEMPT_TIMEOUT, index=follow.update)
                except Exception as exc:  # noqa: BLE001 - a finding, reported in the figures
                    log.write(event="retry", status="crash", error=type(exc).__name__, round=round_no)
                    continue
                finally:
                    _kill_next.pop(entry.id, None)
                log.write(event="retry", status=outcome.status, round=round_no,
                          error=outcome.error.kind if outcome.error else None)
            time.sleep(0.05 * round_no)
        return

    done = {r["i"] for r in read_lines(work / f"m{w}" / "journal.jsonl")}
    # A kill may land after a note was persisted but before the journal said so: adopt it.
    for entry in pending.list_entries(home):
        _, data = pending.load(home, entry.id)
        mark = marker_of(data)
        if mark and mark[0] == w and mark[1] not in done:
            journal.write(i=mark[1], id=entry.id, sha256=hashlib.sha256(data).hexdigest(), adopted=True)
            done.add(mark[1])
    # A planned kill (w, k) strikes the first upload of writer w at or after note k that is confirmed.
    kill_from = min((k for kw, k in plan["kills"] if kw == w and (kw, k) not in killed_plans(work, w)), default=None)
    for i in range(plan["notes"]):
        if i in done:
            continue
        note = document.build(body=note_body(plan["seed"], w, i), title=None, kind="note", project=PROJECT,
                              agent=f"writer-{w}", tags=[f"chaos-w{w}"])
        data = note.render()
        entry = pending.Entry(id=note.id, store=desc, project=PROJECT, path=document.note_path(PROJECT, note.id),
                              created=note.created)
        pending.persist(home, entry, data)
        journal.write(i=i, id=note.id, sha256=hashlib.sha256(data).hexdigest())
        if kill_from is not None and i >= kill_from:
            _kill_next[note.id] = (log, w, kill_from)
        outcome = delivery.deliver(home, entry, data, timeout=ATTEMPT_TIMEOUT, index=follow.update)
        _kill_next.pop(note.id, None)  # the upload failed, so no cleanup ran: strike at a later note
        log.write(event="save", status=outcome.status, error=outcome.error.kind if outcome.error else None,
                  message=outcome.error.one_line()[:160] if outcome.error else None)


def child_main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("role", choices=["write", "retry"])
    ap.add_argument("plan")
    ap.add_argument("--writers", default="all", help="comma-separated writer numbers run as threads here")
    args = ap.parse_args(argv)
    plan = json.loads(Path(args.plan).read_text())
    writers = range(plan["writers"]) if args.writers == "all" else [int(x) for x in args.writers.split(",")]
    if plan["store"] == "bucket":
        from agentmem.store import network

        network.configure_xet(ATTEMPT_TIMEOUT)
    rng = random.Random(f"{plan['seed']}-{args.role}-{args.writers}-{time.time_ns()}")
    events: dict = {}
    _install_faults(plan, args.role, rng, events)
    threads = [threading.Thread(target=_writer, args=(plan, w, args.role, events)) for w in writers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return 0


# ----------------------------------------------------------------------------- parent side


def _env(plan: dict, extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTMEM_", "HF_"))}
    env.update(PYTHONPATH=str(ROOT), HF_HUB_DISABLE_PROGRESS_BARS="1", HF_HOME=str(Path(plan["work"]) / "hf-home"))
    env.update(extra or {})
    return env


def _spawn(plan_path: Path, role: str, writers: str, env: dict) -> subprocess.Popen:
    log = plan_path.parent / f"stderr-{role}-{writers}-{time.monotonic_ns()}.txt"
    with open(log, "wb") as err:  # a file, not a pipe: a chatty child can never block on a full pipe
        proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--child", role, str(plan_path), "--writers", writers],
            env=env, stdout=subprocess.DEVNULL, stderr=err,
        )
    proc.stderr_path = log
    return proc


def _run_until_done(plan_path: Path, role: str, groups: list[str], env: dict) -> tuple[int, list[str]]:
    """Run one child per group; restart any child that was killed until every one exits cleanly."""
    restarts, problems = 0, []
    running = {g: _spawn(plan_path, role, g, env) for g in groups}
    while running:
        for group, proc in list(running.items()):
            if proc.poll() is None:
                continue
            err = proc.stderr_path.read_text(errors="replace")
            if proc.returncode == -signal.SIGKILL:
                restarts += 1
                running[group] = _spawn(plan_path, role, group, env)
            else:
                if proc.returncode != 0 or "Traceback" in err:
                    problems.append(f"{role} {group}: exit {proc.returncode}: {err.strip()[-800:]}")
                del running[group]
        time.sleep(0.02)
    return restarts, problems


class Injector(threading.Thread):
    """Arms one random fault at a time in the stand-in, firing on a random later request, and now and
    then refuses connections for a moment. Fault frequency thus follows the traffic, not the clock."""

    KINDS = ["http-500", "http-500", "reply-lost", "reply-lost-after-apply"]

    def __init__(self, hub, outage_rate: float, rng: random.Random):
        super().__init__(daemon=True)
        self.hub, self.outage_rate, self.rng = hub, outage_rate, rng
        self.stopping = threading.Event()
        self.faults: list[tuple[str, object]] = []
        self.outages = 0

    def _arm(self):
        kind = self.rng.choice(self.KINDS)
        after = self.rng.randint(0, FAULT_SPACING)
        if kind == "http-500":
            route, action = self.rng.choice(["batch", "paths-info", "info", "xet-token"]), "status"
        elif kind == "reply-lost":
            route, action = self.rng.choice(["batch", "paths-info", "xet-token"]), "drop"
        else:
            route, action = "batch", "drop-after-apply"
        fault = self.hub.inject(route, action, status=500, times=1, after=after)
        self.faults.append((kind, fault))
        return fault

    def run(self):
        armed = self._arm()
        next_outage = time.monotonic() + self.rng.expovariate(self.outage_rate)
        while not self.stopping.wait(0.005):
            if armed.hits:
                armed = self._arm()
            if time.monotonic() >= next_outage:
                self.hub.stop()
                self.outages += 1
                time.sleep(self.rng.uniform(0.05, 0.2))
                self.hub.start()
                next_outage = time.monotonic() + self.rng.expovariate(self.outage_rate)

    def stop(self) -> Counter:
        self.stopping.set()
        self.join()
        self.hub.clear_faults()
        counts = Counter({"refused (outages)": self.outages})
        for kind, fault in self.faults:
            counts[kind] += fault.hits
        return counts


def _search_all(plan: dict, env: dict, writers: int) -> tuple[int, list[str]]:
    """A fresh machine searches for each writer's notes through the CLI; returns how many it found."""
    work = Path(plan["work"])
    home, src = work / "reader" / "home", work / "reader" / "src"
    src.mkdir(parents=True)
    home.mkdir(parents=True)
    (home / "config.toml").write_text(
        f'agent = "reader"\n[store]\nkind = "{plan["store"]}"\nlocation = "{plan["location"]}"\n'
        f'[network]\ntimeout = 60\n[projects]\n"{src}" = "{PROJECT}"\n'  # every search asks the store
    )
    env = dict(env, AGENTMEM_HOME=str(home))
    found, problems = 0, []
    # A machine joining a store is brought all the way by setup, as `sync` does; a search alone fetches only
    # the newest notes within its catch-up budget and says it is catching up.
    done = subprocess.run([sys.executable, "-m", "agentmem", "sync"], cwd=src, env=env, capture_output=True,
                          text=True, timeout=600)
    if done.returncode != 0:
        problems.append(f"sync: exit {done.returncode}: {done.stderr.strip()[-300:]}")
    for w in range(writers):
        expected = {r["id"] for r in read_lines(work / f"m{w}" / "journal.jsonl")}
        # The default (ranked) search for the writer's word, and a literal search for its marker prefix.
        for query in ([f"chaoswriter{w}"], [f"cw{w}x", "--mode", "literal"]):
            done = subprocess.run([sys.executable, "-m", "agentmem", "search", *query, "--limit", "200", "--json"],
                                  cwd=src, env=env, capture_output=True, text=True, timeout=300)
            try:
                out = json.loads(done.stdout)
            except ValueError:
                problems.append(f"search {query}: exit {done.returncode}: {done.stderr.strip()[-300:]}")
                continue
            if out.get("stale"):
                problems.append(f"search {query} was stale: {out.get('stale_reason')}")
            got = {r["id"] for r in out.get("results", [])}
            if query[0].startswith("cw"):
                found += len(got & expected)
            if got != expected:
                problems.append(f"search {query}: {len(expected - got)} missing, {len(got - expected)} unexpected")
    return found, problems


def run(store: str, *, writers: int = 8, notes: int = 50, seed: int = 20261130, work: Path | None = None,
        outage_rate: float = OUTAGE_RATE) -> dict:
    """Run the chaos scenario on one store kind; returns the figures."""
    work = Path(work or tempfile.mkdtemp(prefix=f"chaos-{store}-"))
    work.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    started = time.monotonic()
    hub = injector = None
    if store == "folder":
        location = str(work / "store")
        from agentmem.store.folder import create_store

        create_store(location)  # as setup creates it: a save never creates a store's folder
        env = _env({"work": str(work)})
        kills = [(w, i) for w in range(writers) for i in rng.sample(range(notes), KILLS_PER_FOLDER_WRITER)]
        groups = [str(w) for w in range(writers)]  # one process per writer
    else:
        sys.path.insert(0, str(ROOT))
        from tests.hubstub import Hub

        hub = Hub(work / "hub").start()
        token = hub.add_user("alice")
        hub.add_bucket(BUCKET, private=True)
        location = BUCKET
        env = _env({"work": str(work)}, {"HF_ENDPOINT": hub.url, "HF_TOKEN": token})
        all_pairs = [(w, i) for w in range(writers) for i in range(notes)]
        kills = rng.sample(all_pairs, BUCKET_KILLS)
        groups = ["all"]  # one process, writers as threads: the local CAS admits one process at a time
    for w in range(writers):
        (work / f"m{w}" / "home").mkdir(parents=True, exist_ok=True)
    plan = {"store": store, "location": location, "writers": writers, "notes": notes, "seed": seed,
            "work": str(work), "kills": kills}
    plan_path = work / "plan.json"
    plan_path.write_text(json.dumps(plan))

    if hub is not None:
        injector = Injector(hub, outage_rate, random.Random(seed + 1))
        injector.start()
    restarts, problems = _run_until_done(plan_path, "write", groups, env)
    more_restarts, more = _run_until_done(plan_path, "retry", groups, env)  # every machine retries what is pending
    restarts += more_restarts
    problems += more
    hub_faults = injector.stop() if injector is not None else Counter()

    # What the writers recorded.
    expected: dict[str, tuple[int, int, str]] = {}
    events: list[dict] = []
    for w in range(writers):
        for r in read_lines(work / f"m{w}" / "journal.jsonl"):
            expected[r["id"]] = (w, r["i"], r["sha256"])
        events += read_lines(work / f"m{w}" / "events.jsonl")
    faults = Counter(e["kind"] for e in events if e.get("event") == "fault")
    faults.update(hub_faults)
    saves = Counter(e["status"] for e in events if e.get("event") == "save")
    killed_writing = sum(1 for e in events if e.get("kind") == "killed" and e.get("phase") != "retry")
    interrupted = len(expected) - sum(saves.values()) - killed_writing
    pending_by_error = Counter(e["error"] for e in events if e.get("event") == "save" and e["status"] == "pending")
    retries = [e for e in events if e.get("event") == "retry"]
    from agentmem.uploads import pending

    pending_left = sum(len(pending.list_entries(work / f"m{w}" / "home")) for w in range(writers))

    # Search before reading bytes here: hf_xet's local CAS admits one process at a time.
    found, more = _search_all(plan, env, writers)
    problems += more

    # What the store holds.
    prefix = f"projects/{PROJECT}/notes/"
    if store == "folder":
        base = Path(location) / prefix
        held = {p.name[:-3]: p.read_bytes() for p in base.iterdir() if p.name.endswith(".md")} if base.exists() else {}
        strays = [p.name for p in base.iterdir() if not p.name.endswith(".md")] if base.exists() else []
    else:
        files = dict(hub.buckets[BUCKET].files)
        held = {p[len(prefix):-3]: hub.read_file_bytes(BUCKET, p) for p in files if p.startswith(prefix)}
        strays = [p for p in files if not p.startswith(prefix) or not p.endswith(".md")]
        hub.stop()
    lost = sorted(set(expected) - set(held))
    extra = sorted(set(held) - set(expected))
    markers = Counter(marker_of(data) for data in held.values())
    strays += [f"unmarked object {n}" for n in range(markers.pop(None, 0))]  # not a note a writer wrote
    doubled_markers = sum(n - 1 for n in markers.values() if n > 1)
    mismatched = [i for i in set(expected) & set(held) if hashlib.sha256(held[i]).hexdigest() != expected[i][2]]
    return {
        "store": store,
        "writers": writers,
        "notes_per_writer": notes,
        "notes_written": len(expected),
        "faults_injected": dict(sorted(faults.items())),
        "writer_restarts_after_kill": restarts,
        "saves_confirmed_at_once": saves.get("saved", 0),
        "saves_left_pending": saves.get("pending", 0),
        "saves_cut_short_by_a_kill": interrupted,
        "pending_reasons": dict(sorted(pending_by_error.items())),
        "retries": len(retries),
        "retry_rounds": max((e["round"] for e in retries), default=0),
        "in_store": len(held),
        "lost": len(lost),
        "duplicated": len(extra) + doubled_markers,
        "changed_bytes": len(mismatched),
        "stray_objects": len(strays),
        "pending_left": pending_left,
        "search_found": found,
        "problems": problems,
        "seconds": round(time.monotonic() - started, 1),
    }


def format_figures(fig: dict) -> str:
    faults = ", ".join(f"{k} {v}" for k, v in fig["faults_injected"].items())
    reasons = ", ".join(f"{k} {v}" for k, v in fig["pending_reasons"].items()) or "none"
    lines = [
        f"chaos on the {fig['store']} store: {fig['writers']} writers x {fig['notes_per_writer']} notes "
        f"in {fig['seconds']} s",
        f"  notes written          {fig['notes_written']}",
        f"  faults injected        {faults}",
        f"  writer restarts        {fig['writer_restarts_after_kill']}",
        f"  saves confirmed/pending {fig['saves_confirmed_at_once']}/{fig['saves_left_pending']} "
        f"(pending because: {reasons}); killed mid-save: {fig['faults_injected'].get('killed', 0)} "
        f"at cleanup + {fig['saves_cut_short_by_a_kill']} other threads",
        f"  retries                {fig['retries']} in {fig['retry_rounds']} round(s)",
        f"  in store               {fig['in_store']}",
        f"  lost                   {fig['lost']}",
        f"  duplicated             {fig['duplicated']}",
        f"  changed bytes          {fig['changed_bytes']}",
        f"  pending left           {fig['pending_left']}",
        f"  found by search        {fig['search_found']}/{fig['notes_written']}",
    ]
    lines += [f"  problem: {p}" for p in fig["problems"]]
    return "\n".join(lines)


def ok(fig: dict) -> bool:
    return (
        fig["lost"] == 0 and fig["duplicated"] == 0 and fig["changed_bytes"] == 0 and fig["pending_left"] == 0
        and fig["stray_objects"] == 0 and fig["search_found"] == fig["notes_written"] == fig["in_store"]
        and not fig["problems"]
    )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        return child_main(argv[1:])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", choices=["folder", "bucket", "both"], default="both")
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--notes", type=int, default=50)
    ap.add_argument("--seed", type=int, default=20261130)
    ap.add_argument("--outage-rate", type=float, default=OUTAGE_RATE, help="bucket outages per second")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    if not os.environ.get("HF_HOME"):
        os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="chaos-hf-home-")
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    import shutil

    good = True
    for store in (["folder", "bucket"] if args.store == "both" else [args.store]):
        work = Path(tempfile.mkdtemp(prefix=f"chaos-{store}-"))
        try:
            fig = run(store, writers=args.writers, notes=args.notes, seed=args.seed, work=work,
                      outage_rate=args.outage_rate)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        print(format_figures(fig), flush=True)
        good = good and ok(fig)
    if "chaos-hf-home-" in os.environ["HF_HOME"]:  # ours, made above
        shutil.rmtree(os.environ["HF_HOME"], ignore_errors=True)
    return 0 if good else 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
