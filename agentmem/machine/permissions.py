"""What each agent CLI needs so that the helper runs in its default permission mode.

Checked with the real CLIs (2026-12-01), each run without a bypass flag:

- Codex 0.171.0: `codex exec` runs commands in a read-only sandbox (nothing can
  be configured to be writable there); in `workspace-write` (`-s workspace-write`,
  `sandbox_mode`, or the TUI in a trusted project) only the working folder, /tmp,
  $TMPDIR and `sandbox_workspace_write.writable_roots` are writable. Setup adds the
  machine folder and a folder store to `writable_roots` (codex_config.py), so save
  and search work there; read-only sessions get the helper's one-line "not
  writable" error, and the skill tells the agent how to ask for escalation.
- Claude Code 2.1.332: `claude -p` refuses Bash without a permission rule; setup
  adds `Bash(<helper>:*)` to `permissions.allow` in `~/.claude/settings.json`
  (compound commands such as `helper ...; rm ...` still need approval).
- Gemini CLI 0.61.0: `gemini -p` offers no shell tool unless a policy allows the
  command; setup writes its own policy file `~/.gemini/policies/agentmem.toml`
  allowing commands that start with the helper (others stay denied). Gemini asks
  for a heredoc (`<<`), so the skill saves with `--text` there.
- OpenCode 1.18.33: its bash tool is allowed by default; nothing to add.
- Copilot CLI 1.0.102: no setting pre-approves a command or a path; `copilot -p`
  needs `--allow-tool 'shell(<helper>:*)' --add-dir <helper's folder>`, and an
  interactive session asks the user (the skill says so).
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from agentmem.errors import InvalidInput
from agentmem.fsutil import read_bytes, write_atomic
from agentmem.machine import codex_config, json_items
from agentmem.machine.runtimes import runtime as get_runtime

WRITABLE_ROOTS = "sandbox_workspace_write.writable_roots"
CLAUDE_ALLOW = "permissions.allow"
GEMINI_POLICY = "agentmem.toml"
POLICY_MARK = "# agentmem: managed file"


def writable_paths(machine: Path, store) -> list[str]:
    """The folders the helper writes: the machine folder, and a folder store."""
    paths = [os.path.realpath(machine)]
    if store is not None and store.kind == "folder":
        paths.append(os.path.realpath(os.path.expanduser(store.location)))
    return list(dict.fromkeys(paths))


def claude_rule(helper: list[str]) -> str:
    return f"Bash({shlex.join(helper)}:*)"


def copilot_flags(helper: list[str]) -> str:
    return (f"--allow-tool 'shell({shlex.join(helper)}:*)' "
            f"--add-dir {shlex.quote(os.path.dirname(helper[0]))}")


def gemini_policy(helper: list[str]) -> str:
    prefix = shlex.join(helper).replace("\\", "\\\\").replace('"', '\\"')
    return (f"{POLICY_MARK} (agentmem setup writes it; removing the runtime deletes it).\n"
            "# Lets Gemini CLI run the agentmem helper without asking, in every mode; any other\n"
            "# command, and a command that chains the helper with another, is decided as before.\n"
            "[[rule]]\n"
            'toolName = "run_shell_command"\n'
            f'commandPrefix = "{prefix}"\n'
            'decision = "allow"\n'
            "priority = 100\n")


def _policy_path(env) -> Path:
    rt = get_runtime("gemini", env)
    assert rt.config_dir is not None
    return rt.config_dir / "policies" / GEMINI_POLICY


def apply(machine: Path, name: str, helper: list[str], store, env=None) -> tuple[bool, str]:
    """Grant what `name` needs to run the helper; (changed, detail). Raises InvalidInput on a bad file."""
    if name == "codex":
        rt = get_runtime("codex", env)
        assert rt.config_dir is not None
        path = rt.config_dir / "config.toml"
        wanted = writable_paths(machine, store)
        changed = False
        if sorted(codex_config.recorded_items(machine, path, WRITABLE_ROOTS)) not in ([], sorted(wanted)):
            changed = codex_config.remove_list_items(machine, path, WRITABLE_ROOTS).changed  # the store moved
        changed = codex_config.add_list_items(machine, path, WRITABLE_ROOTS, wanted).changed or changed
        return changed, f"{path}: {WRITABLE_ROOTS} has {', '.join(wanted)} (for -s workspace-write)"
    if name == "claude":
        path = get_runtime("claude", env).hooks_file
        rule = claude_rule(helper)
        stale = [r for r in json_items.recorded(machine, path, CLAUDE_ALLOW) if r != rule]
        changed = json_items.remove_items(machine, path, CLAUDE_ALLOW) if stale else False
        changed = json_items.add_items(machine, path, CLAUDE_ALLOW, [rule]) or changed
        return changed, f"{path}: {CLAUDE_ALLOW} has {rule}"
    if name == "gemini":
        path = _policy_path(env)
        policy = gemini_policy(helper)
        try:
            current = read_bytes(path).decode("utf-8", errors="replace")
        except FileNotFoundError:
            current = None
        if current is not None and not current.startswith(POLICY_MARK):
            raise InvalidInput(f"{path} exists and was not written by agentmem; it was left alone")
        if current != policy:
            write_atomic(path, policy.encode("utf-8"))
        return current != policy, f"{path} allows the helper's commands"
    if name == "copilot":
        return False, ("Copilot CLI has no setting that pre-approves a command: it asks in a session; "
                       f"for `copilot -p` pass {copilot_flags(helper)}")
    return False, "nothing needed (its bash tool is allowed by default)"


def withdraw(machine: Path, name: str, env=None) -> bool:
    """Take back what `apply` granted for a runtime that is no longer enabled. True if anything changed."""
    if name == "codex":
        rt = get_runtime("codex", env)
        assert rt.config_dir is not None
        path = rt.config_dir / "config.toml"
        if not codex_config.recorded_items(machine, path, WRITABLE_ROOTS):
            return False
        return codex_config.remove_list_items(machine, path, WRITABLE_ROOTS).changed
    if name == "claude":
        return json_items.remove_items(machine, get_runtime("claude", env).hooks_file, CLAUDE_ALLOW)
    if name == "gemini":
        path = _policy_path(env)
        try:
            current = read_bytes(path).decode("utf-8", errors="replace")
        except FileNotFoundError:
            return False
        if not current.startswith(POLICY_MARK):
            return False
        path.unlink()
        return True
    return False


# -- OpenCode and a user's CLAUDE.md --------------------------------------------------------------

OPENCODE_INSTRUCTIONS = "instructions"


def opencode_keeps_claude_md(machine: Path, env=None, *, agents_md_existed: bool) -> tuple[str, str] | None:
    """OpenCode reads `~/.claude/CLAUDE.md` only while its own AGENTS.md is absent. When agentmem
    creates that AGENTS.md and CLAUDE.md holds the user's instructions, list CLAUDE.md in
    opencode.json's `instructions` (an OpenCode setting), so OpenCode keeps reading it.
    Returns (step status, detail), or None when there is nothing to keep."""
    from agentmem.machine import blocks

    rt = get_runtime("opencode", env)
    assert rt.config_dir is not None
    config = rt.config_dir / "opencode.json"
    claude_md = get_runtime("claude", env).instructions
    ours_before = json_items.recorded(machine, config, OPENCODE_INSTRUCTIONS)
    if agents_md_existed and not ours_before:
        return None  # the user had OpenCode's AGENTS.md already: OpenCode ignored CLAUDE.md before us too
    try:
        user_text = blocks.without_block(read_bytes(claude_md).decode("utf-8", errors="replace")).strip()
    except FileNotFoundError:
        user_text = ""
    if not user_text:
        return None
    if (rt.config_dir / "opencode.jsonc").exists() and not config.exists():
        return "warning", (f"OpenCode no longer reads {claude_md} now that {rt.instructions} exists; add it to "
                       f'"instructions" in {rt.config_dir / "opencode.jsonc"} to keep it')
    changed = json_items.add_items(machine, config, OPENCODE_INSTRUCTIONS, [str(claude_md)])
    return "changed" if changed else "ok", f"{config}: instructions has {claude_md} (OpenCode still reads it)"
