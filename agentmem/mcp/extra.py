"""The `mcp` extra: is the pinned MCP SDK importable by this helper, and the one command that adds it.

Only `agentmem mcp` and setup's MCP step ask; nothing here imports the SDK.
"""

from __future__ import annotations

import shlex
import sys

PACKAGE = "mcp"
VERSION = "2.3.0"  # the pin of pyproject.toml's `mcp` extra (tests/test_mcp_setup.py checks they agree)
REQUIREMENT = f"{PACKAGE}=={VERSION}"


def problem() -> str | None:
    """Why this helper cannot serve MCP (the SDK is missing, or another version), or None."""
    from importlib import metadata, util

    if util.find_spec(PACKAGE) is None:
        return "the MCP Python SDK is not installed in this helper"
    try:
        found = metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return "the MCP Python SDK in this helper has no version metadata"
    if found != VERSION:
        return f"this helper has MCP Python SDK {found}, and agentmem is built on {VERSION}"
    return None


def install_command(machine: str) -> str:
    """The one command that adds the extra: for a machine set up by Copier, the update that turns the
    `mcp` answer on (it installs the SDK into the helper venv and registers the server); otherwise pip."""
    from agentmem.machine import answers

    update = answers.turn_on(machine, "mcp")
    if update is not None:
        return update.line()
    from importlib import util

    pip = shlex.join([sys.executable, "-m", "pip", "install", REQUIREMENT])
    if util.find_spec("pip") is None:  # a venv made without pip
        return shlex.join([sys.executable, "-m", "ensurepip"]) + " && " + pip
    return pip
