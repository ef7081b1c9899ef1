"""A recording stand-in for the model APIs the real agent CLIs call, on 127.0.0.1.

It speaks just enough of four wire formats:
- OpenAI Responses (`POST /v1/responses`, SSE), which Codex uses;
- Anthropic Messages (`POST /v1/messages`, SSE or JSON), which Claude Code uses;
- OpenAI Chat Completions (`POST /v1/chat/completions`, SSE or JSON), which OpenCode and
  GitHub Copilot CLI use;
- the Gemini API (`POST /v1beta/models/M:streamGenerateContent` / `:generateContent`, plus
  stubs for `:countTokens` and embeddings), which Gemini CLI uses.

Each model turn is answered from a script: `Text("...")`, `Shell("cmd")`, a call of the
shell tool the request itself offers (`exec_command`, `Bash`, `bash`, `run_shell_command`,
...), its arguments filled from that tool's parameter schema, or `ToolCall(name, arguments)`
(any other tool the CLI offers, e.g. an MCP server's; Responses and Messages formats). After a tool call the CLI runs
the command and sends its output in the next request, where a test reads it. A step may also
be a function of the request it answers, returning either. When the script runs out, the
stand-in answers "done.".

Agent turns (requests that offer tools) are recorded in `requests` and consume the script;
a `Shell` step for a request offering no shell-like tool is answered as text naming that.
Side requests that offer no tools at all (OpenCode's title call, a router's JSON-mode call)
are recorded in `side_requests` and always get text (a JSON object filled from the schema
when one is asked for), so they never take a scripted step meant for the agent.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SHELL_TOOLS = ("exec_command", "shell_command", "run_shell_command", "bash", "Bash", "shell")


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


def _tool_specs(body: dict) -> list[tuple[str, dict]]:
    """(name, JSON schema of its parameters) of every function tool the request offers, any format."""
    specs = []
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if isinstance(tool.get("function"), dict):  # Chat Completions
            fn = tool["function"]
            specs.append((fn.get("name", ""), fn.get("parameters") or {}))
        elif isinstance(tool.get("functionDeclarations"), list):  # Gemini
            for fn in tool["functionDeclarations"]:
                if isinstance(fn, dict):
                    specs.append((fn.get("name", ""), fn.get("parametersJsonSchema") or fn.get("parameters") or {}))
        elif "name" in tool:  # Responses, Messages
            specs.append((tool["name"], tool.get("parameters") or tool.get("input_schema") or {}))
    return specs


def shell_tool(body: dict) -> tuple[str, dict] | None:
    """The shell-like tool the request offers, if any, in SHELL_TOOLS order."""
    offered = dict(_tool_specs(body))
    for name in SHELL_TOOLS:
        if name in offered:
            return name, offered[name]
    return None


def shell_arguments(name: str, schema: dict, command: str) -> dict:
    """Arguments for a call of `name` running `command`, filled from its parameter schema."""
    props = schema.get("properties") or {}
    key = "cmd" if "cmd" in props or name == "exec_command" else "command"
    args = {key: command}
    if "description" in props or "description" in (schema.get("required") or []):
        args["description"] = "scripted"
    return args


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
        gemini_system = self.body.get("systemInstruction")
        if isinstance(gemini_system, dict):
            found += [("system", p["text"]) for p in gemini_system.get("parts") or []
                      if isinstance(p, dict) and isinstance(p.get("text"), str)]
        for msg in self.body.get("contents") or []:  # Gemini
            if isinstance(msg, dict):
                found += [(msg.get("role", ""), p["text"]) for p in msg.get("parts") or []
                          if isinstance(p, dict) and isinstance(p.get("text"), str)]
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
        """Outputs of earlier tool calls carried in this request (any wire format)."""
        found = []
        for item in self.body.get("input") or []:  # Responses
            if isinstance(item, dict) and item.get("type") == "function_call_output":
                out = item.get("output")
                found.append(out if isinstance(out, str) else json.dumps(out))
        for msg in self.body.get("messages") or []:
            if not isinstance(msg, dict):
                continue
            content = msg.get("content")
            if msg.get("role") == "tool":  # Chat Completions
                if isinstance(content, list):
                    content = "".join(b.get("text", "") for b in content if isinstance(b, dict))
                found.append(content if isinstance(content, str) else json.dumps(content))
                continue
            if not isinstance(content, list):
                continue
            for block in content:  # Messages
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    inner = block.get("content")
                    if isinstance(inner, list):
                        inner = "".join(b.get("text", "") for b in inner if isinstance(b, dict))
                    found.append(inner if isinstance(inner, str) else json.dumps(inner))
        for msg in self.body.get("contents") or []:  # Gemini
            for part in (msg.get("parts") or []) if isinstance(msg, dict) else []:
                response = part.get("functionResponse") if isinstance(part, dict) else None
                if isinstance(response, dict):
                    inner = response.get("response")
                    if isinstance(inner, dict) and isinstance(inner.get("output"), str):
                        found.append(inner["output"])
                    else:
                        found.append(json.dumps(inner))
        return found

    def skill_listings(self, name: str) -> int:
        """How many times a skill called `name` is offered in this request, in any CLI's listing form."""
        text = "\n".join(t for _, t in self.texts())
        return text.count(f"<name>{name}</name>") + text.count(f"- {name}: ")


