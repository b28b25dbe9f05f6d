"""The dashboard in a real headless browser (Debian's chromium driven by Playwright): loads, draws, no errors."""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import urlparse

import httpx
import pytest

from tests.serve.conftest import Server

pytestmark = pytest.mark.slow
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
if not Path(CHROMIUM).exists():
    pytest.skip("no chromium browser on this machine (make test installs Debian's as root)", allow_module_level=True)

BROWSER_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def test_the_dashboard_draws_real_data_offline(server: Server, tmp_path: Path) -> None:
    key = server.key("default", admin=True)
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
        for text in ("dashboard one", "dashboard two"):
            chat = {"model": "fake", "messages": [{"role": "user", "content": text}]}
            assert http.post("/v1/chat/completions", json=chat).status_code == 200
        http.post("/v1/memory/search", json={"query": "dashboard one"})
        users = {u["name"] for u in http.get("/v1/memory/users").json()["users"]}
    problems: list[str] = []
    hosts: set[str] = set()
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.on("request", lambda r: hosts.add(urlparse(r.url).netloc))
            page.add_init_script(f"sessionStorage.setItem('huichat-key', {key!r})")
            page.goto(f"{server.url}/v1/memory/viz", wait_until="networkidle")
            page.wait_for_function("() => window.Chart && Chart.getChart('weeks-chart')", timeout=20_000)
            weekly = page.evaluate("() => Chart.getChart('weeks-chart').data.datasets[0].data")
            painted = page.evaluate(
                """() => {
                    const c = document.getElementById('weeks-chart');
                    const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                    let inked = 0;
                    for (let i = 3; i < px.length; i += 4) if (px[i] > 0) inked++;
                    return inked;
                }"""
            )
            picker = page.eval_on_selector_all("#user option", "os => os.map(o => o.value)")
            chosen = page.input_value("#user")
            totals = page.inner_text("#total-turns")
            top = page.inner_text("#top-list")
            state = page.inner_text("#state")
            placeholder_shown = page.is_visible(".card.wide .empty")
            page.screenshot(path=str(tmp_path / "dashboard.png"), full_page=True)
        finally:
            browser.close()
    assert sum(weekly) >= 2
    assert painted > 500  # the bars are on the canvas, not just in its data
    assert not placeholder_shown
    assert set(picker) == users and chosen == "default"
    assert int(totals) >= 2
    assert "dashboard one" in top
    assert state == "memory: ok"
    assert hosts == {urlparse(server.url).netloc}  # nothing from a CDN
    assert problems == []


def test_the_dashboard_without_a_key_says_where_to_type_it(server: Server) -> None:
    # its reader has no request to add a header to: the API's "send 'Authorization: Bearer <key>'" is no help
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        try:
            page = browser.new_page()
            page.goto(f"{server.url}/v1/memory/viz", wait_until="networkidle")
            page.wait_for_function("() => document.getElementById('message').textContent !== ''", timeout=20_000)
            message = page.inner_text("#message")
        finally:
            browser.close()
    assert message == "Type an API key (hc_…) into the API key field above to see a memory."
