"""A range of the operator's own on Insights, in Chromium against the
embedded stack with demo data: typed on the operator's wall clock, kept in
the URL as instants, every figure read over it (the agents' counts equal
what the API answers for the same range), and a count opens the runs of
exactly that range. A range the gateway refuses says why in the page's
words. Every view passes axe-core and fits 390 px."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit
from zoneinfo import ZoneInfo

import httpx
from playwright.async_api import Page, expect

from tests.browser.conftest import OPERATOR_ZONE, Platform, pretty, screenshot, serious_violations
from tests.browser.test_console_runs import AGENT, NARROW, fits
from tests.harness import bearer


def wall_clock(instant: datetime) -> str:
    """An instant as the range fields take it, on the operator's clock."""
    return instant.astimezone(ZoneInfo(OPERATOR_ZONE)).strftime("%Y-%m-%d %H:%M")


def utc_text(instant: datetime) -> str:
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def a_busy_range(demo: Platform) -> tuple[datetime, datetime, dict]:
    """Three hours around one of the agent's demo runs, and what insights
    answer for them through the API."""
    async with httpx.AsyncClient(base_url=demo.base, headers=bearer(role=3)) as client:
        runs = (await client.get("/admin/ai/runs", params={"agent_id": AGENT, "limit": 100})).json()["items"]
        started = datetime.fromisoformat(runs[len(runs) // 2]["started_at"])
        start = started.replace(minute=0, second=0, microsecond=0) - timedelta(hours=1)
        end = start + timedelta(hours=3)
        reply = await client.get("/admin/ai/insights", params={"from": utc_text(start), "to": utc_text(end)})
    assert reply.status_code == 200, reply.text
    agent = next(a for a in reply.json()["agents"] if a["agent_id"] == AGENT)
    assert agent["runs"] > 0
    return start, end, agent


async def test_a_typed_range_reads_every_figure_over_it_and_its_counts_open_its_runs(
    demo: Platform, page: Page, axe_source
):
    start, end, expected = await a_busy_range(demo)
    await page.goto(demo.link(role=3, path="/console/insights?days=7"))
    await expect(page.get_by_role("heading", name="Agents, last 7 d")).to_be_visible()

    # "Range" opens on the span just read, so there is something to edit.
    await page.get_by_role("radio", name="Range").check()
    await expect(page).to_have_url(re.compile(r"from=\d{4}-.*&to=\d{4}-"))
    assert "days" not in parse_qs(urlsplit(page.url).query)
    await expect(page.locator("#range-from")).not_to_have_value("")
    await page.locator("#range-from").fill(wall_clock(start))
    await page.locator("#range-to").fill(wall_clock(end))
    await page.get_by_role("button", name="Apply filters").click()
    asked = parse_qs(urlsplit(page.url).query)
    assert (asked["from"], asked["to"]) == ([utc_text(start)], [utc_text(end)])
    await expect(page.get_by_role("heading", name=re.compile(r"^Agents, .+ to .+"))).to_be_visible()

    runs = page.get_by_role("link", name=f"{expected['runs']:,} runs of {AGENT}", exact=True)
    await expect(runs).to_be_visible()
    await expect(
        page.get_by_role("link", name=f"{expected['failures']:,} failed runs of {AGENT}", exact=True)
    ).to_be_visible()
    # The chart reads the same range, an hour a bucket.
    chart = page.get_by_role("img", name=re.compile(rf"{expected['runs']:,} runs, {expected['failures']:,} failed"))
    await expect(chart.first).to_be_visible()
    await screenshot(page, "insights-range")
    found = await serious_violations(page, axe_source)
    assert found == [], pretty(found)
    await page.set_viewport_size(NARROW)
    await fits(page)
    await page.set_viewport_size({"width": 1280, "height": 900})

    # A reload keeps the range; the runs count opens that range's runs.
    await page.reload()
    await expect(page.locator("#range-from")).to_have_value(wall_clock(start))
    await runs.click()
    await expect(page).to_have_url(re.compile(r"/console/runs\?"))
    listed = parse_qs(urlsplit(page.url).query)
    assert (listed["agent_id"], listed["from"], listed["to"]) == ([AGENT], [utc_text(start)], [utc_text(end)])
    rows = page.get_by_role("table", name=re.compile("Newest first")).locator("tbody tr")
    await expect(rows).to_have_count(min(expected["runs"], 25))

    # Back to Insights, a preset drops the range.
    await page.go_back()
    await page.get_by_role("radio", name="24 h").check()
    await expect(page.locator("#range-from")).to_have_count(0)
    assert "from" not in parse_qs(urlsplit(page.url).query)


async def test_a_range_the_gateway_refuses_says_why_in_the_pages_words(demo: Platform, page: Page, axe_source):
    await page.goto(demo.link(role=3, path="/console/insights"))
    await page.get_by_role("radio", name="Range").check()
    now = datetime.now(UTC)
    await page.locator("#range-from").fill(wall_clock(now - timedelta(days=2)))
    await page.locator("#range-to").fill(wall_clock(now - timedelta(days=3)))
    await page.get_by_role("button", name="Apply filters").click()
    await expect(page.get_by_text("“To” must be later than the range's start.")).to_be_visible()
    await expect(page.get_by_role("button", name="Try again")).to_have_count(0)
    found = await serious_violations(page, axe_source)
    assert found == [], pretty(found)
