"""Set up one throwaway machine for the end-to-end tests with the real CLIs: one function.

`setup_machine` runs the project's Copier template as a user would, so the
machine ends up with config.toml (store, project mapping, runtimes, hooks answer,
the helper's absolute command), the managed block in each runtime's instruction
file, the `agent-memory` skill in each runtime's skills folder, and our hooks
when asked for.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.fixtures_clis import Machine

HELPER_IN_BLOCK = re.compile(r"Helper: `([^`]+)`")


def helper_from_context(texts: list[tuple[str, str]]) -> str:
    """The helper command as the managed block states it, read from what reached the model."""
    for _, text in texts:
        match = HELPER_IN_BLOCK.search(text)
        if match:
            return match.group(1)
    raise AssertionError("no managed block naming the helper reached the model")


def setup_machine(m: Machine, *, template: Path, store: Path, projects: dict, runtimes=("codex", "claude"),
                  hooks: bool = False, agent: str | None = None, mcp: bool = False,
                  reflect: bool = False) -> list[str]:
    """Set the machine up with the project's Copier template, as a user would; returns the helper command.

    `template` is a git repo of this checkout's template (tests/template_kit.py), tagged v1.0.0.
    Copier renders into the machine folder and its tasks install the helper and run
    `agentmem setup`, which writes the block, the skill and (if asked) the hooks.
    """
    data = {
        "bucket": str(store),
        "projects": json.dumps({str(Path(d).resolve()): p for d, p in projects.items()}),
        "runtimes": json.dumps(list(runtimes)),
        "hooks": "true" if hooks else "false",
        "reflect": "true" if reflect else "false",
        "mcp": "true" if mcp else "false",
        "agent_name": agent or m.home.parent.name,
    }
    cwd = Path(next(iter(projects)))
    argv = [sys.executable, "-m", "copier", "copy", "--trust", "--defaults", "-r", "v1.0.0",
            *[f"--data={k}={v}" for k, v in data.items()], str(template), str(m.agentmem_home)]
    proc = subprocess.run(argv, cwd=cwd, env=m.env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-3000:])
    helper = m.agentmem_home / ".venv" / "bin" / "agentmem"
    assert helper.is_file(), proc.stdout[-3000:]
    return [str(helper)]


