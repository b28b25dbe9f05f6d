"""A small scripted OpenAI-compatible server on 127.0.0.1, for the tests and ``huichat bench loop``.

It speaks ``POST /v1/chat/completions`` (streaming SSE and plain JSON) and ``GET
/v1/models``. Each request takes the next ``Reply`` from the script, or asks a
``responder`` function; every request body is recorded for assertions.

It can behave like the servers small local models run behind: ``needs_tool_choice``
drops the tools of a request that does not send ``tool_choice`` (llama-cpp-python's
``chatml-function-calling``), ``stream_tools`` makes a streamed tool call fail or
come back empty. ``print_call`` writes calls as text, in the forms such models use.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal


@dataclass
class ToolCall:
    """A tool call the fake model makes."""

    name: str
    arguments: dict[str, Any]
    id: str = ""


@dataclass
class Reply:
    """What the fake model answers to one request."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    status: int = 200
    error_message: str = ""
    chunk_chars: int = 4
    delay: float = 0.0
    """Seconds to wait before answering (timeouts)."""
    chunk_delay: float = 0.0
    cut_after_chunks: int | None = None
    """Drop the connection after this many chunks (a stream cut off mid-way)."""
    cut_after_bytes: int | None = None
    """Drop the connection after this many bytes of the stream (possibly inside a character)."""
    retry_after: int | None = None
    chunks: list[str] | None = None
    """The text's streamed pieces, exactly (instead of cutting ``text`` every ``chunk_chars``)."""


Responder = Callable[[dict[str, Any]], Reply]
StreamTools = Literal["ok", "fail", "empty"]
"""How a streamed reply that makes tool calls goes: normally, as a 500 error, or empty."""
STREAMING_TOOLS_UNSUPPORTED = "Automatic streaming tool choice is not supported"
"""llama-cpp-python's error for a streamed request whose answer is a tool call."""

TEXT_FORMS = (
    "tool_call",
    "tools",
    "function_tag",
    "fenced",
    "bare",
    "list",
    "prose",
    "function_key",
    "tool_key",
)
"""The ways ``print_call`` can print calls, as small models do."""


def _call_json(call: ToolCall, form: str) -> dict[str, Any]:
    if form == "function_key":
        return {"type": "function", "function": {"name": call.name, "arguments": json.dumps(call.arguments)}}
    if form == "tool_key":
        return {"tool": call.name, "parameters": call.arguments}
    return {"name": call.name, "arguments": call.arguments}


def print_call(form: str, calls: list[ToolCall]) -> str:
    """``calls`` printed as text in ``form`` (one of ``TEXT_FORMS``)."""
    dumped = [json.dumps(_call_json(c, form), ensure_ascii=False) for c in calls]
    if form == "tool_call":
        return "\n".join(f"<tool_call>\n{d}\n</tool_call>" for d in dumped)
    if form == "tools":
        return "\n".join(f"<tools>\n{d}\n</tools>" for d in dumped)
    if form == "function_tag":
        return "".join(f"<function={c.name}>{json.dumps(c.arguments, ensure_ascii=False)}</function>" for c in calls)
    if form == "fenced":
        return "```json\n" + "\n".join(dumped) + "\n```"
    if form == "list":
        return "[" + ", ".join(dumped) + "]"
    if form == "prose":
        calls_text = "\n".join(f"<tool_call>\n{d}\n</tool_call>" for d in dumped)
        return f"让我先查一下记忆。\n{calls_text}\n根据结果，答案是：（猜测）"
    return "\n".join(dumped)


