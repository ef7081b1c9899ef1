"""Search latency at growing note counts, against ripgrep over the same cached files.

    python bench/search_latency.py [--sizes 1000,10000,100000] [--repeat 5] [--json] [--against CHECKOUT]
    python bench/search_latency.py --team [--sizes 1000] [--repeat 9] [--json]

Run it with the interpreter agentmem is installed in (the venv's python, not a
shim): the CLI is timed as setup installs it, through the launcher of a helper
venv built from this checkout by `agentmem/helper_venv.py`. For each size, a
throwaway machine (AGENTMEM_HOME, folder store) gets that many synthetic notes
in its project cache, marked freshly refreshed, so a search takes the
no-network path. Notes are generated, not copied from any data set: titles and
bodies drawn from a Zipf-distributed vocabulary of made-up words, so term
frequencies look like text. Sizes are built cumulatively in one folder.

Measured, median of `--repeat` runs per query:
- `rg -i -F -l WORD` over the notes folder (one literal word: the rarest query word);
- `agentmem search QUERY --mode ranked` and `--mode literal` as a fresh process (what an agent pays);
- `ranked.rank()` inside a warm process (the engine alone);
- building the index from scratch, and CLI start-up (`--version`) and bare `python -c pass`.

`--against CHECKOUT` also times another checkout's CLI (an earlier commit's worktree: a before/after
comparison) on a second machine holding the same notes, with its own helper venv and its own index
(built by its first search); both machines search once before any timing, so each starts from what a
search leaves, and each ranked query then takes turns between the two.

`--team` measures what a team store adds to the per-turn search (issue X's goal: at most 1.3x): two
machines share one personal folder store holding each size's notes, and one also has a team folder store
holding as many; both searches ask their stores what changed (`[cache] max_age` 0, the default) and
nothing did. Each query takes turns between the member with the team and the one without; the report
gives both medians and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

VOCAB = 30000
SEED = 20261130


def make_vocab(rng: random.Random) -> list[str]:
    cons, vows = "bcdfghjklmnprstvwz", "aeiou"
    words, seen = [], set()
    while len(words) < VOCAB:
        w = "".join(rng.choice(cons) + rng.choice(vows) for _ in range(rng.randint(2, 4)))
        if w not in seen:
            seen.add(w)
            words.append(w)
    return words


class Generator:
    def __init__(self):
        self.rng = random.Random(SEED)
        self.vocab = make_vocab(self.rng)
        self.rank = {w: r for r, w in enumerate(self.vocab)}
        # Zipf weights: rank r has weight 1/r.
        self.cum = []
        total = 0.0
        for r in range(1, VOCAB + 1):
            total += 1.0 / r
            self.cum.append(total)

    def words(self, n: int) -> list[str]:
        return self.rng.choices(self.vocab, cum_weights=self.cum, k=n)

    def note(self, i: int) -> tuple[str, bytes]:
        from agentmem.note import document

        when = datetime(2025, 1, 1, tzinfo=UTC) + timedelta(minutes=i)
        body = " ".join(self.words(self.rng.randint(30, 90)))
        title = " ".join(self.words(self.rng.randint(3, 8)))
        n = document.build(body=body, title=title, kind="note", project="big", agent="bench", now=when)
        return n.id, n.render()


def folder_machine(root: Path, *, cache_only: bool = True, store_exists: bool = True) -> tuple[Path, Path, Path]:
    """A throwaway machine folder under `root`: (machine, folder store, project checkout "big").

    `cache_only`: a one-day `[cache] max_age`, so searches stay on the no-network path."""
    home, store, work = root / "home", root / "store", root / "work"
    for d in (home, work, *((store,) if store_exists else ())):
        d.mkdir()
    (home / "config.toml").write_text(
        f'agent = "bench"\n\n[store]\nkind = "folder"\nlocation = "{store}"\n\n[projects]\n"{work}" = "big"\n'
        + ("\n[cache]\nmax_age = 86400\n" if cache_only else ""))
    return home, store, work


def settle(*folders: Path) -> None:
    """Wait until a listing begun now settles the change signature of each of `folders`
    (agentmem/store/dirwatch.py), so the searches timed next see a quiet store: FINE_SECONDS
    where folder times have a fraction of a second, the racy window otherwise."""
    from agentmem.store import dirwatch

    fine = all(dirwatch.filesystem_type(str(f)) in dirwatch.FINE_TYPES and os.stat(f).st_mtime_ns % 10**9
               for f in folders)
    time.sleep(dirwatch.FINE_SECONDS + 0.02 if fine else dirwatch.RACY_SECONDS + 0.2)


def ripgrep() -> str:
    """The `rg` the latency benchmarks compare with; they are not run without it."""
    rg = shutil.which("rg")
    if not rg:
        raise SystemExit("ripgrep (rg) is needed for the comparison")
    return rg


def median_pair(fns, repeat: int) -> list[float]:
    """The median seconds of each of `fns`, which take turns run by run, so both see the same load."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, out in zip(fns, times):
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
    return [statistics.median(t) for t in times]


