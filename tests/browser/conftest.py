"""The console in a real Chromium against the real embedded stack.

One platform per module: every context, the gateway served over HTTP by
uvicorn (the console is static files plus REST, so nothing is faked), a
scripted model API for the playground, and the demo fleet's data loaded
through the engine client like `outrider demo` loads it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Page, async_playwright

from gateway.auth import issue_token
from launcher.demo.fleet import DemoTarget, run_fleet
from services.common.settings import CONTEXTS, Settings
from tests.console_tools import ROOT, chromium, node_modules
from tests.harness import (
    INTERNAL_KEY,
    JWT_SECRET,
    NATS_ENGINE,
    bound_socket,
    fresh_database,
    make_settings,
    reset_nats,
    running,
    serving_gateway,
    with_env,
)
from tests.integration.playground.scripted import Backend, ScriptedModel, serving

ARTIFACTS = ROOT / "artifacts" / "console"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# The operator sits in India; times must show in this zone with UTC on hover.
OPERATOR_ZONE = "Asia/Kolkata"


@dataclass
class Platform:
    base: str
    settings: Settings
    model: ScriptedModel

    def link(
        self,
        *,
        role: int = 1,
        tenant: int = 0,
        email: str = "ops@example.com",
        sub: str = "u-ops",
        ttl_s: int = 3600,
        path: str = "/console/",
    ) -> str:
        token = issue_token(JWT_SECRET, sub=sub, role=role, tenant_id=tenant, email=email, ttl_s=ttl_s)
        return f"{self.base}{path}#token={token}"


@asynccontextmanager
async def platform(template, *, demo: bool, model_key: bool = True) -> AsyncIterator[Platform]:
    model, backend = ScriptedModel(), Backend()
    async with AsyncExitStack() as stack:
        database = await stack.enter_async_context(fresh_database(template))
        await reset_nats(template.nats_url)
        model_url = await stack.enter_async_context(serving(model.app()))
        backend_url = await stack.enter_async_context(serving(backend.app()))
        sock = bound_socket()
        settings = with_env(
            make_settings(template, database),
            http_port=sock.getsockname()[1],
            anthropic_api_key="test-anthropic-key" if model_key else None,
            anthropic_base_url=model_url,
            tool_base_urls={"doormile_api": backend_url},
        )
        await stack.enter_async_context(running(settings, CONTEXTS))
        base = await stack.enter_async_context(serving_gateway(settings, sock))
        if demo:
            target = DemoTarget(
                gateway_url=base,
                decisions_addr=settings.addr("decisions"),
                registry_addr=settings.addr("registry"),
                nats_url=settings.nats_url,
                internal_key=INTERNAL_KEY,
                console_token=issue_token(JWT_SECRET, sub="demo", role=1),
                nats_user=NATS_ENGINE.name,
                nats_password=NATS_ENGINE.password,
            )
            # 30 rounds keep the module quick; at that size a few seeds leave
            # the two models' judged rates within noise of each other, and
            # the demo then refuses its routing claim. 8 is not one of them.
            report = await run_fleet(target, scale=30, seed=8, out=lambda _: None)
            assert report.ok, report.failures
        yield Platform(base, settings, model)


@pytest.fixture(scope="module")
async def demo(template) -> AsyncIterator[Platform]:
    async with platform(template, demo=True) as loaded:
        yield loaded


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    executable = chromium()
    async with async_playwright() as driver:
        launched = await driver.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            await launched.close()


@pytest.fixture
async def page(browser: Browser) -> AsyncIterator[Page]:
    context = await browser.new_context(
        viewport={"width": 1360, "height": 900}, timezone_id=OPERATOR_ZONE, locale="en-GB"
    )
    opened = await context.new_page()
    opened.set_default_timeout(15_000)
    try:
        yield opened
    finally:
        await context.close()


@pytest.fixture(scope="session")
def axe_source() -> str:
    return (node_modules() / "axe-core" / "axe.min.js").read_text()


async def serious_violations(page: Page, axe_source: str) -> list[dict[str, Any]]:
    """axe-core's serious and critical findings on the page as it stands."""
    # Evaluated by the driver, not added as a <script>: the console's content
    # security policy rightly refuses inline scripts.
    await page.evaluate(axe_source + "\n;0")
    result = await page.evaluate(
        "async () => { const r = await axe.run(document, {resultTypes: ['violations']});"
        " return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,"
        " nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))})); }"
    )
    return [v for v in result if v["impact"] in ("serious", "critical")]


async def screenshot(page: Page, name: str, *, full_page: bool = True) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    await page.screenshot(path=str(path), full_page=full_page)
    return path


def pretty(violations: list[dict[str, Any]]) -> str:
    return json.dumps(violations, indent=2)