@dataclass
class ModelStub:
    script: list = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    side_requests: list[Request] = field(default_factory=list)

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
                path, _, query = self.path.partition("?")
                if path.endswith("/responses"):
                    reply, tool, n = stub._answer(path, body)
                    self._sse(_responses_events(reply, n, tool))
                elif path.endswith("/messages/count_tokens"):
                    self._send(200, "application/json", b'{"input_tokens": 1}')
                elif path.endswith("/messages"):
                    reply, tool, n = stub._answer(path, body)
                    events = _messages_events(reply, n, body.get("model", "m"), tool)
                    if body.get("stream"):
                        self._sse(events)
                    else:
                        self._send(200, "application/json", json.dumps(_messages_json(events)).encode())
                elif path.endswith("/chat/completions"):
                    reply, tool, n = stub._answer(path, body)
                    chunks = _chat_chunks(reply, n, body, tool)
                    if body.get("stream"):
                        self._sse([(None, c) for c in chunks] + [(None, "[DONE]")])
                    else:
                        self._send(200, "application/json", json.dumps(_chat_json(chunks)).encode())
                elif path.endswith((":countTokens",)):
                    self._send(200, "application/json", b'{"totalTokens": 1}')
                elif path.endswith((":embedContent", ":batchEmbedContents")):
                    count = max(1, len(body.get("requests") or []))
                    data = {"embedding": {"values": [0.0] * 8}} if path.endswith(":embedContent") else {
                        "embeddings": [{"values": [0.0] * 8}] * count}
                    self._send(200, "application/json", json.dumps(data).encode())
                elif path.endswith((":streamGenerateContent", ":generateContent")):
                    reply, tool, n = stub._answer(path, body)
                    event = _gemini_response(reply, body, tool)
                    if path.endswith(":streamGenerateContent") and "alt=sse" in query:
                        self._sse([(None, event)])
                    elif path.endswith(":streamGenerateContent"):
                        self._send(200, "application/json", json.dumps([event]).encode())
                    else:
                        self._send(200, "application/json", json.dumps(event).encode())
                else:
                    self._send(404, "application/json", b'{"error": "not found"}')

            def _send(self, status, ctype, data):
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _sse(self, events):
                parts = []
                for name, payload in events:
                    data = payload if isinstance(payload, str) else json.dumps(payload)
                    parts.append((f"event: {name}\n" if name else "") + f"data: {data}\n\n")
                self._send(200, "text/event-stream", "".join(parts).encode())

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
    def _answer(self, path: str, body: dict):
        """(reply, shell tool offered or None, reply number) for one request, recorded."""
        tool = shell_tool(body)
        request = Request(path, body)
        with self._lock:
            self._calls += 1
            n = self._calls
            if not _tool_specs(body) or _json_mode_schema(body) is not None:
                self.side_requests.append(request)
                return Text("done."), None, n
            self.requests.append(request)
            reply = self.script.pop(0) if self.script else Text("done.")
        # A callable step decides from the request it answers, as a model reading its context would.
        reply = reply(request) if callable(reply) else reply
        if isinstance(reply, Shell) and tool is None:
            reply = Text(f"NO_SHELL_TOOL_OFFERED: could not run {reply.command!r}")
        return reply, tool, n

    def all_text(self) -> str:
        return "\n".join(r.text for r in self.requests)

    def tool_outputs(self) -> list[str]:
        return [out for r in self.requests for out in r.tool_outputs()]