def median_seconds(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--queries", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--against", type=Path, help="another checkout whose CLI to time beside this one")
    ap.add_argument("--team", action="store_true",
                    help="time a search with a team store configured against the same search without one")
    args = ap.parse_args(argv)
    if args.team:
        return team_ratio(args)
    rg = ripgrep()
    from agentmem.replica import cache
    from agentmem.search import index, ranked
    from agentmem.store.base import StoreDescription

    gen = Generator()
    report = {"python": sys.executable, "rg": rg, "sizes": []}
    with tempfile.TemporaryDirectory(prefix="agentmem-latency-") as tmp:
        root = Path(tmp)
        home, store, work = folder_machine(root)
        desc = StoreDescription("folder", str(store))
        pdir = Path(cache.project_dir(home, desc, "big"))
        ndir = pdir / "notes"
        ndir.mkdir(parents=True)
        # Time the helper as setup installs it (a venv in the machine folder with the package
        # copied in and byte-compiled, run through its launcher), not this checkout's editable
        # install, whose import hook costs ~10 ms per start on its own.
        from agentmem.machine import helper_venv

        [launcher] = helper_venv.install(home, REPO)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}
        env["AGENTMEM_HOME"] = str(home)

        def cli(*a, launcher=launcher, env=env, work=work):
            subprocess.run([launcher, *a], cwd=work, env=env, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        if args.against is not None:
            (root / "against").mkdir()
            home_b, store_b, work_b = folder_machine(root / "against")
            pdir_b = Path(cache.project_dir(home_b, StoreDescription("folder", str(store_b)), "big"))
            [launcher_b] = helper_venv.install(home_b, args.against.resolve())
            env_b = dict(env, AGENTMEM_HOME=str(home_b))
            report["against"] = str(args.against.resolve())

            def cli_b(*a):
                cli(*a, launcher=launcher_b, env=env_b, work=work_b)

        report["python_startup_s"] = median_seconds(
            lambda: subprocess.run([str(helper_venv.venv_python(home / ".venv")), "-c", "pass"], check=True), args.repeat)
        report["cli_version_s"] = median_seconds(lambda: cli("--version"), args.repeat)
        count = 0
        bodies: list[str] = []
        for size in [int(s) for s in args.sizes.split(",")]:
            t0 = time.perf_counter()
            while count < size:
                note_id, data = gen.note(count)
                (ndir / f"{note_id}.md").write_bytes(data)
                if len(bodies) < 2000:
                    bodies.append(data.decode().rsplit("\n\n", 1)[-1])
                count += 1
            gen_s = time.perf_counter() - t0
            (pdir / "state.json").write_text(json.dumps({"refreshed_at": time.time(), "notes": count}))
            if args.against is not None:  # the same notes, indexed by the other checkout's first search
                (pdir_b / "notes").mkdir(parents=True, exist_ok=True)
                for path in ndir.iterdir():
                    target = pdir_b / "notes" / path.name
                    if not target.exists():
                        os.link(path, target)
                (pdir_b / "state.json").write_text((pdir / "state.json").read_text())
                # Both machines in the same state before any timing: past the folders' racy window
                # (store/dirwatch.py), then one search each, which records what a search keeps.
                time.sleep(3.5)
                cli("search", "warm", "--mode", "ranked")
                cli_b("search", "warm", "--mode", "ranked")
            t0 = time.perf_counter()
            ranked.rebuild(pdir)
            build_s = time.perf_counter() - t0
            index_mb = os.path.getsize(index.index_path(pdir)) / 1e6
            qrng = random.Random(size)
            queries = []
            for _ in range(args.queries):
                words = qrng.choice(bodies).split()
                start = qrng.randrange(max(1, len(words) - 3))
                queries.append(words[start : start + 3])
            rows = []
            for words in queries:
                query = " ".join(words)
                rare = max(words, key=lambda w: gen.rank.get(w, 0))  # the least frequent of the three
                if args.against is not None:
                    ours, theirs = median_pair([lambda: cli("search", query, "--mode", "ranked"),
                                                lambda: cli_b("search", query, "--mode", "ranked")], args.repeat)
                    rows.append({"query": query, "cli_ranked_s": ours, "against_ranked_s": theirs})
                    continue
                rows.append({
                    "query": query,
                    "rg_word": rare,
                    "rg_s": median_seconds(lambda: subprocess.run(
                        [rg, "-i", "-F", "-l", "--", rare, str(ndir)], stdout=subprocess.DEVNULL), args.repeat),
                    "cli_ranked_s": median_seconds(lambda: cli("search", query, "--mode", "ranked"), args.repeat),
                    "cli_literal_s": median_seconds(lambda: cli("search", rare, "--mode", "literal"), args.repeat),
                    "engine_ranked_s": median_seconds(lambda: ranked.rank(pdir, query, 10), args.repeat),
                })
            if args.against is not None:
                m = {k: statistics.median(r[k] for r in rows) for k in ("cli_ranked_s", "against_ranked_s")}
                report["sizes"].append({"notes": size, "median": m, "queries": rows})
                if not args.json:
                    print(f"{size:>7} notes: agentmem ranked (CLI) {m['cli_ranked_s'] * 1000:7.1f} ms | against "
                          f"{m['against_ranked_s'] * 1000:7.1f} ms ({m['cli_ranked_s'] / m['against_ranked_s']:.3f}x)",
                          flush=True)
                continue
            entry = {
                "notes": size,
                "generate_s": gen_s,
                "index_build_s": build_s,
                "index_mb": index_mb,
                "median": {k: statistics.median(r[k] for r in rows)
                           for k in ("rg_s", "cli_ranked_s", "cli_literal_s", "engine_ranked_s")},
                "queries": rows,
            }
            report["sizes"].append(entry)
            if not args.json:
                m = entry["median"]
                print(f"{size:>7} notes: rg {m['rg_s'] * 1000:7.1f} ms | agentmem ranked (CLI) "
                      f"{m['cli_ranked_s'] * 1000:7.1f} ms | literal (CLI) {m['cli_literal_s'] * 1000:8.1f} ms | "
                      f"engine {m['engine_ranked_s'] * 1000:6.1f} ms | index build {build_s:6.1f} s, "
                      f"{index_mb:.1f} MB", flush=True)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"python -c pass {report['python_startup_s'] * 1000:.1f} ms; "
              f"agentmem --version {report['cli_version_s'] * 1000:.1f} ms")
    return 0


