"""`agentmem mcp`: serve this machine's memory to an MCP client over stdio (needs the `mcp` extra).

The client (Claude Code, Codex, an IDE agent) starts one server per session; setup
registers it when the Copier answer `mcp` is yes. Its tools are those of
`agentmem/mcp/tools.py`, the same library calls as `search`, `read`, `save`,
`pending` and `save --retry`.
"""

from __future__ import annotations

from agentmem.cli import common
from agentmem.cli.result import Result
from agentmem.errors import NotConfigured

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    import argparse


def add_mcp(sp: argparse.ArgumentParser) -> None:
    pass  # stdin/stdout carry the protocol; nothing to configure


def run_mcp(args: argparse.Namespace) -> Result:
    from agentmem.mcp import extra

    problem = extra.problem()
    if problem is not None:
        raise NotConfigured(problem, hint=f"add it with: {extra.install_command(common.machine())}")
    from agentmem.mcp import sdk_import

    sdk_import.prepare()  # before the SDK's first import: only what a stdio server needs, before it answers
    from agentmem.mcp import server

    server.serve()
    return Result({}, "")