class FakeLLM:
    """The server; use as a context manager or call ``start()``/``stop()``.

    ``needs_tool_choice`` hides the tools from the ``responder`` (the model) when a request
    sends none; ``stream_tools`` applies to scripted and responder replies alike.
    """

    def __init__(
        self,
        script: list[Reply] | None = None,
        responder: Responder | None = None,
        *,
        needs_tool_choice: bool = False,
        stream_tools: StreamTools = "ok",
    ) -> None:
        self.script = list(script or [])
        self.responder = responder
        self.needs_tool_choice = needs_tool_choice
        self.stream_tools: StreamTools = stream_tools
        self.requests: list[dict[str, Any]] = []
        self.dropped = 0
        """Streams the client closed before their end (a stopped reply)."""
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeLLM:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def push(self, *replies: Reply) -> None:
        with self._lock:
            self.script.extend(replies)

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            if self.script:
                return self.script.pop(0)
        if self.responder is None:
            return Reply(text="ok")
        seen = body
        if self.needs_tool_choice and body.get("tools") and body.get("tool_choice") in (None, "none"):
            seen = {k: v for k, v in body.items() if k != "tools"}  # the model never sees them
        return self.responder(seen)

    def _refused(self, body: dict[str, Any], reply: Reply) -> Reply | None:
        """The error or empty reply a server that cannot stream tool calls gives instead."""
        if not (body.get("stream") and reply.tool_calls and reply.status == 200):
            return None
        if self.stream_tools == "fail":
            with self._lock:
                if self.responder is None:
                    self.script.insert(0, reply)  # the model would choose the same again
            return Reply(status=500, error_message=STREAMING_TOOLS_UNSUPPORTED)
        if self.stream_tools == "empty":
            return Reply()
        return None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                payload = json.dumps({"object": "list", "data": [{"id": "fake-model", "object": "model"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                body["_headers"] = {k.lower(): v for k, v in self.headers.items()}
                reply = fake._next(body)
                reply = fake._refused(body, reply) or reply
                if reply.delay:
                    time.sleep(reply.delay)
                try:
                    if reply.status != 200:
                        self._error(reply)
                    elif body.get("stream"):
                        self._stream(body, reply)
                    else:
                        self._plain(body, reply)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _error(self, reply: Reply) -> None:
                payload = json.dumps(
                    {
                        "error": {
                            "message": reply.error_message or "error",
                            "type": "fake_error",
                            "code": reply.status,
                        }
                    }
                ).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                if reply.retry_after is not None:
                    self.send_header("Retry-After", str(reply.retry_after))
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _plain(self, body: dict[str, Any], reply: Reply) -> None:
                text = "".join(reply.chunks) if reply.chunks is not None else reply.text
                message: dict[str, Any] = {"role": "assistant", "content": text or None}
                if reply.tool_calls:
                    message["tool_calls"] = [
                        {
                            "id": call.id or f"call_{i}",
                            "type": "function",
                            "function": {
                                "name": call.name,
                                "arguments": json.dumps(call.arguments, ensure_ascii=False),
                            },
                        }
                        for i, call in enumerate(reply.tool_calls)
                    ]
                payload = json.dumps(
                    {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", "fake-model"),
                        "choices": [
                            {
                                "index": 0,
                                "message": message,
                                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                    },
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _chunk(self, body: dict[str, Any], delta: dict[str, Any], finish: str | None = None) -> bytes:
                data = {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": body.get("model", "fake-model"),
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                }
                return f"data: {json.dumps(data)}\n\n".encode()  # escaped: a lone surrogate stays sendable

            def _stream(self, body: dict[str, Any], reply: Reply) -> None:
                chunks: list[bytes] = [self._chunk(body, {"role": "assistant", "content": ""})]
                text = reply.text
                step = max(1, reply.chunk_chars)
                pieces = (
                    reply.chunks
                    if reply.chunks is not None
                    else [text[i : i + step] for i in range(0, len(text), step)]
                )
                chunks.extend(self._chunk(body, {"content": piece}) for piece in pieces)
                for index, call in enumerate(reply.tool_calls):
                    arguments = json.dumps(call.arguments, ensure_ascii=False)
                    head = {
                        "tool_calls": [
                            {
                                "index": index,
                                "id": call.id or f"call_{index}",
                                "type": "function",
                                "function": {"name": call.name, "arguments": ""},
                            }
                        ]
                    }
                    chunks.append(self._chunk(body, head))
                    for i in range(0, len(arguments), 7):
                        part = {"tool_calls": [{"index": index, "function": {"arguments": arguments[i : i + 7]}}]}
                        chunks.append(self._chunk(body, part))
                chunks.append(self._chunk(body, {}, "tool_calls" if reply.tool_calls else "stop"))
                chunks.append(b"data: [DONE]\n\n")
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                if reply.cut_after_chunks is not None or reply.cut_after_bytes is not None:
                    # no length, no chunked framing: the connection just ends early
                    self.send_header("Connection", "close")
                    self.end_headers()
                    sent = b"".join(chunks[: reply.cut_after_chunks])
                    self.wfile.write(sent[: reply.cut_after_bytes])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    for chunk in chunks:
                        self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                        self.wfile.flush()
                        if reply.chunk_delay:
                            time.sleep(reply.chunk_delay)
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):  # the client closed the request mid-stream
                    with fake._lock:
                        fake.dropped += 1
                    self.close_connection = True

        return Handler
