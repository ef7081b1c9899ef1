"""What each agent CLI's plain non-interactive mode does with the helper, as the README prints it.

Each runtime module states it once (`DEFAULT_MODE`): the command, whether a save and a search
of a note another machine saved work with no flags at all, the same with `[trust] projects` on,
and what the CLI needs otherwise. tests/test_e2e_default_mode.py runs every CLI that way and
checks these facts; tests compare the README's table and summary line with `table()` and
`summary()`, so the README cannot claim more than the CLIs do.
"""

from __future__ import annotations


def _modes() -> list[tuple[str, dict]]:
    from agentmem.runtimes import registry

    return [(name, registry.module(name).DEFAULT_MODE) for name in registry.NAMES]


def _yes(saves: bool, searches: bool) -> str:
    if saves and searches:
        return "saves and searches"
    if searches:
        return "searches (every note in the store); a save fails, saying so"
    return "neither"


def table() -> str:
    """The README's Markdown table, one row per CLI."""
    lines = ["| CLI, non-interactive | with no flags | with `trust_projects` | otherwise it needs |",
             "|---|---|---|---|"]
    for _, mode in _modes():
        lines.append(f"| `{mode['command']}` | {_yes(mode['saves'], mode['searches'])} | "
                     f"{_yes(mode['trusted_saves'], mode['trusted_searches'])} | {mode['otherwise']} |")
    return "\n".join(lines)


def summary() -> str:
    """The README's one-line summary of the table."""
    plain = [m["command"] for _, m in _modes() if m["saves"] and m["searches"]]
    trusted = [m["command"] for _, m in _modes()
               if m["trusted_saves"] and m["trusted_searches"] and not (m["saves"] and m["searches"])]
    return (f"With no flags, {_and(plain)} save and search; with the setup answer `trust_projects`, "
            f"{_and(trusted)} do too.")


def _and(commands: list[str]) -> str:
    quoted = [f"`{c}`" for c in commands]
    return " and ".join(quoted) if len(quoted) < 3 else ", ".join(quoted[:-1]) + " and " + quoted[-1]
