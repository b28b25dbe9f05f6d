"""The dashboard's page and assets as a browser's cache sees them: a new huichat's page never runs with an older script."""

from __future__ import annotations

import hashlib
import re

import httpx

from huichat.app.serve.dashboard import STATIC
from tests.serve.conftest import Server


def test_the_page_is_never_cached_and_names_its_own_assets_by_their_content(server: Server) -> None:
    page = httpx.get(f"{server.url}/v1/memory/viz", timeout=60)
    assert page.status_code == 200 and page.headers["Cache-Control"] == "no-cache"
    for name in ("dashboard.js", "dashboard.css"):
        digest = hashlib.sha256((STATIC / name).read_bytes()).hexdigest()[:12]
        # a browser keeps an asset a day by its URL: a changed file gets a new one
        assert f"/v1/memory/viz/static/{name}?v={digest}" in page.text
        asset = httpx.get(f"{server.url}/v1/memory/viz/static/{name}", params={"v": digest}, timeout=60)
        assert asset.status_code == 200 and asset.content == (STATIC / name).read_bytes()
    # vendored assets carry their version in their name already
    assert re.search(r"/static/chart-[0-9.]+\.umd\.min\.js\"", page.text)
