"""A small scripted OpenAI-compatible server on 127.0.0.1 for tests.

It speaks ``POST /v1/chat/completions`` (streaming SSE and plain JSON) and ``GET
/v1/models``. Each request takes the next ``Reply`` from the script, or asks a
``responder`` function; every request body is recorded for assertions.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


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


Responder = Callable[[dict[str, Any]], Reply]


class FakeLLM:
    """The server; use as a context manager or call ``start()``/``stop()``."""

    def __init__(self, script: list[Reply] | None = None, responder: Responder | None = None) -> None:
        self.script = list(script or [])
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
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
        if self.responder is not None:
            return self.responder(body)
        return Reply(text="ok")

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
                message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
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
                    ensure_ascii=False,
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
                return f"data: {json.dumps(data, ensure_ascii=False)}\n\n".encode()

            def _stream(self, body: dict[str, Any], reply: Reply) -> None:
                chunks: list[bytes] = [self._chunk(body, {"role": "assistant", "content": ""})]
                text = reply.text
                for i in range(0, len(text), max(1, reply.chunk_chars)):
                    chunks.append(self._chunk(body, {"content": text[i : i + reply.chunk_chars]}))
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
                for chunk in chunks:
                    self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    self.wfile.flush()
                    if reply.chunk_delay:
                        time.sleep(reply.chunk_delay)
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

        return Handler
