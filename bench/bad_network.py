"""What a misbehaving Hub costs a search: time and memory, against the loopback stand-in's faults.

Claims checked (exit status 1 if one fails):
- a feed that trickles a byte every 2 s and never a newline, and bucket info that trickles
  the same way, cost a refresh at most its budget (plus a second of slack);
- a feed that streams one endless line is read only up to hubhttp.MAX_LINE_BYTES: the bytes
  the stand-in wrote before the client hung up, and the process's peak memory, stay bounded;
- against a Hub that hangs (accepts, never answers), the first `agentmem search` returns
  within `[network] check_timeout` (plus start-up) and the next ones at once, without a
  request; the reference beside it, in the same run, is the same search with the check
  given the whole budget (what every search cost before), run once.

Run: python bench/bad_network.py [--timeout SECONDS] [--check SECONDS] [--searches N]
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="bench-hf-home-")
atexit.register(shutil.rmtree, os.environ["HF_HOME"], True)  # a scratch folder, gone at exit
os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
STARTUP_ALLOWANCE = 3.0  # seconds: the CLI's start-up on a loaded 2-core machine is well under this
MiB = 1024 * 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=20.0, help="[network] timeout (the budget)")
    ap.add_argument("--check", type=float, default=None, help="[network] check_timeout (default: the shipped one)")
    ap.add_argument("--searches", type=int, default=4, help="searches against the hung Hub")
    args = ap.parse_args()

    from agentmem.config import DEFAULT_CHECK_TIMEOUT
    from agentmem.note import document
    from agentmem.replica import cache
    from agentmem.search import follow
    from agentmem.store import hubhttp
    from agentmem.store.base import StoreDescription
    from tests.hubstub import Hub

    check = DEFAULT_CHECK_TIMEOUT if args.check is None else args.check
    work = Path(tempfile.mkdtemp(prefix="bench-bad-network-"))
    atexit.register(shutil.rmtree, work, True)
    hub = Hub(work / "hub").start()
    token = hub.add_user("alice")
    os.environ.update(HF_ENDPOINT=hub.url, HF_TOKEN=token)
    hub.add_bucket("alice/agent-memory")
    store = StoreDescription("bucket", "alice/agent-memory")
    failures: list[str] = []

    def another_machine_saves(count: int) -> None:
        for i in range(count):
            note = document.build(body=f"# finding {i}\nmore text\n", title=None, kind="note", project="app", agent="m2")
            hub.put_file("alice/agent-memory", document.note_path("app", note.id), note.render())

    home = work / "machine"
    another_machine_saves(2)
    cache.refresh(home, store, "app", timeout=args.timeout, index=follow.update)
    cache.refresh(home, store, "app", timeout=args.timeout, index=follow.update)  # on a feed cursor from here on

    budget = 6.0  # the in-process refreshes: short, so the trickle cases finish quickly
    for route in ("events", "info"):
        another_machine_saves(1)
        fault = hub.inject(route, "trickle", delay=2.0)
        started = time.monotonic()
        status = cache.refresh(home, store, "app", timeout=budget, index=follow.update)
        took = time.monotonic() - started
        hub.clear_faults()
        print(f"{route} trickling a byte every 2 s: refresh took {took:.2f} s (budget {budget:g} s), "
              f"stale {status.stale}, {fault.sent} byte(s) sent; {status.how or status.reason}")
        if took > budget + 1:
            failures.append(f"{route} trickle took {took:.2f} s")

    another_machine_saves(1)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    fault = hub.inject("events", "endless")
    started = time.monotonic()
    status = cache.refresh(home, store, "app", timeout=budget, index=follow.update)
    took = time.monotonic() - started
    hub.clear_faults()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"feed streaming one endless line: {fault.sent / MiB:.1f} MiB sent before the client hung up "
          f"(bound {hubhttp.MAX_LINE_BYTES / MiB:g} MiB a line), peak RSS {before} -> {peak} MB, {took:.2f} s, "
          f"stale {status.stale}; {status.how}")
    if fault.sent > hubhttp.MAX_LINE_BYTES + 16 * MiB or peak - before > 200:
        failures.append("endless line not bounded")

    src = work / "src"
    src.mkdir()

    def machine(name: str, check_seconds: float) -> dict:
        mhome = work / name
        mhome.mkdir()
        (mhome / "config.toml").write_text(
            f'agent = "bench"\n[store]\nkind = "bucket"\nlocation = "alice/agent-memory"\n[network]\n'
            f"timeout = {args.timeout:g}\ncheck_timeout = {check_seconds:g}\n[projects]\n\"{src}\" = \"app\"\n")
        return {"PATH": os.environ.get("PATH", ""), "HOME": str(work), "AGENTMEM_HOME": str(mhome),
                "HF_HOME": str(work / f"hf-{name}"), "HF_ENDPOINT": hub.url, "HF_TOKEN": token,
                "PYTHONPATH": str(ROOT)}

    def search(env: dict) -> tuple[float, dict]:
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "agentmem", "search", "finding", "--json"], cwd=src, env=env,
                              capture_output=True, text=True, timeout=args.timeout * 3 + 60)
        return time.monotonic() - started, json.loads(done.stdout or "{}")

    shipped, reference = machine("shipped", check), machine("reference", args.timeout)
    for env in (shipped, reference):
        search(env)  # the first look, while the Hub still answers
    hub.inject("*", "hang")
    walls = []
    for n in range(args.searches):
        asked = len(hub.requests())
        took, out = search(shipped)
        walls.append(took)
        print(f"hung Hub, search {n + 1} (check_timeout {check:g} s): {took:.2f} s, stale {out.get('stale')}, "
              f"{len(hub.requests()) - asked} request(s); {out.get('stale_reason', '')[:90]}")
    took, out = search(reference)
    print(f"hung Hub, reference (check given the whole {args.timeout:g} s budget): {took:.2f} s, "
          f"stale {out.get('stale')}")
    if walls[0] > check + STARTUP_ALLOWANCE or any(w > STARTUP_ALLOWANCE for w in walls[1:]):
        failures.append(f"hung-Hub searches took {[round(w, 2) for w in walls]}")
    hub.stop()
    for f in failures:
        print("FAIL:", f)
    print("OK" if not failures else "FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
