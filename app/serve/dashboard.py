"""The memory dashboard at ``/v1/memory/viz``: one page and its assets, all from this package.

The page and the assets hold no memory (they are public, like the API docs); the page
reads everything through the authenticated API, with the key the user types into it.
Assets are cached a day: the vendored ones carry their version in their name, and the page
(never cached) names its own with a digest of their content, so a new huichat's page never
runs with the script or styles a browser kept from an older one.
"""

from __future__ import annotations

import functools
import hashlib
from importlib import resources
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, Response

from huichat.app.serve.errors import ApiError

STATIC = Path(str(resources.files(__package__) / "static"))
_TYPES = {".js": "text/javascript", ".css": "text/css", ".md": "text/markdown", ".txt": "text/plain"}
_POLICY = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'"
_CACHE = "public, max-age=86400"
_OWN_ASSETS = ("dashboard.js", "dashboard.css")

router = APIRouter(prefix="/v1/memory/viz", tags=["dashboard"])


@router.get("", include_in_schema=False)
async def dashboard() -> Response:
    """The dashboard page (its scripts may only come from this server)."""
    return Response(
        _page(),
        media_type="text/html; charset=utf-8",
        headers={"Content-Security-Policy": _POLICY, "X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache"},
    )


@functools.cache
def _page() -> str:
    """The page, its own assets named with a digest of their content (``dashboard.js?v=…``)."""
    page = (STATIC / "dashboard.html").read_text(encoding="utf-8")
    for name in _OWN_ASSETS:
        digest = hashlib.sha256((STATIC / name).read_bytes()).hexdigest()[:12]
        page = page.replace(f'/static/{name}"', f'/static/{name}?v={digest}"')
    return page


@router.get("/static/{name}", include_in_schema=False)
async def asset(name: str) -> Response:
    """One vendored or own asset, by its plain file name."""
    path = STATIC / name
    if "/" in name or name.startswith(".") or path.suffix not in _TYPES or not path.is_file():
        raise ApiError(404, f"no asset '{name[:60]}'")
    return FileResponse(
        path,
        media_type=_TYPES[path.suffix],
        headers={"Cache-Control": _CACHE, "X-Content-Type-Options": "nosniff"},
    )
