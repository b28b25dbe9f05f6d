"""Errors in the OpenAI shape (``{"error": {"message", "type", "code"}}``), so any client can read them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    501: "not_implemented",
    502: "provider_error",
    503: "memory_unavailable",
}


class ApiError(StarletteHTTPException):
    """An HTTP error with one user-facing line."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(status, message, dict(headers) if headers else None)


def error_body(status: int, message: str) -> dict[str, Any]:
    """The body of an error response."""
    return {"error": {"message": message, "type": _TYPES.get(status, "api_error"), "code": status}}


def error_response(status: int, message: str, headers: Mapping[str, str] | None = None) -> JSONResponse:
    """An error response in the OpenAI shape."""
    return JSONResponse(error_body(status, message), status_code=status, headers=dict(headers or {}))


def install_error_handlers(app: FastAPI) -> None:
    """Every HTTP and validation error answered in the OpenAI shape, in one line."""

    async def http_error(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        return error_response(exc.status_code, str(exc.detail), exc.headers)

    async def invalid(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        problems = []
        for error in exc.errors()[:3]:
            where = ".".join(str(part) for part in error.get("loc", ()) if part != "body")
            problems.append(f"{where or 'body'}: {error.get('msg', 'invalid')}")
        return error_response(400, "invalid request: " + "; ".join(problems))

    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, invalid)
