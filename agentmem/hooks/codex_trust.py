"""Mark our Codex hooks as trusted, through Codex's own app-server (an explicit, opt-in step).

Codex skips a user hook silently until it is trusted, and stores trust as a
hash of the hook per key in its config.toml. Instead of editing that file,
we ask Codex to do it: `codex app-server` (JSON-RPC over stdio, labelled
experimental in Codex 0.171.0) lists the hooks with their key, hash and trust
status (`hooks/list`) and writes `hooks.state.<key>.trusted_hash` for us
(`config/batchWrite`). Only hooks whose command is ours and that come from the
user's hooks.json are trusted; any other hook keeps the trust it had.
"""

from __future__ import annotations

import json
import queue
import shutil
import subprocess
import threading
import time
from pathlib import Path

from agentmem.errors import CodexTrustError, Command, InvalidInput, NextStep, NotFound, Option

# Seconds for the whole exchange: many times what app-server takes to answer (docs/benchmarks.md),
# so only one that hangs reaches it.
TRUST_TIMEOUT = 30.0


def trust_hint(helper: list[str] | None = None) -> str:
    """What setup and `hooks install` tell the owner: the one command that trusts our hooks."""
    trust = Command("hooks", "trust", helper=helper).line()
    return ("Codex skips hooks it has not been told to trust, without a warning: run "
            f"`{trust}` (or trust the agentmem entries in /hooks inside Codex), "
            "and again after any change of their command.")


def find_codex(explicit: str | None = None) -> str:
    path = explicit or shutil.which("codex")
    if not path:
        raise NotFound(NextStep("codex is not on PATH; pass {}, or trust the hooks with /hooks in Codex",
                                Option("codex", "/path/to/codex")))
    return path


class _Session:
    def __init__(self, argv: list[str], env: dict | None, cwd: Path, deadline: float):
        self.deadline = deadline
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=env, cwd=str(cwd), text=True,
        )
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.next_id = 0

    def _pump(self) -> None:
        assert self.proc.stdout is not None  # Popen(stdout=PIPE)
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def call(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self._send({"id": self.next_id, "method": method, "params": params})
        while True:
            remaining = self.deadline - time.monotonic()
            try:
                line = self.lines.get(timeout=max(remaining, 0.01))
            except queue.Empty:
                raise CodexTrustError(f"codex app-server did not answer {method} within {TRUST_TIMEOUT:g} s") from None
            if line is None:
                raise CodexTrustError(f"codex app-server exited before answering {method}")
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if msg.get("id") == self.next_id and "method" not in msg:
                if "error" in msg:
                    why = msg["error"].get("message", msg["error"])
                    raise CodexTrustError(f"codex app-server refused {method}: {why}")
                return msg.get("result") or {}
            if "id" in msg and "method" in msg:  # a request to us: we offer nothing
                self._send({"id": msg["id"], "error": {"code": -32601, "message": "not supported"}})

    def notify(self, method: str) -> None:
        self._send({"method": method})

    def _send(self, msg: dict) -> None:
        assert self.proc.stdin is not None  # Popen(stdin=PIPE)
        try:
            self.proc.stdin.write(json.dumps(msg) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise CodexTrustError("codex app-server closed its input") from None

    def close(self) -> None:
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def trust_our_hooks(codex: str, hooks_file: Path, *, env: dict | None = None, cwd: Path | None = None) -> list[str]:
    """Trust the agentmem hooks Codex loads from `hooks_file`; returns the keys now trusted."""
    from agentmem.hooks.config_files import is_ours

    cwd = Path(cwd or Path.home())
    session = _Session([codex, "app-server"], env, cwd, time.monotonic() + TRUST_TIMEOUT)
    try:
        session.call("initialize", {"clientInfo": {"name": "agentmem", "version": "0"}})
        session.notify("initialized")
        listed = session.call("hooks/list", {"cwds": [str(cwd)]})
        ours = [
            h for entry in listed.get("data") or [] for h in entry.get("hooks") or []
            if h.get("source") == "user" and h.get("handlerType") == "command" and is_ours(h.get("command"))
            and Path(str(h.get("sourcePath"))) == hooks_file
        ]
        if not ours:
            raise InvalidInput(f"Codex lists no agentmem hooks from {hooks_file}; "
                               f"run `{Command('hooks', 'install').line()}` first")
        todo = {h["key"]: {"trusted_hash": h["currentHash"]} for h in ours if h.get("trustStatus") != "trusted"}
        if todo:
            edit = {"keyPath": "hooks.state", "mergeStrategy": "upsert", "value": todo}
            session.call("config/batchWrite", {"edits": [edit]})
            check = session.call("hooks/list", {"cwds": [str(cwd)]})
            status = {h["key"]: h.get("trustStatus") for e in check.get("data") or [] for h in e.get("hooks") or []}
            left = [k for k in todo if status.get(k) != "trusted"]
            if left:
                raise CodexTrustError(f"Codex still reports {len(left)} agentmem hook(s) as not trusted")
        return sorted(h["key"] for h in ours)
    finally:
        session.close()
