"""The machine's token never leaves the process: not in output, logs, cache, pending entries or config.

HF_TOKEN is set to a sentinel and every command runs through every failure mode
we can produce; then every byte the runs printed or left behind is searched.
# INV no-credentials
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.fixtures_core import make_machine

# Shaped like a real token, so the scanner's own hf-token detector sees it too.
SENTINEL = "hf_SENTINELq7Zr4Kx9Lm2Np8Vb3Wc6Yd1Te5Gh0Jf"

SKILL_MD = "---\nname: {name}\ndescription: A helper for the sentinel test.\n---\n\n# Steps\n\nDo the thing.\n"


def _skill(root: Path, name: str, extra: str = "") -> Path:
    folder = root / name
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD.format(name=name))
    (folder / "scripts" / "run.sh").write_text("#!/bin/sh\necho run\n" + extra)
    return folder


class Transcript:
    """Every stdout and stderr the commands produced."""

    def __init__(self, machine, cwd):
        self.m, self.cwd, self.chunks, self.statuses = machine, cwd, [], []

    def __call__(self, *args, input=None, cwd=None):
        status, out, err = self.m.run(*args, input=input if input is not None else "", cwd=cwd or self.cwd)
        shown = " ".join("<sentinel>" if a == SENTINEL else str(a) for a in args)  # our own argument, not output
        self.chunks.append(f"$ agentmem {shown} -> {status}\n{out}{err}")
        self.statuses.append((args[0], status))
        return status, out, err

    def text(self) -> str:
        return "\n".join(self.chunks)


def _files_holding(needle: bytes, *roots: Path) -> list[str]:
    hits = []
    for root in roots:
        for dirpath, _dirs, files in os.walk(root):
            for name in files:
                path = Path(dirpath, name)
                if path.is_symlink():
                    continue
                if needle in path.read_bytes() or needle in name.encode():
                    hits.append(str(path))
    return hits


def _run_everything(run: Transcript, m, store_dir: Path, checkout: Path, tmp_path: Path) -> None:
    note = "# Sentinel run\n\nA decision worth keeping.\n"
    # Working store.
    _, out, _ = run("save", "--title", "kept", input=note)
    note_id = out.split()[1]
    run("save", "--json", input=note)
    run("search", "decision")
    run("search", "--json", "--refresh", "decision")
    run("search", "--offline")
    run("read", note_id)
    run("read", "--fresh", "--json", note_id)
    run("read", "20261130T000000000Z-missingx")
    run("pending")
    run("where")
    run("map", str(checkout), "app")
    # The token itself inside a note, a title, a tag; then with --redact.
    run("save", input=f"# Oops\n\nexport HF_TOKEN={SENTINEL}\n")
    run("save", "--title", SENTINEL, input=note)
    run("save", "--tag", SENTINEL, "--json", input=note)
    run("save", "--redact", input=f"# Redacted\n\ntoken {SENTINEL} here\n")
    # Skills: publish, list, read, install; one carrying the token.
    skills_src = tmp_path / "skill-src"
    run("publish-skill", _skill(skills_src, "helper"))
    _, out, _ = run("skills", "--json")
    run("publish-skill", _skill(skills_src / "bad", "leaky", extra=f"TOKEN={SENTINEL}\n"))
    revs = [line.split()[0] for line in run("skills")[1].splitlines() if line.startswith("  ")]
    if revs:
        run("read-skill", "helper", revs[0])
        run("install-skill", "helper", revs[0])
    # Bad input and an unmapped directory.
    run("read", "../../etc/passwd")
    run("save", "--kind", "diary", input=note)
    run("search", "--limit", "0")
    run("save", input=note, cwd=tmp_path)
    # Offline: the store's parent folder disappears (an unmounted drive).
    hidden = tmp_path / "store-away"
    shutil.move(str(store_dir.parent), str(hidden))
    try:
        _, out, _ = run("save", "--json", input=note)
        run("save", input=note)
        run("search", "--refresh", "decision")
        run("read", "--fresh", note_id)
        run("pending")
        _, out, _ = run("publish-skill", _skill(skills_src / "offline", "later"))
        resume = out.split("--resume ", 1)[1].split("`")[0].split() if "--resume " in out else ["later", "x"]
        run("skills")
        pend = [line.split()[0] for line in run("pending")[1].splitlines() if line.startswith("  2")]
        for pid in pend:
            run("save", "--retry", pid)
    finally:
        shutil.move(str(hidden), str(store_dir.parent))
    # Back online: retry what is pending; then a conflict at one pending path.
    pend = [line.split()[0] for line in run("pending")[1].splitlines() if line.startswith("  2")]
    if pend:
        first = pend[0]
        target = store_dir / "projects" / "app" / "notes" / f"{first}.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"different bytes written by someone else\n")
        run("save", "--retry", first)
        for pid in pend[1:]:
            run("save", "--retry", pid)
    run("publish-skill", "--resume", *resume)
    # A malformed config.
    cfg = m.home / "config.toml"
    good = cfg.read_bytes()
    cfg.write_bytes(good + b"\n[broken\n")
    run("search")
    run("save", input=note)
    cfg.write_bytes(good)


def test_the_token_appears_in_no_output_log_cache_pending_entry_or_config_on_a_folder_store(tmp_path):
    store_dir = tmp_path / "drive" / "shared-store"
    store_dir.mkdir(parents=True)
    checkout = tmp_path / "src" / "app"
    checkout.mkdir(parents=True)
    m = make_machine(tmp_path, "laptop", store_dir, {checkout: "app"})
    m.write_config((m.home / "config.toml").read_text() + '\n[runtimes]\nenabled = ["claude"]\n')
    m.env["HF_TOKEN"] = SENTINEL
    run = Transcript(m, checkout)

    _run_everything(run, m, store_dir, checkout, tmp_path)

    statuses = dict.fromkeys(s for _, s in run.statuses)
    # The runs did go through the failure modes: refused (2), not configured (3), not found (4),
    # offline (7), pending (10, including a conflict on retry), as well as successes.
    assert {0, 2, 3, 4, 7, 10} <= set(statuses), run.text()
    assert "already exists in the store with different content" in run.text()
    assert "secret-found" in run.text() and "env-credential" in run.text() or "hf-token" in run.text()
    assert "Traceback" not in run.text()
    assert SENTINEL not in run.text()
    needle = SENTINEL.encode()
    assert _files_holding(needle, m.home, Path(m.env["HF_HOME"]) if Path(m.env["HF_HOME"]).exists() else m.home,
                          store_dir, m.user_home) == []
    # Nor a recognisable part of it (a log that truncates or masks only the tail).
    assert _files_holding(needle[:20], m.home, store_dir, m.user_home) == []
    assert SENTINEL[:20] not in run.text()


def _bucket_machine(tmp_path: Path, name: str, hub, bucket: str | None):
    checkout = tmp_path / name / "src" / "app"
    checkout.mkdir(parents=True)
    m = make_machine(tmp_path, name, None, None)
    lines = [f'agent = "{name}"', "[network]", "timeout = 3", "[cache]", "max_age = 0", "[runtimes]",
             'enabled = ["claude"]']
    if bucket:
        lines += ["[store]", 'kind = "bucket"', f'location = "{bucket}"']
    lines += ["[projects]", f'"{checkout}" = "app"']
    m.write_config("\n".join(lines) + "\n")
    m.env.update(HF_TOKEN=SENTINEL, HF_ENDPOINT=hub.url)
    return m, checkout


def _pending_ids(listing: str) -> list[str]:
    return [line.split()[0] for line in listing.splitlines() if line.startswith("  2")]


def _bucket_round(run: Transcript, tmp_path: Path, label: str) -> list[str]:
    """Every command that reaches the bucket, once each; returns the IDs left pending.

    `pending` reads only this machine's entries, once (it shows what each mode recorded);
    `save` refusing a credential never opens the store: the caller runs it in one mode only.
    """
    note = "# Sentinel run\n\nA decision worth keeping.\n"
    run("bucket", "connect", "--json")
    run("bucket", "verify")
    _, out, _ = run("save", "--json", input=note)
    run("save", input=note)
    run("search", "decision")
    run("search", "--json", "--refresh")
    run("read", "--fresh", "20261130T000000000Z-missingx")
    pend = _pending_ids(run("pending")[1])
    for pid in pend:
        run("save", "--retry", pid)
    run("publish-skill", _skill(tmp_path / f"skills-{label}", "helper"))
    run("skills")
    return pend


@pytest.mark.parametrize("mode", ["working", "offline", "bad-token", "read-only-token", "no-access", "public-bucket"])
def test_the_token_appears_nowhere_on_a_bucket_store_in_any_failure_mode(hub, tmp_path, mode):
    # INV no-credentials
    hub.add_user("alice")
    hub.add_user("bob")
    hub.add_bucket("alice/agent-memory", private=mode != "public-bucket")
    hub.add_bucket("bob/agent-memory", private=True)
    from tests.hubstub import Token

    if mode != "bad-token":
        hub.tokens[SENTINEL] = Token("alice", write=mode != "read-only-token")
    bucket = "bob/agent-memory" if mode == "no-access" else "alice/agent-memory"
    m, checkout = _bucket_machine(tmp_path, "laptop", hub, bucket)
    run = Transcript(m, checkout)
    if mode == "offline":
        hub.stop()
    try:
        pend = _bucket_round(run, tmp_path, mode)
        if mode == "offline":
            hub.start()
            for pid in pend:  # still pending: the retries above were offline too
                run("save", "--retry", pid)
        if mode == "working":  # refused before any store is opened: the same in every mode
            run("save", "--title", SENTINEL, input="# Sentinel run\n\nA decision worth keeping.\n")
    finally:
        if mode == "offline" and hub._server is None:
            hub.start()  # the fixture stops it at the end
    statuses = {s for _, s in run.statuses}
    expected = {"working": {0}, "offline": {7, 10}, "bad-token": {5}, "read-only-token": {6},
                "no-access": {4, 6}, "public-bucket": {9}}[mode]
    assert statuses & expected, run.text()
    assert "Traceback" not in run.text()
    assert SENTINEL not in run.text() and SENTINEL[:20] not in run.text()
    roots = [m.home, Path(m.env["HF_HOME"]), m.user_home, hub.root]
    assert _files_holding(SENTINEL.encode(), *[r for r in roots if r.exists()]) == []
    assert _files_holding(SENTINEL[:20].encode(), *[r for r in roots if r.exists()]) == []
