"""Judged success over time on Insights, in Chromium against the embedded
stack with demo data: the chart shows the demo's judged decisions per
bucket with the values the gateway counts, a bucket's hover text says its
rate and its unjudged decisions apart, a bucket opens the Decisions page
filtered to its type and time, the type picked stays in the URL, and the
page passes axe in light and dark and fits 390 px."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from urllib.parse import parse_qs, urlparse
from zoneinfo import ZoneInfo

import httpx
import pytest
from playwright.async_api import Browser, Page, expect

from tests.browser.conftest import OPERATOR_ZONE, Platform, pretty, screenshot, serious_violations
from tests.harness import bearer

PHONE = {"width": 390, "height": 844}
DECISION_TYPE = "stall_response"


async def outcome_series(demo: Platform, decision_type: str) -> dict:
    async with httpx.AsyncClient(base_url=demo.base) as client:
        reply = await client.get(
            "/admin/ai/insights/outcomes", params={"days": 1, "decision_type": decision_type}, headers=bearer(role=4)
        )
    assert reply.status_code == 200, reply.text
    body: dict = reply.json()
    return body


@pytest.fixture
async def dark(browser: Browser) -> AsyncIterator[Page]:
    context = await browser.new_context(
        viewport={"width": 1360, "height": 900}, timezone_id=OPERATOR_ZONE, locale="en-GB", color_scheme="dark"
    )
    opened = await context.new_page()
    opened.set_default_timeout(15_000)
    try:
        yield opened
    finally:
        await context.close()


@pytest.fixture
async def phone(browser: Browser) -> AsyncIterator[Page]:
    context = await browser.new_context(viewport=PHONE, timezone_id=OPERATOR_ZONE, locale="en-GB")
    opened = await context.new_page()
    opened.set_default_timeout(15_000)
    try:
        yield opened
    finally:
        await context.close()


async def test_the_chart_shows_judged_success_per_bucket_and_opens_them(demo: Platform, page: Page, axe_source):
    series = await outcome_series(demo, DECISION_TYPE)
    (stall,) = series["types"]
    buckets = stall["buckets"]
    judged_at = [i for i, b in enumerate(buckets) if b["successes"] + b["failures"] > 0]
    assert judged_at, "the demo judged no stall_response decision in the last day"
    index = max(judged_at, key=lambda i: buckets[i]["successes"] + buckets[i]["failures"])
    chosen = buckets[index]
    rate = round(100 * chosen["successes"] / (chosen["successes"] + chosen["failures"]))

    await page.goto(demo.link(path=f"/console/insights?days=1&judged_type={DECISION_TYPE}"))
    figure = page.locator("figure.chart-judged")
    await expect(figure).to_be_visible()
    totals_judged = sum(b["successes"] + b["failures"] for b in buckets)
    await expect(figure.locator("figcaption")).to_contain_text(f"{totals_judged:,} judged")
    assert await figure.locator("path.judged-rate").get_attribute("d"), "no rate line drawn"
    links = figure.locator("a.bucket-link")
    await expect(links).to_have_count(len(buckets))
    await expect(figure.locator("text.tick", has_text="100 %")).to_have_count(1)

    bucket = links.nth(index)
    await bucket.hover()
    hover = await bucket.locator("title").text_content() or ""
    assert (
        f"{rate} % judged success ({chosen['successes']:,} of {chosen['successes'] + chosen['failures']:,}" in hover
    ), hover
    assert f"{chosen['unknown']:,} unknown, {chosen['pending']:,} pending" in hover, hover
    # Times read in the operator's zone.
    assert "IST" in hover or "GMT+5:30" in hover, hover
    await screenshot(page, "insights-judged-success")
    found = await serious_violations(page, axe_source)
    assert found == [], pretty(found)

    await bucket.focus()
    await page.keyboard.press("Enter")
    await page.wait_for_url("**/console/decisions?**")
    query = parse_qs(urlparse(page.url).query)
    assert query["decision_type"] == [DECISION_TYPE]
    start = datetime.fromisoformat(chosen["start"])
    opened_from = datetime.fromisoformat(query["from"][0])
    opened_to = datetime.fromisoformat(query["to"][0])
    # The link carries the bucket's own instants, a bucket's width apart; the
    # form shows them on the operator's clock.
    assert opened_from == start and (opened_to - opened_from).total_seconds() == series["bucket_seconds"]
    wall = start.astimezone(ZoneInfo(OPERATOR_ZONE)).strftime("%Y-%m-%d %H:%M")
    await expect(page.locator("#f-from")).to_have_value(wall)
    await expect(page.get_by_role("row").nth(1)).to_contain_text(DECISION_TYPE)


async def test_the_type_picked_stays_in_the_url(demo: Platform, page: Page):
    await page.goto(demo.link(path="/console/insights?days=1"))
    picker = page.get_by_label("Decision type")
    await expect(picker).to_be_visible()
    await picker.select_option("assignment_failure")
    await page.wait_for_url("**judged_type=assignment_failure**")
    assert "days=1" in page.url
    await expect(page.locator("figure.chart-judged figcaption")).to_contain_text("assignment_failure")
    await page.reload()
    await expect(page.get_by_label("Decision type")).to_have_value("assignment_failure")
    # Another window is another look at the same type, not a reset of it.
    await page.get_by_role("radio", name="7 d").check()
    await page.wait_for_url("**days=7**")
    assert "judged_type=assignment_failure" in page.url
    await expect(page.get_by_label("Decision type")).to_have_value("assignment_failure")
    await expect(page.locator("figure.chart-judged figcaption")).to_contain_text("assignment_failure")


async def test_the_chart_passes_axe_in_dark_mode(demo: Platform, dark: Page, axe_source):
    await dark.goto(demo.link(path=f"/console/insights?days=1&judged_type={DECISION_TYPE}"))
    await expect(dark.locator("figure.chart-judged")).to_be_visible()
    await screenshot(dark, "dark-insights-judged-success")
    found = await serious_violations(dark, axe_source)
    assert found == [], pretty(found)


async def test_the_chart_fits_a_390_px_screen(demo: Platform, phone: Page, axe_source):
    await phone.goto(demo.link(path=f"/console/insights?days=1&judged_type={DECISION_TYPE}"))
    figure = phone.locator("figure.chart-judged")
    await expect(figure).to_be_visible()
    await figure.scroll_into_view_if_needed()
    box = await figure.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
    width = await phone.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], width
    await screenshot(phone, "phone-insights-judged-success", full_page=False)
    found = await serious_violations(phone, axe_source)
    assert found == [], pretty(found)
