"""`agentmem mcp` answers `initialize` having imported only what a stdio server needs of the SDK.

A client starts the server at every session start; most of the wait for its first answer was importing the
SDK: its client side, its high-level server, every model's validator (docs/benchmarks.md, "MCP start-up").
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading

from tests.mcpkit import SERVER
from tests.test_mcp_server import INITIALIZE, _message

# What a stdio server of ours never uses: the SDK's client side, its high-level server, the client's HTTP stack.
NOT_NEEDED = ("mcp.client", "mcp.server.mcpserver", "httpx2")


def test_the_server_answers_without_importing_the_sdks_client_or_high_level_server(laptop, tmp_path):
    argv = [SERVER[0], "-X", "importtime", *SERVER[1:]]
    # stdin stays open until both answers are read, as a client keeps it: a server whose input ends may stop
    # before it answers what it was still working on.
    log = (tmp_path / "stderr").open("w+b")  # a file, not a pipe: -X importtime writes more than a pipe holds
    proc = subprocess.Popen(argv, cwd=laptop.checkout, env=laptop.env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=log)
    proc.stdin.write(_message(INITIALIZE) + _message({"jsonrpc": "2.0", "method": "notifications/initialized"})
                     + _message({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}))
    proc.stdin.flush()
    timer = threading.Timer(120, proc.kill)
    timer.start()
    try:
        answers = [json.loads(proc.stdout.readline() or "null") for _ in range(2)]
        proc.stdin.close()
        status = proc.wait()
    finally:
        timer.cancel()
    log.seek(0)
    stderr = log.read()
    assert status == 0, stderr[-2000:]
    assert answers[0]["result"]["serverInfo"]["name"] == "agentmem"
    assert "memory_search" in [t["name"] for t in answers[1]["result"]["tools"]]  # the models, built when used
    imported = re.findall(rb"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)", stderr, re.M)
    names = {name.decode() for name in imported}
    assert "mcp.server.lowlevel.server" in names
    assert sorted(n for n in names if n.startswith(NOT_NEEDED)) == []


def test_the_packages_deferred_for_the_server_are_whole_when_their_own_names_are_asked_for():
    probe = """
from agentmem.mcp import sdk_import
print(sdk_import.prepare())
import agentmem.mcp.server
from mcp import Client, StdioServerParameters
from mcp.server import MCPServer
import mcp
print(Client.__name__, MCPServer.__name__, hasattr(mcp, "ClientSession"))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[:2] == ["['mcp', 'mcp.server']", "Client MCPServer True"]


def test_a_process_that_imported_the_sdk_already_keeps_it_as_it_is():
    probe = """
import mcp
from agentmem.mcp import sdk_import
print(sdk_import.prepare(), hasattr(mcp, "Client"))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "[] True", done.stderr[-2000:]
