"""Set up one throwaway machine for the end-to-end tests with the real CLIs: one function.

`setup_machine` leaves the machine as a user's would be after setup: config.toml
with the store, the project mapping, the runtimes, the hooks answer and the
helper's absolute command; the managed block in each runtime's instruction
file; the `agent-memory` skill in each runtime's skills folder; our hooks when
asked for.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from agentmem import hooks_config
from agentmem.runtimes import CORE_SKILL, runtime
from tests.fixtures_clis import ROOT, Machine

BLOCK_BEGIN, BLOCK_END = "<!-- agent-memory:begin -->", "<!-- agent-memory:end -->"
HELPER_IN_BLOCK = re.compile(r"Helper: `([^`]+)`")


def helper_from_context(texts: list[tuple[str, str]]) -> str:
    """The helper command as the managed block states it, read from what reached the model."""
    for _, text in texts:
        match = HELPER_IN_BLOCK.search(text)
        if match:
            return match.group(1)
    raise AssertionError("no managed block naming the helper reached the model")


def _launcher(m: Machine) -> Path:
    """An absolute helper command for this machine, like the one setup records."""
    path = m.agentmem_home / "bin" / "agentmem"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "#!/bin/sh\n"
        f'export PYTHONPATH="{ROOT}"\n'
        f'export AGENTMEM_HOME="${{AGENTMEM_HOME:-{m.agentmem_home}}}"\n'
        f'exec "{sys.executable}" -m agentmem "$@"\n'
    )
    path.chmod(0o755)
    return path


def _toml_str(value: str) -> str:
    return json.dumps(value)


def setup_machine(m: Machine, *, store: Path, projects: dict, runtimes=("codex", "claude"),
                  hooks: bool = False, agent: str | None = None) -> list[str]:
    """Set the machine up; returns the helper command recorded in config.toml."""
    helper = [str(_launcher(m))]
    lines = [
        f"agent = {_toml_str(agent or m.home.parent.name)}",
        "",
        "[store]",
        'kind = "folder"',
        f"location = {_toml_str(str(store))}",
        "",
        "[projects]",
        *[f"{_toml_str(str(Path(d).resolve()))} = {_toml_str(p)}" for d, p in projects.items()],
        "",
        "[runtimes]",
        f"enabled = {json.dumps(list(runtimes))}",
        "",
        "[hooks]",
        f"enabled = {'true' if hooks else 'false'}",
        "",
        "[helper]",
        f"command = {json.dumps(helper)}",
    ]
    m.agentmem_home.mkdir(parents=True, exist_ok=True)
    (m.agentmem_home / "config.toml").write_text("\n".join(lines) + "\n")
    env = m.env()
    for name in runtimes:
        rt = runtime(name, env)
        rt.instructions.parent.mkdir(parents=True, exist_ok=True)
        rt.instructions.write_text(f"{BLOCK_BEGIN}\n{_block(helper)}\n{BLOCK_END}\n")
        skill = rt.skills_root / CORE_SKILL / "SKILL.md"
        skill.parent.mkdir(parents=True, exist_ok=True)
        skill.write_text(_skill(helper))
        if hooks:
            hooks_config.install(m.agentmem_home, name, helper, env)
    return helper


def _block(helper: list[str]) -> str:
    return (
        "## Agent memory\n\n"
        "Use the `agent-memory` skill for prior context and durable findings. Search relevant notes\n"
        "before relying on remembered decisions; save useful findings, and write a checkpoint at\n"
        f"milestones or handoffs, before replying. Helper: `{' '.join(helper)}`."
    )


def _skill(helper: list[str]) -> str:
    return (
        "---\nname: agent-memory\n"
        "description: Shared memory across sessions and machines. Recall prior decisions and save "
        "findings or checkpoints before your final reply.\n---\n\n"
        f"Search: `{' '.join(helper)} search WORDS`. Save: `{' '.join(helper)} save --title T -`.\n"
    )
