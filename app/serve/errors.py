"""Errors in the OpenAI shape (``{"error": {"message", "type", "code"}}``), so any client can read them.

Every error is answered so: the API's own, validation, the kernel's (a deadline passed: 504
with Retry-After; memory unavailable: 503 with Retry-After), and anything unexpected (500,
its cause in the server's log, not in the answer). A complete JSON answer with its length
keeps a kept-alive connection usable.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from huichat.app.users.keys import KeyRingError
from huichat.memory.errors import DeadlinePassed, IndexUnavailable, KernelError, TooLong

log = logging.getLogger("huichat.serve")
REFUSAL_PAUSE = 1.0
"""Seconds a request refused before any work (too large, too many failed key checks) waits
for its answer: a client that resends at once (a flood) is slowed to one request per
connection a second, at the cost of a sleeping coroutine, instead of keeping the event loop
answering it. Reading its body is paused meanwhile (the server's flow control)."""
MEMORY_HEADER = "X-Huichat-Memory"
"""Every reply says whether memory worked (``ok``) or chat went on without it (``degraded``)."""

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    501: "not_implemented",
    500: "api_error",
    502: "provider_error",
    503: "memory_unavailable",
    504: "timeout_error",
}


class ApiError(StarletteHTTPException):
    """An HTTP error with one user-facing line."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(status, message, dict(headers) if headers else None)

    def response(self) -> JSONResponse:
        """This error as its answer."""
        return error_response(self.status_code, str(self.detail), self.headers)


def error_body(status: int, message: str) -> dict[str, Any]:
    """The body of an error response."""
    return {"error": {"message": message, "type": _TYPES.get(status, "api_error"), "code": status}}


def error_response(status: int, message: str, headers: Mapping[str, str] | None = None) -> JSONResponse:
    """An error response in the OpenAI shape."""
    return JSONResponse(error_body(status, message), status_code=status, headers=dict(headers or {}))


async def send_error(send: Send, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
    """An error in the OpenAI shape sent straight over ASGI, for the refusals and failures that
    are answered before (or after) the framework's routing and handlers."""
    payload = json.dumps(error_body(status, message)).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    raw += [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": payload})


def install_error_handlers(app: FastAPI, *, deadline_seconds: float, retry_seconds: float) -> None:
    """Every HTTP, validation and kernel error answered in the OpenAI shape, in one line;
    anything unexpected too (``Unexpected``).

    ``deadline_seconds``: how long a search may take (a client told to retry waits as long);
    ``retry_seconds``: how often degraded memory is tried again.
    """

    async def http_error(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        return error_response(exc.status_code, str(exc.detail), exc.headers)

    async def invalid(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        sent_json = _is_json(request.headers.get("content-type", ""))
        problems = [_problem(error, sent_json) for error in exc.errors()[:3]]
        return error_response(400, "invalid request: " + "; ".join(problems))

    async def kernel_error(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, KernelError)
        if isinstance(exc, DeadlinePassed):
            return error_response(504, str(exc), {"Retry-After": str(math.ceil(deadline_seconds))})
        if isinstance(exc, IndexUnavailable):
            return error_response(503, str(exc), unavailable_headers(retry_seconds))
        if isinstance(exc, TooLong):
            return error_response(413, str(exc))
        log.error("kernel error: %s", exc)
        return error_response(500, str(exc))

    async def keys_unreadable(_request: Request, exc: Exception) -> JSONResponse:
        return keys_refusal(exc, retry_seconds).response()

    app.add_exception_handler(KeyRingError, keys_unreadable)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(KernelError, kernel_error)
    app.add_middleware(Unexpected)


KEYS_UNREADABLE = (
    "the server cannot read its API keys, so no key can be checked; its log says why (tell whoever runs it)"
)


def keys_refusal(exc: Exception, retry_seconds: float) -> ApiError:
    """The 503 of a request that needs the API keys while their file cannot be read (damaged,
    unreadable): logged once per request with its cause, which stays out of the answer."""
    log.error("API keys: %s", exc)
    return ApiError(503, KEYS_UNREADABLE, {"Retry-After": str(math.ceil(retry_seconds))})


def _is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


def _problem(error: Mapping[str, Any], sent_json: bool) -> str:
    """One validation error as a line: a body that is no JSON says what to send instead."""
    loc = tuple(error.get("loc", ()))
    if error.get("type") == "json_invalid":
        reason = str((error.get("ctx") or {}).get("error") or "cannot be read")
        at = f" at character {loc[1]}" if len(loc) > 1 else ""
        return f"the body is not valid JSON ({reason}{at})"
    if loc == ("body",) and not sent_json:
        # FastAPI reads a body as JSON only when it is declared so (curl -d declares a form)
        return "the body must be a JSON object, sent with 'Content-Type: application/json'"
    where = ".".join(str(part) for part in loc if part != "body")
    return f"{where or 'body'}: {error.get('msg', 'invalid')}"


def unavailable_headers(retry_seconds: float) -> dict[str, str]:
    """What a 503 for degraded memory carries: when to retry, and that memory is degraded."""
    return {"Retry-After": str(math.ceil(retry_seconds)), MEMORY_HEADER: "degraded"}


class Unexpected:
    """Pure ASGI middleware: an exception no handler took becomes a JSON 500 (logged with its
    traceback) instead of Starlette's plain-text one and a reset connection."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception as exc:  # the last boundary of a request: log the cause, answer one line
            log.exception("%s %s failed", scope.get("method"), scope.get("path"))
            if started:  # the status is out already: end the body so the connection stays usable
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
            await send_error(send, 500, f"internal error ({type(exc).__name__}); the server's log has the details")
