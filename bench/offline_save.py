"""How long `agentmem save` takes when the Hub is out of reach: it must return within the network deadline.

Each case runs the real CLI (`python -m agentmem save`, a subprocess, as an agent
would) against the loopback stand-in in a failure mode, and checks that the
note ends pending (exit status 10) within the deadline plus process start-up.

Cases: refused (nothing listens), silent (accepts, never answers), failing
(every request answers 503), drop-batch (the upload's reply is lost),
silent-xet (only the Xet token endpoint hangs: hf_xet's own timeouts apply).

Run: python bench/offline_save.py [--timeout SECONDS] [--cases refused,silent,...]
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
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

# Process start-up and imports of the CLI on this machine are well under this (docs/benchmarks.md).
STARTUP_ALLOWANCE = 3.0


def main() -> int:
    from agentmem.config import DEFAULT_NETWORK_TIMEOUT as DEFAULT_TIMEOUT
    from tests.hubstub import Hub

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help=f"network deadline (default {DEFAULT_TIMEOUT})")
    ap.add_argument("--cases", default="refused,silent,failing,drop-batch,silent-xet")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench-offline-"))
    atexit.register(shutil.rmtree, work, True)
    failures = []
    for case in args.cases.split(","):
        hub = Hub(work / case / "hub").start()
        token = hub.add_user("alice")
        hub.add_bucket("alice/agent-memory")
        if case == "refused":
            hub.stop()
        elif case == "silent":
            hub.inject("*", "slow", delay=args.timeout + 30)
        elif case == "failing":
            hub.inject("*", status=503)
        elif case == "silent-xet":
            hub.inject("xet-token", "slow", delay=args.timeout + 30)
        elif case == "drop-batch":
            hub.inject("batch", "drop-after-apply")
        home, src = work / case / "home", work / case / "src"
        src.mkdir(parents=True)
        home.mkdir(parents=True)
        (home / "config.toml").write_text(
            f'agent = "bench"\n[store]\nkind = "bucket"\nlocation = "alice/agent-memory"\n'
            f"[network]\ntimeout = {args.timeout}\n[projects]\n\"{src}\" = \"app\"\n"
        )
        env = {
            "PATH": os.environ.get("PATH", ""), "HOME": str(work / case), "AGENTMEM_HOME": str(home),
            "HF_HOME": str(work / case / "hf-home"), "HF_ENDPOINT": hub.url, "HF_TOKEN": token,
            "HF_HUB_DISABLE_PROGRESS_BARS": "1", "PYTHONPATH": str(ROOT),
        }
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "agentmem", "save", "--json"], input="# Bench\nan offline note\n",
            cwd=src, env=env, capture_output=True, text=True, timeout=args.timeout * 4 + 60,
        )
        elapsed = time.perf_counter() - started
        hub.clear_faults()
        hub.stop()
        try:
            reason = json.loads(done.stdout).get("reason", {}).get("error")
        except ValueError:
            reason = None
        limit = args.timeout + STARTUP_ALLOWANCE
        ok = done.returncode == 10 and elapsed <= limit
        print(f"{case:11s} exit {done.returncode:2d}  {elapsed:6.2f} s  (limit {limit:.0f} s)  reason {reason}  {'ok' if ok else 'FAIL'}")
        if not ok:
            failures.append(case)
            print(done.stderr[-500:])
    print("OK" if not failures else f"FAILED: {', '.join(failures)}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
