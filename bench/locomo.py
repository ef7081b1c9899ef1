"""Retrieval quality on LoCoMo, through the real save and search path, at two note lengths.

    python bench/locomo.py [DATA] [--modes literal,ranked,hybrid] [--granularity observations,sessions]
                           [--embed-budget SECONDS] [--json]

DATA defaults to ../shared/bench/locomo-dev.json (relative to the repository
root); any file in LoCoMo's format works. For each conversation and
granularity, a throwaway machine (AGENTMEM_HOME) with a folder store saves the
conversation's notes into the project named after it, with `agentmem save`;
then every question (category 5, adversarial, left out) is asked with
`agentmem search` in each mode. A hit is a result whose note covers one of the
question's evidence dia_ids. Reported: hit@1, hit@5, hit@10 and MRR@10, per
mode, overall and per conversation.

Granularities:
- observations: each observation is a note (one or two sentences), titled with
  the speaker and the date of its session ("Caroline, 8 May 2023"), as an agent
  would note who said it and when;
- sessions: each session is a note (20-30 turns, 1-5 KB: the length of an
  agent's checkpoint or handoff), titled with its date ("8 May 2023"), each
  turn a line `speaker: text`; it covers every turn's dia_id.

Hybrid searches embed notes within `[search] embed_budget` (1 s by default), so the first questions of a
conversation are answered with part of its notes embedded, and how many depends on the machine's speed
and load at the time. `--embed-budget 1e9` gives the first search the time to embed every note: the
figures of the vectors alone, the same on any machine.

`--json` prints the observations' figures at the top level (`modes`) and the
sessions' under `sessions` in the same shape.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

DEFAULT_DATA = REPO.parent / "shared" / "bench" / "locomo-dev.json"
K = 10


GRANULARITIES = ("observations", "sessions")


def _session_date(conversation: dict, session: str) -> str:
    """ "1:56 pm on 8 May, 2023" -> "8 May 2023" """
    return str(conversation.get(f"{session}_date_time", "")).split(" on ")[-1].replace(",", "").strip()


def observations(sample: dict) -> list[dict]:
    """Each observation with its speaker, session date and the dia_ids it covers."""
    out = []
    dates = sample.get("conversation", {})
    for key, per_speaker in sample.get("observation", {}).items():
        when = _session_date(dates, key.replace("_observation", ""))
        for speaker, items in per_speaker.items():
            for text, dia in items:
                dias = [dia] if isinstance(dia, str) else list(dia)
                out.append({"text": text, "speaker": speaker, "date": when, "dias": set(_dia_ids(dias))})
    return out


def sessions(sample: dict) -> list[dict]:
    """Each session as one note's text (a line `speaker: text` per turn), its date, its turns' dia_ids."""
    conv = sample.get("conversation", {})
    out = []
    for key, turns in conv.items():
        if not re.fullmatch(r"session_\d+", key) or not isinstance(turns, list) or not turns:
            continue
        text = "\n".join(f"{t.get('speaker', '')}: {t.get('text', '')}" for t in turns)
        out.append({"text": text, "date": _session_date(conv, key),
                    "dias": set(_dia_ids([t["dia_id"] for t in turns if t.get("dia_id")]))})
    return out


def notes_of(sample: dict, granularity: str) -> list[dict]:
    """(title, text, dias) of each note the conversation becomes at this granularity."""
    if granularity == "sessions":
        return [{"title": s["date"], "text": s["text"], "dias": s["dias"]} for s in sessions(sample)]
    return [{"title": f"{o['speaker']}, {o['date']}", "text": o["text"], "dias": o["dias"]}
            for o in observations(sample)]


def _dia_ids(values) -> list[str]:
    """dia_ids as written, some entries holding several ("D8:6; D9:17") or a stray colon ("D:11:26")."""
    return [re.sub(r"^D:(\d+):", r"D\1:", d) for v in values for d in re.split(r"[;,\s]+", str(v)) if d]


def questions(sample: dict) -> list[dict]:
    return [q for q in sample.get("qa", []) if q.get("category") != 5 and q.get("evidence")]


def _cli(*args: str) -> dict:
    from agentmem.launch import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        status = main([*args, "--json"])
    out = json.loads(buf.getvalue())
    if status != 0:
        raise SystemExit(f"agentmem {args[0]} failed ({status}): {out.get('message')}")
    return out


def run_conversation(sample: dict, modes: list[str], root: Path, granularity: str = "observations",
                     embed_budget: float | None = None) -> dict:
    """Save one conversation's notes, ask its questions; per-mode ranks of the first hit."""
    project = re.sub(r"[^A-Za-z0-9_-]", "-", str(sample.get("sample_id", "conv")))
    base = root / granularity / project
    home, store, workdir = base / "home", base / "store", base / "work"
    for d in (home, store, workdir):
        d.mkdir(parents=True)
    (home / "config.toml").write_text(
        f'agent = "bench"\n\n[store]\nkind = "folder"\nlocation = "{store}"\n\n[projects]\n"{workdir}" = "{project}"\n'
        + (f"\n[search]\nembed_budget = {embed_budget!r}\n" if embed_budget is not None else "")
    )
    os.environ["AGENTMEM_HOME"] = str(home)
    covers: dict[str, set] = {}
    body_file = base / "body.md"
    started = time.perf_counter()
    for note in notes_of(sample, granularity):
        body_file.write_text(note["text"], encoding="utf-8")
        saved = _cli("save", str(body_file), "--title", note["title"], "--project", project)
        covers[saved["id"]] = note["dias"]
    save_seconds = time.perf_counter() - started
    ranks: dict[str, list] = {m: [] for m in modes}
    seconds = {m: 0.0 for m in modes}
    for q in questions(sample):
        evidence = set(_dia_ids(q["evidence"]))
        for mode in modes:
            t0 = time.perf_counter()
            found = _cli("search", str(q["question"]), "--mode", mode, "--limit", str(K), "--project", project)
            seconds[mode] += time.perf_counter() - t0
            rank = next((i + 1 for i, r in enumerate(found["results"]) if covers.get(r["id"], set()) & evidence), None)
            ranks[mode].append(rank)
    return {"project": project, "notes": len(covers), "ranks": ranks, "save_seconds": save_seconds,
            "search_seconds": seconds}


