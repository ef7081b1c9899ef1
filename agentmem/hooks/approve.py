"""What agentmem's pre-tool-use hook answers: "allow" for a plain helper command in a trusted project
folder, and nothing otherwise (the CLI then decides as it always does: asks, or in a
non-interactive run refuses).

This is how Copilot CLI, which has no setting that pre-approves a command, runs the helper
with no flags: with `[trust] projects` on, setup installs a user-level `preToolUse` hook
(runtimes/copilot.py), and Copilot CLI 1.0.102 takes that hook's `permissionDecision:
"allow"` as the approval, in `copilot -p` too (checked 2026-12-01).

A command is allowed only when all of these hold:
- the tool is the CLI's shell tool (the runtime reads that from its own hook input:
  `Spec.approval.shell_call`, runtimes/copilot.py), and the folder it runs in is inside a folder
  mapped in `[projects]`, and config.toml says `[trust] projects = true`;
- the command is the helper's recorded absolute command (`[helper] command`, as setup wrote
  it) followed by arguments, and nothing else: no `;`, `&`, `|`, `<`, `>`, parentheses,
  line breaks, `$` or backquote outside single quotes, so nothing can ride along with it.
"""

from __future__ import annotations

import shlex

REASON = "agentmem: the memory helper, in a project folder this machine trusts ([trust] projects)"
_OPERATORS = set(";&|<>()\n\r`$")


def plain_command(command: str, helper: list[str]) -> bool:
    """`command` is `helper` plus arguments, with no shell operator, expansion or second command."""
    if not helper or not isinstance(command, str):
        return False
    quote = None
    for ch in command:
        if quote == "'":
            quote = None if ch == "'" else quote
        elif quote == '"':
            if ch in "$`\\":
                return False  # an expansion (or an escape we need not reason about) inside double quotes
            quote = None if ch == '"' else quote
        elif ch in "'\"":
            quote = ch
        elif ch in _OPERATORS:
            return False
    if quote is not None:
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return len(words) > len(helper) and words[:len(helper)] == helper


def allowed(machine: str, call: tuple[str, str] | None) -> bool:
    """Whether the hook should answer "allow" for this tool call: `call` is the (command, working folder)
    the runtime read from its hook input (its `Spec.approval.shell_call`), None for a call that is not
    its shell tool's."""
    from agentmem import config
    from agentmem.errors import AgentmemError

    if call is None:
        return False
    command, cwd = call
    try:
        cfg = config.load(machine)
        if (cfg.data.get("trust") or {}).get("projects") is not True:
            return False
        cfg.resolve_project(cwd=cwd)
    except AgentmemError:
        return False  # not configured, not a mapped folder, a config in conflict: no answer
    return plain_command(command, config.helper_words(cfg.data))