def _call_args(reply: Shell, tool, default: str) -> tuple[str, dict]:
    name, schema = tool if tool is not None else (default, {})
    return name, shell_arguments(name, schema, reply.command)


def _responses_events(reply, n: int, tool) -> list[tuple[str, dict]]:
    rid = f"resp_{n}"
    if isinstance(reply, Shell):
        name, args = _call_args(reply, tool, "exec_command")
        item = {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": name,
                "arguments": json.dumps(args)}
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


def _messages_events(reply, n: int, model: str, tool) -> list[tuple[str, dict]]:
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
        name, args = _call_args(reply, tool, "Bash")
        block = {"type": "tool_use", "id": f"toolu_{n}", "name": name, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(args)}
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


def _from_schema(schema: dict):
    """A value of the JSON schema's type: what a JSON-mode request asks the model for."""
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        return {k: _from_schema(v if isinstance(v, dict) else {}) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 1
    if kind == "boolean":
        return False
    return "simple"


def _json_mode_schema(body: dict) -> dict | None:
    config = body.get("generationConfig") or {}
    if config.get("responseMimeType") == "application/json":
        return config.get("responseJsonSchema") or config.get("responseSchema") or {}
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return (fmt.get("json_schema") or {}).get("schema") or {}
    if fmt.get("type") == "json_object":
        return {}
    return None


def _chat_chunks(reply, n: int, body: dict, tool) -> list[dict]:
    base = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": 0, "model": body.get("model", "m")}
    schema = _json_mode_schema(body)
    if isinstance(reply, Shell):
        name, args = _call_args(reply, tool, "bash")
        call = {"index": 0, "id": f"call_{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        choice = {"index": 0, "delta": {"role": "assistant", "content": None, "tool_calls": [call]},
                  "finish_reason": "tool_calls"}
    else:
        text = json.dumps(_from_schema(schema)) if schema is not None else reply.text
        choice = {"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": "stop"}
    chunks = [dict(base, choices=[choice])]
    if (body.get("stream_options") or {}).get("include_usage"):
        chunks.append(dict(base, choices=[], usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}))
    return chunks


def _chat_json(chunks: list[dict]) -> dict:
    """A non-streaming Chat Completions reply built from the same chunks."""
    choice = chunks[0]["choices"][0]
    message = {k: v for k, v in choice["delta"].items()}
    return {"id": chunks[0]["id"], "object": "chat.completion", "created": 0, "model": chunks[0]["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": choice["finish_reason"]}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


def _gemini_response(reply, body: dict, tool) -> dict:
    schema = _json_mode_schema(body)
    if isinstance(reply, Shell):
        name, args = _call_args(reply, tool, "run_shell_command")
        part: dict = {"functionCall": {"name": name, "args": args}}
    elif schema is not None:
        part = {"text": json.dumps(_from_schema(schema))}
    else:
        part = {"text": reply.text}
    return {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}}
