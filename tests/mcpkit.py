"""Drive `agentmem mcp` with the MCP SDK's own client, over stdio, as a client application would.

`session(env, cwd, steps)` starts the real server (`python -m agentmem mcp`) as a child
process in `cwd`, runs `await steps(client)` against it and returns what `steps`
returned plus everything the server wrote on stderr.

The SDK (about a second to import on a busy 2-core box) is imported inside `session`, the
first time a test talks to the server: collecting the suite, or running tests that never
start a server, does not pay for it.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

SERVER = [sys.executable, "-m", "agentmem", "mcp"]


def session(env: dict, cwd: Path, steps, *, mode: str = "legacy", roots=None, server=None):
    """(steps' result, the server's stderr). `roots`: file URIs the client lists (declares roots);
    `mode`: the SDK client's protocol negotiation ("legacy": the initialize handshake, as the CLIs do)."""
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    server = server or SERVER
    params = StdioServerParameters(command=server[0], args=server[1:], env=dict(env), cwd=str(cwd))
    kwargs = {}
    if roots is not None:
        from mcp_types import ListRootsResult, Root

        async def list_roots(context):
            return ListRootsResult(roots=[Root(uri=u) for u in roots])

        kwargs["list_roots_callback"] = list_roots

    async def main(errlog):
        async with Client(stdio_client(params, errlog=errlog), mode=mode, read_timeout_seconds=60, **kwargs) as c:
            return await steps(c)

    with tempfile.TemporaryFile("w+") as errlog:
        result = anyio.run(main, errlog)
        errlog.seek(0)
        return result, errlog.read()


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def call(client, tool: str, arguments: dict | None = None):
    """A tool call: (is_error, text content, structured content)."""
    result = await client.call_tool(tool, arguments)
    return result.is_error, text_of(result), result.structured_content