def metrics(ranks: list) -> dict:
    n = len(ranks) or 1
    return {
        "questions": len(ranks),
        "hit@1": sum(1 for r in ranks if r and r <= 1) / n,
        "hit@5": sum(1 for r in ranks if r and r <= 5) / n,
        "hit@10": sum(1 for r in ranks if r and r <= 10) / n,
        "mrr@10": sum(1 / r for r in ranks if r and r <= 10) / n,
    }


def summary(results: list[dict], modes: list[str]) -> dict:
    """{"modes": {MODE: {"overall", "per_conversation", "ms_per_search"}}} over the conversations' runs."""
    out: dict = {"modes": {}}
    for mode in modes:
        every = [r for res in results for r in res["ranks"][mode]]
        out["modes"][mode] = {
            "overall": metrics(every),
            "per_conversation": {res["project"]: metrics(res["ranks"][mode]) for res in results},
            "ms_per_search": 1000 * sum(res["search_seconds"][mode] for res in results) / max(len(every), 1),
        }
    return out


def _print(title: str, rep: dict) -> None:
    print(title)
    for mode, m in rep["modes"].items():
        o = m["overall"]
        print(f"{mode:8} hit@1 {o['hit@1']:.3f}  hit@5 {o['hit@5']:.3f}  hit@10 {o['hit@10']:.3f}  "
              f"MRR@10 {o['mrr@10']:.3f}  ({o['questions']} questions, {m['ms_per_search']:.0f} ms/search)")
        for conv, c in m["per_conversation"].items():
            print(f"  {conv:10} hit@1 {c['hit@1']:.3f}  hit@5 {c['hit@5']:.3f}  hit@10 {c['hit@10']:.3f}  "
                  f"MRR@10 {c['mrr@10']:.3f}  ({c['questions']})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", nargs="?", default=str(DEFAULT_DATA))
    ap.add_argument("--modes", default=None, help="comma-separated; default: literal,ranked (+hybrid if installed)")
    ap.add_argument("--granularity", default=",".join(GRANULARITIES),
                    help="comma-separated: observations (one note each), sessions (one note each); default both")
    ap.add_argument("--embed-budget", type=float, help="[search] embed_budget in seconds (default: the config's)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    from agentmem.search import encoder

    modes = args.modes.split(",") if args.modes else ["literal", "ranked"] + (["hybrid"] if encoder.available() else [])
    grains = [g for g in args.granularity.split(",") if g]
    unknown = sorted(set(grains) - set(GRANULARITIES))
    if unknown or not grains:
        ap.error(f"--granularity takes {', '.join(GRANULARITIES)}")
    data = json.loads(Path(args.data).read_text(encoding="utf-8"))
    reports = {}
    with tempfile.TemporaryDirectory(prefix="agentmem-locomo-") as tmp:
        for grain in grains:
            results = []
            for sample in data:
                results.append(run_conversation(sample, modes, Path(tmp), grain, args.embed_budget))
                if not args.json:
                    print(f"{grain} {results[-1]['project']}: {results[-1]['notes']} notes saved", file=sys.stderr)
            reports[grain] = summary(results, modes)
    # Today's shape for observations at the top level; sessions beside it in the same shape.
    report: dict = {"data": str(args.data)}
    if "observations" in reports:
        report.update(reports["observations"])
    if "sessions" in reports:
        report["sessions"] = reports["sessions"]
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for grain in grains:
        _print(f"{grain}:", reports[grain])
    return 0


if __name__ == "__main__":
    sys.exit(main())
