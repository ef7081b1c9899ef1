"""How long `agentmem mcp` takes to answer a client, beside a bare interpreter and a search.

    python bench/mcp_startup.py [runs] [--against CHECKOUT]

Runs each case `runs` times (default 10) through the launcher of a helper venv built
from this checkout, as setup installs it, in a throwaway AGENTMEM_HOME with one
note. For the server, the time is from starting the process to its answer to
`initialize` (when a client may list tools), then to the answer of a first
`memory_search`; a client starts one server per session, not per turn.

`--against CHECKOUT` builds a second helper venv from another checkout (an earlier commit's tree) on
the same machine folder's notes and times its server too, the two servers taking turns.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}}
SEARCH = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
    "name": "memory_search", "arguments": {"query": "zebra"}}}


def _send(proc, message) -> None:
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()


def _answer(proc, what: str) -> dict:
    """The server's next line as a JSON-RPC result; a server that ended or erred ends the bench."""
    line = proc.stdout.readline()
    try:
        result = json.loads(line)["result"]
    except (ValueError, KeyError, TypeError):
        proc.kill()
        raise SystemExit(f"mcp_startup: no answer to {what} from `agentmem mcp` (got {line[:200]!r})") from None
    return result


def serve_once(launcher, env, cwd) -> tuple[float, float]:
    start = time.perf_counter()
    proc = subprocess.Popen([launcher, "mcp"], env=env, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    _send(proc, INITIALIZE)
    _answer(proc, "initialize")
    ready = time.perf_counter()
    _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    _send(proc, SEARCH)
    found = _answer(proc, "memory_search")
    searched = time.perf_counter()
    if found.get("isError") or "Zebra cache" not in json.dumps(found):
        raise SystemExit(f"mcp_startup: memory_search did not find the note: {json.dumps(found)[:300]}")
    proc.stdin.close()
    proc.wait()
    return (ready - start) * 1000, (searched - start) * 1000


def run_once(argv, env, cwd) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=True)
    return (time.perf_counter() - start) * 1000


def _helper(home: Path, checkout: Path) -> tuple[str, str]:
    """(launcher, python) of a helper venv built from `checkout` in `home`, as setup builds it."""
    from agentmem.machine import helper_venv

    [launcher] = helper_venv.install(home, checkout)
    return launcher, str(helper_venv.venv_python(home / ".venv"))


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="?", type=int, default=10)
    ap.add_argument("--against", type=Path, help="another checkout whose server to time beside this one's")
    args = ap.parse_args()
    runs = args.runs
    with tempfile.TemporaryDirectory() as tmp:
        home, store, app = Path(tmp) / "agentmem", Path(tmp) / "store", Path(tmp) / "app"
        for d in (home, store, app):
            d.mkdir()
        (home / "config.toml").write_text(f'agent = "bench@host"\n[store]\nkind = "folder"\nlocation = "{store}"\n'
                                          f'[projects]\n"{app}" = "app"\n'
                                          "[mcp]\nenabled = true\n")  # the answer mcp=true: the SDK goes into the venv
        launcher, py = _helper(home, ROOT)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}
        env["AGENTMEM_HOME"] = str(home)
        subprocess.run([launcher, "save", "--title", "Zebra cache"], input=b"The zebra cache is warm.\n", env=env,
                       cwd=app, check=True, capture_output=True)
        print(f"{runs} runs each, {launcher} ({sys.version.split()[0]}, load {os.getloadavg()[0]:.1f})")
        for name, argv in (("python -c pass (helper venv)", [py, "-c", "pass"]),
                           ("agentmem search zebra", [launcher, "search", "zebra"])):
            times = [run_once(argv, env, app) for _ in range(runs)]
            print(f"{name:34s} median {statistics.median(times):7.1f} ms   worst {max(times):7.1f} ms")
        servers = {"agentmem mcp": launcher}
        if args.against is not None:
            other = Path(tmp) / "against"
            other.mkdir()
            shutil.copy(home / "config.toml", other / "config.toml")
            servers[f"against {args.against.name}"] = _helper(other, args.against.resolve())[0]
        served: dict[str, list] = {name: [] for name in servers}
        for _ in range(runs):
            for name, server in servers.items():  # taking turns: the same load for each
                served[name].append(serve_once(server, env, app))
        for server_name, rows in served.items():
            for i, what in enumerate(("initialize answered", "first search answered")):
                times = [s[i] for s in rows]
                print(f"{server_name + ': ' + what:34s} median {statistics.median(times):7.1f} ms   "
                      f"worst {max(times):7.1f} ms")


if __name__ == "__main__":
    main()
