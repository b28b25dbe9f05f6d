"""Refuse request bodies over the configured size with 413, before any route sees them.

The body is read here first (at most the limit, which is small) and then handed on, so
a chunked body without a Content-Length is refused the same way as one that declares it.
A route whose body is small by nature (a search: one bounded query) has its own, smaller
limit: a megabyte sent there is refused by its declared length, never kept or parsed.
The refusal waits ``REFUSAL_PAUSE`` first, so a client that resends at once is slowed down.
Before it, the rest of the body is read and dropped (up to ``_DRAINED_BYTES``): most clients
(urllib, requests, httpx) send the whole body before they read an answer, and a connection
closed on unread data is reset, so they would see "connection reset" instead of the 413.

A body read whole is also refused (400) when its JSON spells a lone UTF-16 surrogate
(``"\\ud800"``): valid JSON, but no text — it could be neither stored, sent to a model nor
echoed back, and failed deep inside (a 500, a "provider unavailable") instead of here.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from huichat.app.serve.errors import REFUSAL_PAUSE, send_error

_DRAINED_BYTES = 64 * 1024 * 1024
"""The most of a refused body read to its end so that its client can read the 413 (what
nginx's lingering close does); a larger one is cut off, and its client sees the reset."""
_DRAIN_SECONDS = 30.0
"""How long a refused body may take to arrive before the connection is cut."""


class BodyLimit:
    """Pure ASGI middleware: 413 for a declared or streamed body over ``max_bytes``."""

    def __init__(self, app: ASGIApp, max_bytes: int, routes: Mapping[str, int] | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.routes = dict(routes or {})
        """Smaller limits of some paths."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = min(self.max_bytes, self.routes.get(scope.get("path", ""), self.max_bytes))
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            if declared.isdigit() and int(declared) <= _DRAINED_BYTES:
                await _drain(receive)
            await self._refuse(send, limit)
            return
        parts: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, _replay([message], receive), send)
                return
            parts.append(message.get("body", b""))
            size += len(parts[-1])
            if size > limit:
                if message.get("more_body", False):
                    await _drain(receive, size)
                await self._refuse(send, limit)
                return
            if not message.get("more_body", False):
                break
        whole = b"".join(parts)
        if _lone_surrogate(whole):
            await send_error(send, 400, _NO_TEXT)
            return
        body = {"type": "http.request", "body": whole, "more_body": False}
        await self.app(scope, _replay([body], receive), send)

    async def _refuse(self, send: Send, limit: int) -> None:
        await asyncio.sleep(REFUSAL_PAUSE)
        await send_error(send, 413, f"the request body is larger than {limit} bytes")


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_NO_TEXT = (
    "the body holds a lone UTF-16 surrogate (an escape such as \\ud800 without its pair): send valid Unicode text"
)


def _lone_surrogate(body: bytes) -> bool:
    """True when ``body`` is JSON with a string no text can be made of (a surrogate without its
    pair). Only a body that spells a surrogate escape at all is parsed here."""
    if _SURROGATE_ESCAPE.search(body) is None:
        return False
    try:
        pending: list[Any] = [json.loads(body)]
    except (ValueError, RecursionError):
        return False  # no JSON: the route says what is wrong with it
    while pending:  # a loop, not recursion: JSON nests deeper than Python's stack
        value = pending.pop()
        if isinstance(value, dict):
            pending.extend(value.keys())
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
        elif isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return True
    return False


async def _drain(receive: Receive, size: int = 0) -> None:
    """Read and drop the rest of a refused body while it keeps arriving (a pause of
    ``REFUSAL_PAUSE`` ends it), within ``_DRAIN_SECONDS`` and ``_DRAINED_BYTES`` (``size``: what
    was read of it already). A client that waits for the answer before it sends loses a pause."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + _DRAIN_SECONDS
    while size <= _DRAINED_BYTES and (left := deadline - loop.time()) > 0:
        try:
            message = await asyncio.wait_for(receive(), min(REFUSAL_PAUSE, left))
        except TimeoutError:
            return
        if message["type"] != "http.request":
            return
        size += len(message.get("body", b""))
        if not message.get("more_body", False):
            return


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """A ``receive`` that gives ``messages`` first, then the client's own (disconnects)."""
    pending = list(messages)

    async def replay() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replay
