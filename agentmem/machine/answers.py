"""Turning on an optional Copier answer (`hybrid`, `mcp`) on this machine, as one printed command.

On a machine folder that Copier set up, and for the helper running from that folder's venv, the
durable way to add an extra is the update that changes the answer: it installs the extra into the
helper venv, records the choice (so the next `copier update` keeps it) and reruns setup. `copier`
need not be on PATH: `agentmem upgrade` finds the one that ran. Anywhere else (a helper installed
by pip, a checkout's venv) the caller falls back to pip. Light on purpose: the search path asks.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from agentmem.errors import Command

ANSWERS_FILE = ".copier-answers.yml"  # where Copier records the answers (its default name)


def set_up_by_copier(machine: str) -> bool:
    """Whether `machine` is a Copier-rendered folder and this interpreter is its helper venv's."""
    answers = os.path.join(machine, ANSWERS_FILE)
    venv = os.path.join(machine, ".venv")
    return os.path.isfile(answers) and os.path.realpath(sys.prefix) == os.path.realpath(venv)


def turn_on(machine: str, answer: str) -> Command | None:
    """The helper command that sets the boolean Copier `answer` to true, or None off a Copier machine."""
    if not set_up_by_copier(machine):
        return None
    from agentmem.errors import Command

    return Command("upgrade", "--vcs-ref=:current:", "--data", f"{answer}=true")
