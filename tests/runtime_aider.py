"""A sixth CLI with no hooks, no skill folder, no MCP and nothing to permit, written as
docs/ARCHITECTURE.md's "Adding a sixth CLI" says: one module stating its `SPEC`.

Shaped after Aider, which runs no hooks; the file locations are this test's own and were not
checked against a real Aider. tests/test_runtime_contract.py registers it (a monkeypatched
registry, and `agentmem.runtimes.aider` in sys.modules for the hook dispatch) and runs setup,
doctor's wiring checks and the hook commands over it.
"""

import os

from agentmem.runtimes.spec import DefaultMode, Spec

NAME = "aider"


class Aider:
    name = NAME
    permission_setting = False
    trust = None
    mcp = None
    skills_root = None  # it reads no skill folder
    hooks_file = None  # it runs no hooks

    def __init__(self, env=None):
        from agentmem.runtimes import base

        env = os.environ if env is None else env
        self.config_dir = base.home(env) / ".aider"
        self.instructions = self.config_dir / "CONVENTIONS.md"

    def grant_permissions(self, machine, helper, store):
        return False, "nothing needed"

    def withdraw_permissions(self, machine):
        return False

    def trust_projects(self, machine, folders, helper):
        return False, "nothing to write: it asks no folder trust"

    def untrust_projects(self, machine):
        return False

    def permissions_status(self, machine, helper, store):
        return None

    def after_instructions(self, machine, existed):
        return None


SPEC = Spec(
    name=NAME, title="Aider", runtime=Aider, reminder_shape=None, reflection=None,
    no_reflection="not available: Aider runs no hooks",
    default_mode=DefaultMode(command="aider --message", saves=True, searches=True, trusted_saves=True,
                             trusted_searches=True, otherwise="nothing"),
)
