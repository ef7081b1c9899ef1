"""Many processes saving at once never clobber each other."""

from __future__ import annotations

import subprocess
import sys

from agentmem.note import document


def test_concurrent_saves_from_several_processes_all_land_once(machines, tmp_path, store_dir):
    # INV append-only, INV nothing-lost
    checkout = tmp_path / "app"
    checkout.mkdir()
    procs = []
    ms = [machines(f"m{i}", {checkout: "app"}) for i in range(3)]
    for i in range(12):
        m = ms[i % 3]
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "agentmem", "save", "--title", f"note {i}"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=checkout, env=m.env,
            )
        )
    bodies = {}
    for i, p in enumerate(procs):
        out, err = p.communicate(f"body of note {i}".encode(), timeout=60)
        assert p.returncode == 0, err
    files = sorted(store_dir.rglob("*.md"))
    assert len(files) == 12
    for f in files:
        parsed = document.parse(f.read_bytes())
        bodies[parsed.title] = parsed.body.strip()
    assert bodies == {f"note {i}": f"body of note {i}" for i in range(12)}
    for m in ms:
        assert not any((m.home / "pending").iterdir())
