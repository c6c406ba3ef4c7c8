"""From the evidence to the pin, in Chromium against the embedded stack with
demo data: beside each model on Routing, "pin…" opens the studio of the
agent whose skill it routes with that model chosen, and nothing changes
until the operator reviews and applies it there. Read-only staff see no such
link. Every view passes axe-core."""

from __future__ import annotations

import re

import httpx
from playwright.async_api import Page, expect

from tests.browser.conftest import Platform, pretty, screenshot, serious_violations
from tests.browser.test_console_operator import stored_pin
from tests.harness import bearer

OWNER = "EXCEPTION_AGENT"


async def test_pin_beside_a_model_opens_its_studio_with_the_change_to_review(demo: Platform, page: Page, axe_source):
    before = await stored_pin(demo, OWNER)
    try:
        await page.goto(demo.link(path="/console/routing?decision_type=stall_response"))
        arms = page.locator("table").first
        pins = arms.get_by_role("link", name=re.compile(rf"^Pin \S+ for {OWNER}: review it in the studio$"))
        await expect(pins.first).to_be_visible()
        model = (await arms.locator("tbody th").first.inner_text()).split()[0]
        found = await serious_violations(page, axe_source)
        assert found == [], pretty(found)

        await arms.get_by_role("link", name=f"Pin {model} for {OWNER}: review it in the studio").click()
        await expect(page).to_have_url(re.compile(rf"/console/agents/{OWNER}\?pin="))
        picker = page.get_by_label("Model", exact=True)
        await expect(picker).to_have_value(model)
        assert await stored_pin(demo, OWNER) == before, "a link never changes a pin by itself"

        await page.get_by_role("button", name="Review change").click()
        dialog = page.get_by_role("dialog")
        await expect(dialog.locator(".model-change")).to_have_text(re.compile(rf"to {re.escape(model)}$"))
        await screenshot(page, "routing-pin-review", full_page=False)
        await dialog.get_by_role("button", name="Apply").click()
        await expect(dialog).to_be_hidden()
        assert await stored_pin(demo, OWNER) == model
        await expect(page).to_have_url(re.compile(rf"/console/agents/{OWNER}$"))
    finally:
        async with httpx.AsyncClient(base_url=demo.base) as client:
            restored = await client.patch(f"/admin/ai/agents/{OWNER}", json={"model": before}, headers=bearer(role=1))
        assert restored.status_code == 200, restored.text


async def test_a_model_asked_for_outside_the_deployments_patterns_cannot_be_reviewed(demo: Platform, page: Page):
    await page.goto(demo.link(path=f"/console/agents/{OWNER}?pin=gpt-4.1"))
    await expect(page.get_by_label("Model", exact=True)).to_have_value("gpt-4.1")
    await expect(page.get_by_text("This deployment only allows models matching claude-*.")).to_be_visible()
    await expect(page.get_by_role("button", name="Review change")).to_be_disabled()


async def test_read_only_staff_see_the_evidence_and_no_pin(demo: Platform, page: Page):
    await page.goto(demo.link(role=3, path="/console/routing?decision_type=stall_response"))
    await expect(page.locator("table").first.locator("tbody tr").first).to_be_visible()
    await expect(page.get_by_role("link", name=re.compile(r"^Pin "))).to_have_count(0)
