"""How long the hook commands take, beside a bare interpreter start.

    python bench/hook_latency.py [runs] [--against CHECKOUT]

Runs each command `runs` times (default 20) in a throwaway AGENTMEM_HOME with
three pending notes (as a save the store did not confirm leaves them), and prints
the median and worst wall time in milliseconds. The hooks run through the launcher
of a helper venv built from this checkout, as setup installs them (see
bench/search_latency.py). `--against` builds a second helper venv from another
checkout (an earlier commit's worktree, say) and times it on the same homes, the
two taking turns run by run, so a before/after comparison shares the machine's load.
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


def measure(argvs, env, stdin, runs):
    """(median, worst) in ms of each argv, the argvs taking turns run by run."""
    times: list[list[float]] = [[] for _ in argvs]
    for _ in range(runs):
        for argv, out in zip(argvs, times):
            start = time.perf_counter()
            subprocess.run(argv, env=env, input=stdin, capture_output=True, check=True)
            out.append((time.perf_counter() - start) * 1000)
    return [(statistics.median(t), max(t)) for t in times]


def _pending(home: Path, count: int) -> None:
    """`count` pending notes as an unconfirmed save leaves them: entry.json and note.md in each folder."""
    from agentmem.note import document
    from agentmem.store.base import StoreDescription
    from agentmem.uploads import pending

    store = StoreDescription("folder", str(home.parent / "store"))
    for i in range(count):
        note = document.build(body=f"A finding the store has not confirmed yet ({i}).\n", title=f"Pending note {i}",
                              kind="note", project="app", agent="bench")
        data = note.render()
        pending.persist(home, pending.Entry(note.id, store, "app", document.note_path("app", note.id), note.created),
                        data)


def main() -> None:
    args = sys.argv[1:]
    against = None
    if "--against" in args:
        at = args.index("--against")
        against = Path(args[at + 1]).resolve()
        del args[at : at + 2]
    runs = int(args[0]) if args else 20
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "agentmem"
        home.mkdir()
        _pending(home, 3)
        from agentmem.machine import helper_venv

        [launcher] = helper_venv.install(home, ROOT)
        launchers = [launcher]
        if against is not None:  # its own helper venv, in a folder of its own, launched on the same home
            [other] = helper_venv.install(Path(tmp) / "against", against)
            launchers.append(other)
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
            ("python -c pass (helper venv)", None, b""),
            ("hook reminder (start)", ["hook", "reminder", "--runtime", "codex"], b"{}"),
            ("hook reminder (prompt)", ["hook", "reminder", "--event", "prompt", "--runtime", "claude"], b"{}"),
            ("hook reminder (start, gemini)", ["hook", "reminder", "--runtime", "gemini"], b"{}"),
            ("hook reminder (start, copilot)", ["hook", "reminder", "--runtime", "copilot"], b"{}"),
            ("hook stop (stop_hook_active)", ["hook", "stop", "--runtime", "claude"], stop_in),
            ("hook stop (reflect off)", ["hook", "stop", "--runtime", "claude"], fresh_in, env_quiet),
            ("hook stop (reflect, asked before)", ["hook", "stop", "--runtime", "claude"], session_in, env_quiet),
        ]
        print(f"{runs} runs each, {launcher} ({sys.version.split()[0]})")
        if against is not None:
            print(f"against {against} (second column), the two taking turns")
        for name, args_, stdin, *case_env in cases:
            argvs = [[py, "-c", "pass"]] if args_ is None else [[lz, *args_] for lz in launchers]
            found = measure(argvs, case_env[0] if case_env else env, stdin, runs)
            line = "   ".join(f"median {m:6.1f} ms  worst {w:6.1f} ms" for m, w in found)
            print(f"{name:34s} {line}")


if __name__ == "__main__":
    main()
