"""The console against a platform that has received nothing and has no model key."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from playwright.async_api import Page, expect

from tests.browser.conftest import (
    Platform,
    platform,
    pretty,
    screenshot,
    serious_violations,
)


@pytest.fixture(scope="module")
async def quiet(template) -> AsyncIterator[Platform]:
    async with platform(template, demo=False, model_key=False) as empty:
        yield empty


async def test_insights_say_telemetry_is_not_arriving_instead_of_zeros(quiet: Platform, page: Page, axe_source):
    await page.goto(quiet.link(path="/console/insights"))
    banner = page.get_by_role("alert").filter(has_text="Telemetry is not arriving")
    await expect(banner).to_be_visible()
    await expect(banner).to_contain_text("none has ever arrived")
    await expect(page.get_by_text("No agent ran in this window.")).to_be_visible()
    await screenshot(page, "insights-not-receiving")
    found = await serious_violations(page, axe_source)
    assert found == [], pretty(found)


async def test_empty_pages_say_so(quiet: Platform, page: Page):
    await page.goto(quiet.link(path="/console/decisions"))
    await expect(page.get_by_text("No agent has recorded a decision yet.")).to_be_visible()
    await page.goto(quiet.link(path="/console/playground"))
    await expect(page.get_by_text("No prompt has been run yet.")).to_be_visible()


async def test_the_playground_says_it_is_not_configured_before_a_prompt_is_typed(quiet: Platform, page: Page):
    await page.goto(quiet.link(path="/console/playground?agent=CUSTOMER_AGENT"))
    notice = page.get_by_role("status").filter(has_text="Runs are switched off here")
    await expect(notice).to_contain_text("set ANTHROPIC_API_KEY")
    await expect(page.get_by_label("Prompt", exact=True)).to_have_count(0)
    await expect(page.get_by_text("No prompt has been run yet.")).to_be_visible()
