"""How long the hook commands take, beside a bare interpreter start.

    python bench/hook_latency.py [runs]

Runs each command `runs` times (default 20) in a throwaway AGENTMEM_HOME with
three pending notes, and prints the median and worst wall time in milliseconds.
The hooks run through the launcher of a helper venv built from this checkout,
as setup installs them (see bench/search_latency.py).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def measure(argv, env, stdin, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, env=env, input=stdin, capture_output=True, check=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), max(times)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "agentmem"
        for i in range(3):  # pending entries are only counted, never parsed, by the reminder
            (home / "pending" / f"20261130T000000000Z-aaaaaaa{i}").mkdir(parents=True)
        from agentmem.machine import helper_venv

        [launcher] = helper_venv.install(home, ROOT)
        py = str(helper_venv.venv_python(home / ".venv"))
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}
        env["AGENTMEM_HOME"] = str(home)
        stop_in = json.dumps({"hook_event_name": "Stop", "stop_hook_active": True}).encode()
        # A second machine folder with nothing pending, for the stop hook's end-of-session reflection
        # (hooks/reflect.py): off, and on for a session it already asked (each later stop of that session).
        quiet = Path(tmp) / "quiet"
        quiet.mkdir()
        (quiet / "config.toml").write_text("[hooks]\nenabled = true\nreflect = false\n")
        (quiet / "hook-reflect-state.json").write_text(json.dumps({"asked": {"s-asked": time.time()}}))
        env_quiet = dict(env, AGENTMEM_HOME=str(quiet))
        session_in = json.dumps({"hook_event_name": "Stop", "session_id": "s-asked", "stop_hook_active": False}).encode()
        fresh_in = json.dumps({"hook_event_name": "Stop", "session_id": "s-new", "stop_hook_active": False}).encode()
        cases = [
            ("python -c pass (helper venv)", [py, "-c", "pass"], b""),
            ("hook reminder (start)", [launcher, "hook", "reminder", "--runtime", "codex"], b"{}"),
            ("hook reminder (prompt)", [launcher, "hook", "reminder", "--event", "prompt", "--runtime", "claude"], b"{}"),
            ("hook reminder (start, gemini)", [launcher, "hook", "reminder", "--runtime", "gemini"], b"{}"),
            ("hook reminder (start, copilot)", [launcher, "hook", "reminder", "--runtime", "copilot"], b"{}"),
            ("hook stop (stop_hook_active)", [launcher, "hook", "stop", "--runtime", "claude"], stop_in),
            ("hook stop (reflect off)", [launcher, "hook", "stop", "--runtime", "claude"], fresh_in, env_quiet),
            ("hook stop (reflect, asked before)", [launcher, "hook", "stop", "--runtime", "claude"], session_in,
             env_quiet),
        ]
        print(f"{runs} runs each, {launcher} ({sys.version.split()[0]})")
        for name, argv, stdin, *case_env in cases:
            median, worst = measure(argv, case_env[0] if case_env else env, stdin, runs)
            print(f"{name:32s} median {median:6.1f} ms   worst {worst:6.1f} ms")


if __name__ == "__main__":
    main()
