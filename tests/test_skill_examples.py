"""The core skill's commands, copied the way agents copy them: as printed, and with the
indentation of a Markdown code block (which turns the save example's heredoc into one that
never ends)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

from agentmem.errors import EXIT_INVALID, EXIT_MEANINGS
from tests.fixtures_core import REPO

SKILL = REPO / "template" / "agent-memory" / "SKILL.md"
COMMANDS = REPO / "template" / "agent-memory" / "references" / "commands.md"


def _save_example(helper: str) -> str:
    blocks = re.findall(r"```sh\n(.*?)```", SKILL.read_text(), re.S)
    [example] = [b for b in blocks if "<<'NOTE'" in b]
    return example.replace("@AGENTMEM@", helper)


def _bash(m, script, cwd):
    return subprocess.run(["bash", "-c", script], cwd=cwd, env=m.env, capture_output=True, text=True, timeout=120)


def test_the_skills_save_example_runs_as_printed_and_stores_only_the_note(machines, tmp_path, store_dir):
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = machines("laptop", {checkout: "app"})
    done = _bash(m, _save_example(shlex.join([sys.executable, "-m", "agentmem"])), checkout)
    assert done.returncode == 0, done.stderr
    [note] = list(store_dir.rglob("*.md"))
    body = note.read_text().split("\n---\n", 1)[1]
    assert body.strip() == ("The CI cache key must include the lockfile hash (verified: two runs, cache hit on "
                            "the second).")


def test_the_save_example_copied_with_code_block_indentation_is_refused_and_writes_nothing(machines, tmp_path,
                                                                                           store_dir):
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = machines("laptop", {checkout: "app"})
    example = _save_example(shlex.join([sys.executable, "-m", "agentmem"]))
    indented = "".join(f"    {line}" for line in example.splitlines(keepends=True))
    done = _bash(m, indented, checkout)
    ours = [line for line in done.stderr.splitlines() if line.startswith("agentmem:")]  # bash warns too
    assert done.returncode == EXIT_INVALID and len(ours) == 1, done.stderr
    assert "indented line 'NOTE'" in ours[0] and "heredoc" in ours[0] and "nothing was written" in ours[0]
    waiting = m.home / "pending"
    assert not list(store_dir.rglob("*.md")) and (not waiting.exists() or not any(waiting.iterdir()))


def test_a_body_that_only_mentions_a_word_in_capitals_is_saved(machines, tmp_path, store_dir):
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = machines("laptop", {checkout: "app"})
    status, _, err = m.run("save", "--title", "Caps", input="Steps:\n    run make\n    DONE when green\n", cwd=checkout)
    assert status == 0, err  # only a lone capitalised word on the last line looks like a marker
    status, _, err = m.run("save", "--title", "File", str(REPO / "LICENSE"), cwd=checkout)
    assert status == 0, err


def test_the_command_reference_lists_every_exit_status():
    text = COMMANDS.read_text()
    statuses = re.search(r"Exit statuses: (.*?)\n\n", text, re.S).group(1)
    listed = [int(n) for n in re.findall(r"(?:^|, )(\d+) ", statuses.replace("\n", " "))]
    assert listed == sorted(EXIT_MEANINGS), listed