def team_ratio(args: argparse.Namespace) -> int:
    """`--team`: the per-turn search with a team store beside the personal one, against the same search
    without it, nothing new in either store (see the module docstring)."""
    from agentmem.machine import helper_venv
    from agentmem.store.folder import create_store

    gen = Generator()
    report: dict = {"python": sys.executable, "sizes": []}
    with tempfile.TemporaryDirectory(prefix="agentmem-team-latency-") as tmp:
        root = Path(tmp)
        own, team, work = root / "own", root / "team", root / "work"
        work.mkdir()
        for store in (own, team):
            create_store(str(store))
            (store / "projects" / "big" / "notes").mkdir(parents=True)
        homes = {"solo": root / "solo", "member": root / "member"}
        for name, home in homes.items():
            home.mkdir()
            extra = f'\n[team]\nkind = "folder"\nlocation = "{team}"\n' if name == "member" else ""
            (home / "config.toml").write_text(f'agent = "bench"\n\n[store]\nkind = "folder"\nlocation = "{own}"\n\n'
                                              f'[projects]\n"{work}" = "big"\n{extra}')
        [launcher] = helper_venv.install(homes["member"], REPO)  # one helper; AGENTMEM_HOME picks the machine
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}

        def cli(name: str, *a: str) -> subprocess.CompletedProcess:
            return subprocess.run([launcher, *a], cwd=work, env=dict(env, AGENTMEM_HOME=str(homes[name])),
                                  check=False, capture_output=True, text=True)

        def caught_up(name: str) -> None:
            for _ in range(200):  # each search fetches a few seconds' worth of a big store (memory/sync.py)
                out = json.loads(cli(name, "search", "--json").stdout)
                if not out.get("catching_up") and not out["stale"]:
                    return
            raise SystemExit(f"the {name} machine never caught up with its stores")

        count = 0
        bodies: list[str] = []
        for size in [int(s) for s in args.sizes.split(",")]:
            while count < size:
                for store in (own, team):
                    note_id, data = gen.note(count if store is own else 10**7 + count)
                    (store / "projects" / "big" / "notes" / f"{note_id}.md").write_bytes(data)
                    if len(bodies) < 2000:
                        bodies.append(data.decode().rsplit("\n\n", 1)[-1])
                count += 1
            for name in homes:
                caught_up(name)
            settle(own / "projects" / "big" / "notes", team / "projects" / "big" / "notes")
            for name in homes:  # one search each records what a search keeps (past the racy window)
                cli(name, "search", "warm")
            qrng = random.Random(size)
            rows = []
            for _ in range(args.queries):
                words = qrng.choice(bodies).split()
                start = qrng.randrange(max(1, len(words) - 3))
                query = " ".join(words[start:start + 3])
                solo, member = median_pair([lambda: cli("solo", "search", query), lambda: cli("member", "search", query)],
                                           args.repeat)
                rows.append({"query": query, "solo_s": solo, "team_s": member})
            for name in homes:  # nothing new in either store: every answer current, no refresh fetched a note
                out = json.loads(cli(name, "search", "warm", "--json").stdout)
                if out["stale"] or out.get("catching_up"):
                    raise SystemExit(f"the {name} machine's search was not current: {out['stale_reason']}")
            m = {k: statistics.median(r[k] for r in rows) for k in ("solo_s", "team_s")}
            entry = {"notes_per_store": size, "median": m, "ratio": m["team_s"] / m["solo_s"], "queries": rows}
            report["sizes"].append(entry)
            if not args.json:
                print(f"{size:>7} notes per store: search without a team {m['solo_s'] * 1000:7.1f} ms | with a team "
                      f"store {m['team_s'] * 1000:7.1f} ms ({entry['ratio']:.2f}x)", flush=True)
    report["uptime"] = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(json.dumps(report, indent=2) if args.json else report["uptime"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
