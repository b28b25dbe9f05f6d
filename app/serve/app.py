"""The app factory: one FastAPI app over a ``Runtime``, with its middleware, routes and docs.

Docs (``/docs``, ``/redoc`` is off) use the Swagger UI shipped in ``static/``, so they work
offline like the dashboard. ``/healthz`` says only that the server is up; every other
route that touches memory authenticates.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse

from huichat import __version__
from huichat.app.runtime import Runtime
from huichat.app.serve import chat, dashboard, memory_api
from huichat.app.serve.auth import KeyCheckGate
from huichat.app.serve.bodylimit import BodyLimit
from huichat.app.serve.errors import install_error_handlers
from huichat.app.serve.service import Service

_ASSETS = "/v1/memory/viz/static"


def create_app(runtime: Runtime) -> FastAPI:
    """The HTTP face of huichat for ``runtime``'s configuration and data."""
    service = Service(runtime)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        refreshing = asyncio.create_task(service.refresh_keys(), name="refresh keys")
        service.keep(service.warm_llm(), "build the LLM client")
        yield
        refreshing.cancel()
        await service.close()

    app = FastAPI(
        title="huichat",
        version=__version__,
        summary="Chat with long-term memory (OpenAI-compatible) and the memory API",
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.service = service
    settings = runtime.loaded.config.serve
    install_error_handlers(
        app,
        deadline_seconds=runtime.loaded.config.retriever.search_timeout_seconds,
        retry_seconds=settings.memory_retry_seconds,
    )
    app.include_router(chat.router)
    app.include_router(memory_api.router)
    app.include_router(dashboard.router)

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title="huichat API",
            swagger_js_url=f"{_ASSETS}/swagger-ui-5.35.0-bundle.js",
            swagger_css_url=f"{_ASSETS}/swagger-ui-5.35.0.css",
            swagger_favicon_url="data:,",
        )

    @app.api_route("/healthz", methods=["GET", "HEAD"], include_in_schema=False)  # monitors often ask with HEAD
    async def health() -> dict[str, Any]:
        return {"status": "ok"}

    app.add_middleware(KeyCheckGate, service=service)  # inside CORS: a browser can read its 429
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type", "X-Huichat-Session"],
            expose_headers=["X-Huichat-Memory", "X-Huichat-Session", "Retry-After"],
        )
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes, routes=memory_api.body_limits(runtime))
    return app
