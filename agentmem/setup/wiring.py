"""Is each enabled agent CLI still wired up? The checks `doctor` runs and setup's report ends with.

For every enabled runtime: the core skill (present, and the bytes setup would install), the managed
block in its instruction file (present and current), what its default permission mode needs, its
hooks when they are on, and its MCP registration when that is on. Each is a `doctor.Check` whose fix
is the one command that puts it right, `setup`; nothing here writes anything.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from agentmem.errors import AgentmemError, Command
from agentmem.machine.doctor import Check
from agentmem.status import FAILED, OK, WARNING, Status

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Mapping

    from agentmem.config import Config
    from agentmem.runtimes.base import Runtime
    from agentmem.store.base import StoreDescription

BLOCK_SOURCE = "instructions-block.md"
SETUP = Command("setup")
FIX = "rerun setup, which puts it back"


def _check(name: str, problem: str | None, ok: str, *, status: Status = FAILED) -> Check:
    if problem is None:
        return Check(name, OK, ok)
    return Check(name, status, problem, FIX, SETUP)


def _skill(machine: Path, rt: Runtime, helper: str) -> Check | None:
    from agentmem.machine import core_skill

    if rt.skills_root is None:
        return None  # a CLI that reads no skill folder
    dest = rt.skills_root / core_skill.CORE_SKILL
    try:
        wanted = core_skill.render_files(core_skill.skill_source(machine), helper)
    except (OSError, AgentmemError) as exc:
        return Check(f"skill {rt.name}", FAILED, f"the machine folder's core skill cannot be read ({exc})", FIX, SETUP)
    state = core_skill.compare(wanted, dest)
    problem = {"missing": f"{dest} is missing", "different": f"{dest} differs from the skill setup installs "
               "(edited, or from an older template)"}.get(state)
    return _check(f"skill {rt.name}", problem, str(dest), status=FAILED if state == "missing" else WARNING)


def _block(machine: Path, rt: Runtime, helper: str) -> Check:
    from agentmem.machine import blocks, core_skill

    name = f"instructions {rt.name}"
    try:
        text = rt.instructions.read_text(encoding="utf-8")
    except FileNotFoundError:
        return _check(name, f"{rt.instructions} is missing, so the agent is never told about memory", "")
    except OSError as exc:
        return _check(name, f"{rt.instructions} cannot be read ({exc.strerror})", "")
    try:
        body = (machine / BLOCK_SOURCE).read_text("utf-8").replace(core_skill.HELPER_TOKEN, helper)
        where = blocks.find_block(text, where=str(rt.instructions))
        current = where is not None and blocks.with_block(text, body, where=str(rt.instructions)) == text
    except (OSError, AgentmemError) as exc:
        return _check(name, f"{rt.instructions}: {exc}", "")
    if where is None:
        return _check(name, f"{rt.instructions} holds no agentmem block", "")
    return _check(name, None if current else f"{rt.instructions}: the agentmem block is out of date",
                  f"{rt.instructions}: block current", status=WARNING)


def _permissions(machine: Path, rt: Runtime, helper: list[str], store: StoreDescription | None) -> Check | None:
    found = rt.permissions_status(machine, helper, store)
    if found is None:
        return None
    ok, detail = found
    return _check(f"permissions {rt.name}", None if ok else detail, detail)


def _hooks(rt: Runtime, helper: list[str]) -> Check | None:
    from agentmem.runtimes.base import hooked

    if not hooked(rt):
        return None  # a CLI that runs no hooks of ours
    st = rt.hooks_status(helper)
    problem = None
    if not st.get("installed"):
        problem = f"{st.get('file')}: our hooks are not installed"
    elif not st.get("current"):
        problem = f"{st.get('file')}: our hooks are out of date"
    return _check(f"hooks {rt.name}", problem, f"{st.get('file')}: installed and current")


def _mcp(machine: Path, rt: Runtime, helper: list[str]) -> Check | None:
    if rt.mcp is None:
        return None
    entry, _ = rt.mcp.current(machine)
    problem = None
    if entry is None:
        problem = f"{rt.mcp.file}: no agentmem MCP server registered"
    elif entry != rt.mcp.entry(helper):
        problem = f"{rt.mcp.file}: the agentmem MCP server entry is not the one setup writes"
    return _check(f"mcp {rt.name}", problem, f"{rt.mcp.file}: registered")


def checks(machine: str, cfg: Config, env: Mapping[str, str] | None = None) -> list[Check]:
    """Every enabled runtime's wiring, in setup's order: skill, instructions, permissions, hooks, MCP."""
    from agentmem import config
    from agentmem.machine import settings
    from agentmem.runtimes.registry import enabled_names, runtime

    folder = Path(machine)
    helper_cmd = config.helper_words(cfg.data)
    helper = shlex.join(helper_cmd)
    names = enabled_names(cfg.data)
    hooks_on = settings.hooks_runtimes(cfg, names)
    mcp_on = settings.mcp_enabled(cfg)
    out: list[Check] = []
    for name in names:
        rt = runtime(name, env)
        found = [_skill(folder, rt, helper), _block(folder, rt, helper),
                 _permissions(folder, rt, helper_cmd, cfg.store), _hooks(rt, helper_cmd) if name in hooks_on else None,
                 _mcp(folder, rt, helper_cmd) if mcp_on else None]
        out += [check for check in found if check is not None]  # None: nothing to check there
    if not names:
        out.append(Check("runtimes", WARNING, "no agent CLI is enabled in config.toml", "enable one and rerun setup",
                         SETUP))
    return out
