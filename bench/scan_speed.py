"""The credential scanner's cost: a 64 KiB note of each shape, and a per-turn query, beside a reference tree.

`save` scans every note (and `search` every query) before anything else, so the
scanner's cost is part of each save and each turn. This script times
`credentials.scan` in this tree and in a reference git revision (`--reference`,
default HEAD~1), each in its own interpreter, on the same texts:

- 64 KiB notes: prose (this repo's docs), code (this repo's modules), a base64
  image, short base64 lines (a key-like paste without markers), config
  assignments, shell and HTTP commands of the kind ops notes hold (curl with
  headers, `mysql -p`, `docker run -p`, URLs with `?token=$TOKEN`: the places
  issue 25's detectors look, with nothing secret in them), and hostile
  repetitions of detector prefixes;
- a plain search query, cold: importing the scanner and its first scan, what a turn adds.

Figures are medians of `--repeat` warm runs (patterns compiled) in milliseconds,
and the cold query cost in microseconds, all in CPU time (`time.process_time`:
the scanner is pure computation, and a shared machine's other processes then
weigh on the figures only through caches, not through waiting for a core); the two trees take turns `--rounds`
times and each figure is the median of the rounds (the machine is shared: a
burst of load then lands on one round of one tree, not on the figure).

Run: python bench/scan_speed.py [--reference REV] [--repeat 15] [--rounds 5] [--json]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTE = 64 * 1024
QUERY = "deploy script failing after the token refresh"
COMMANDS = [
    "curl -sS -H 'Accept: application/json' -H \"X-API-Key: $API_KEY\" https://api.invalid/v1/items",
    "curl -u \"$USER:$TOKEN\" 'https://api.invalid/items?token=$TOKEN&page=2'",
    "mysql -u root -p app < dump.sql",
    "docker run --rm -p 8080:80 -e POSTGRES_PASSWORD_FILE=/run/secrets/pg postgres:16",
    "ssh -p 2222 deploy@host.invalid 'sudo systemctl restart app'",
    "mkdir -p build/out && cp -p dist/* build/out/",
    "PGPASSWORD=$DB_PASS psql -h db.internal -U app -c 'select 1'",
    "Authorization: Bearer $ACCESS_TOKEN",
    "kubectl get secret api-token -o jsonpath='{.data.token}' | base64 -d",
    "export GITHUB_TOKEN=$(gh auth token)",
    "git push origin main  # the token expired, rotated it in the vault",
    "vault login --token-file ~/.vault-token && vault kv get secret/app",
]


def _fill(text: str) -> str:
    return (text * (NOTE // max(1, len(text)) + 1))[:NOTE]


def texts() -> dict[str, str]:
    rng = random.Random(20261202)
    docs = "".join(p.read_text() for p in sorted((ROOT / "docs").glob("*.md")))
    code = "".join(p.read_text() for p in sorted((ROOT / "agentmem").rglob("*.py")))
    image = "data:image/png;base64," + base64.b64encode(rng.randbytes(NOTE * 3 // 4 - 40)).decode()
    lines = "".join(base64.b64encode(rng.randbytes(48)).decode() + "\n" for _ in range(NOTE // 65))
    config = "".join(f"setting_{i} = {rng.randrange(10**6)}\nname_{i}: service-{i}\n" for i in range(3000))
    commands = "".join(rng.choice(COMMANDS) + "\n" for _ in range(NOTE // 40))
    hostile = ('token="' * 3000) + ("password: " * 2000) + ("-----BEGIN PRIVATE KEY-----\n" * 500) + ("x://" * 4000)
    return {"prose": _fill(docs), "code": _fill(code), "base64 image": image[:NOTE], "base64 lines": _fill(lines),
            "assignments": _fill(config), "commands": _fill(commands), "hostile": _fill(hostile)}


def measure(repeat: int) -> dict:
    """Run inside the tree being measured (its agentmem on sys.path first)."""
    import re  # noqa: F401 - a search has imported these already: time only what the scan adds

    import agentmem.errors  # noqa: F401

    start = time.process_time()
    from agentmem.safety import credentials

    credentials.scan(QUERY)
    cold_query_us = (time.process_time() - start) * 1e6
    out: dict = {"cold query (us)": round(cold_query_us)}
    for name, text in texts().items():
        credentials.scan(text)  # compile what this text needs
        runs = []
        for _ in range(repeat):
            t = time.process_time()
            credentials.scan(text)
            runs.append((time.process_time() - t) * 1e3)
        out[f"{name} (ms)"] = round(statistics.median(runs), 2)
    return out


def run_tree(tree: Path, repeat: int, pycache: str) -> dict:
    """Measure in `tree` with byte-compiled modules (as the installed helper has them), cached outside it."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env |= {"PYTHONPATH": str(tree), "PYTHONPYCACHEPREFIX": pycache}
    command = [sys.executable, __file__, "--measure", "--repeat", str(repeat)]
    subprocess.run(command[:-1] + ["1"], env=env, capture_output=True, check=True, cwd=tree)  # writes the .pyc
    proc = subprocess.run(command, env=env, capture_output=True, text=True, check=True, cwd=tree)
    return json.loads(proc.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference", default="HEAD~1", help="git revision to compare with")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--rounds", type=int, default=5, help="alternate the two trees this many times")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure(args.repeat)))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.reference, "agentmem"],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        # The trees take turns, and each figure is the median of the rounds: a shared machine's load then
        # weighs on both alike.
        rounds: dict[str, list[dict]] = {"reference": [], "current": []}
        for _ in range(args.rounds):
            rounds["reference"].append(run_tree(Path(tmp), args.repeat, os.path.join(tmp, "pycache")))
            rounds["current"].append(run_tree(ROOT, args.repeat, os.path.join(tmp, "pycache")))
        reference, current = ({k: statistics.median(r[k] for r in runs) for k in runs[0]}
                              for runs in rounds.values())
    if args.json:
        print(json.dumps({"reference": args.reference, "this tree": current, "reference tree": reference}))
        return 0
    print(f"{'64 KiB note / query':24} {'this tree':>10} {args.reference:>12} {'ratio':>7}")
    for key in current:
        ratio = f"{current[key] / reference[key]:.2f}" if reference.get(key) else "-"
        print(f"{key:24} {current[key]:>10} {reference.get(key, '-'):>12} {ratio:>7}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
