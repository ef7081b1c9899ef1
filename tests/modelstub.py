"""A recording stand-in for the model APIs the real agent CLIs call, on 127.0.0.1.

It speaks just enough of two wire formats:
- OpenAI Responses (`POST /v1/responses`, SSE), which Codex uses;
- Anthropic Messages (`POST /v1/messages`, SSE), which Claude Code uses.

Each model turn is answered from a script: `Text("...")`, `Shell("cmd")` (a
shell tool call: Codex `exec_command`, Claude `Bash`) or `ToolCall(name, arguments)`
(any other tool the CLI offers, e.g. an MCP server's). After a tool call the CLI
runs the command and sends its output in the next request, where a test reads
it. Every request body is recorded, so tests assert what reached the model.
A step may also be a function of the request it answers, returning either.
When the script runs out, the stand-in answers "done.".
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Shell:
    command: str


@dataclass(frozen=True)
class ToolCall:
    """A call of the tool `name` with `arguments`: a Responses `function_call` (carrying `namespace`
    when the CLI lists the tool inside a namespace, as Codex does an MCP server's), a Messages `tool_use`."""

    name: str
    arguments: dict
    namespace: str | None = None


@dataclass
class Request:
    path: str
    body: dict

    @property
    def text(self) -> str:
        """The whole body as one string, for 'did X reach the model' checks."""
        return json.dumps(self.body, ensure_ascii=False)

    def texts(self) -> list[tuple[str, str]]:
        """Every text piece in the request as (role, text): system, developer, user, assistant."""
        found = []
        system = self.body.get("system")
        if isinstance(system, str):
            found.append(("system", system))
        elif isinstance(system, list):
            found += [("system", b.get("text", "")) for b in system if isinstance(b, dict)]
        if isinstance(self.body.get("instructions"), str):
            found.append(("system", self.body["instructions"]))
        for msg in (self.body.get("input") or []) + (self.body.get("messages") or []):
            if not isinstance(msg, dict):
                continue
            content = msg.get("content")
            if isinstance(content, str):
                found.append((msg.get("role", ""), content))
            elif isinstance(content, list):
                for block in content:
                    if isinstance(block, dict) and isinstance(block.get("text"), str):
                        found.append((msg.get("role", ""), block["text"]))
        return found

    def texts_containing(self, needle: str) -> list[tuple[str, str]]:
        return [(role, text) for role, text in self.texts() if needle in text]

    def tool_outputs(self) -> list[str]:
        """Outputs of earlier tool calls carried in this request (either wire format)."""
        found = []
        for item in self.body.get("input") or []:  # Responses
            if isinstance(item, dict) and item.get("type") == "function_call_output":
                out = item.get("output")
                found.append(out if isinstance(out, str) else json.dumps(out))
        for msg in self.body.get("messages") or []:  # Messages
            content = msg.get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    inner = block.get("content")
                    if isinstance(inner, list):
                        inner = "".join(b.get("text", "") for b in inner if isinstance(b, dict))
                    found.append(inner if isinstance(inner, str) else json.dumps(inner))
        return found


@dataclass
class ModelStub:
    script: list = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)

    def __post_init__(self):
        self._lock = threading.Lock()
        self._server = None
        self._thread = None
        self._calls = 0

    # -- lifecycle -------------------------------------------------------
    def start(self) -> ModelStub:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output clean
                pass

            def do_GET(self):
                self._send(404, "application/json", b'{"error": "not found"}')

            def do_HEAD(self):
                self._send(404, "application/json", b"")

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                path = self.path.split("?", 1)[0]
                if path.endswith("/responses"):
                    stub._record(path, body)
                    self._sse(_responses_events(stub._next_reply(), stub._next_id()))
                elif path.endswith("/messages/count_tokens"):
                    self._send(200, "application/json", b'{"input_tokens": 1}')
                elif path.endswith("/messages"):
                    stub._record(path, body)
                    events = _messages_events(stub._next_reply(), stub._next_id(), body.get("model", "m"))
                    if body.get("stream"):
                        self._sse(events)
                    else:
                        self._send(200, "application/json", json.dumps(_messages_json(events)).encode())
                else:
                    self._send(404, "application/json", b'{"error": "not found"}')

            def _send(self, status, ctype, data):
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _sse(self, events):
                data = b"".join(
                    f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode() for name, payload in events
                )
                self._send(200, "text/event-stream", data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- script ----------------------------------------------------------
    def _record(self, path, body):
        with self._lock:
            self.requests.append(Request(path, body))

    def _next_reply(self):
        with self._lock:
            reply = self.script.pop(0) if self.script else Text("done.")
            request = self.requests[-1] if self.requests else None
        # A callable step decides from the request it answers, as a model reading its context would.
        return reply(request) if callable(reply) else reply

    def _next_id(self) -> int:
        with self._lock:
            self._calls += 1
            return self._calls

    def all_text(self) -> str:
        return "\n".join(r.text for r in self.requests)

    def tool_outputs(self) -> list[str]:
        return [out for r in self.requests for out in r.tool_outputs()]


def _responses_events(reply, n: int) -> list[tuple[str, dict]]:
    rid = f"resp_{n}"
    if isinstance(reply, Shell):
        item = {
            "type": "function_call",
            "id": f"fc_{n}",
            "call_id": f"call_{n}",
            "name": "exec_command",
            "arguments": json.dumps({"cmd": reply.command}),
        }
    elif isinstance(reply, ToolCall):
        item = {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": reply.name,
                "arguments": json.dumps(reply.arguments)}
        if reply.namespace:
            item["namespace"] = reply.namespace
    else:
        item = {
            "type": "message",
            "id": f"msg_{n}",
            "role": "assistant",
            "content": [{"type": "output_text", "text": reply.text}],
        }
    return [
        ("response.created", {"type": "response.created", "response": {"id": rid}}),
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
        (
            "response.completed",
            {
                "type": "response.completed",
                "response": {"id": rid, "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}},
            },
        ),
    ]


def _messages_events(reply, n: int, model: str) -> list[tuple[str, dict]]:
    start = {
        "type": "message_start",
        "message": {
            "id": f"msg_{n}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
    }
    if isinstance(reply, Shell):
        block = {"type": "tool_use", "id": f"toolu_{n}", "name": "Bash", "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps({"command": reply.command})}
        stop = "tool_use"
    elif isinstance(reply, ToolCall):
        block = {"type": "tool_use", "id": f"toolu_{n}", "name": reply.name, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(reply.arguments)}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": reply.text}
        stop = "end_turn"
    return [
        ("message_start", start),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 1}},
        ),
        ("message_stop", {"type": "message_stop"}),
    ]


def _messages_json(events) -> dict:
    """A non-streaming Messages reply built from the same events."""
    message = dict(events[0][1]["message"])
    block = dict(events[1][1]["content_block"])
    delta = events[2][1]["delta"]
    if block["type"] == "tool_use":
        block["input"] = json.loads(delta["partial_json"])
    else:
        block["text"] = delta["text"]
    message["content"] = [block]
    message["stop_reason"] = events[4][1]["delta"]["stop_reason"]
    return message
