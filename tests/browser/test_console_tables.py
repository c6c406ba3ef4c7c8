"""The console's tables and times, in Chromium against the embedded stack
with demo data: a fully loaded table sorts by its headers (by mouse and by
keyboard, the sort in the URL and in aria-sort), a paged list asks the
gateway for the page size chosen and keeps its filters, and the zone chosen
in the header holds from page to page and after a reload. Every view passes
axe-core in both colour schemes and fits 390 px."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import AsyncIterator
from datetime import datetime
from zoneinfo import ZoneInfo

import httpx
import pytest
from playwright.async_api import Browser, Page, expect

from tests.browser.conftest import OPERATOR_ZONE, Platform, pretty, screenshot, serious_violations
from tests.browser.test_console_operator import GO, OVERFLOWING, a_decision
from tests.harness import bearer

PHONE = {"width": 390, "height": 844}


@pytest.fixture
async def phone(browser: Browser) -> AsyncIterator[Page]:
    context = await browser.new_context(viewport=PHONE, timezone_id=OPERATOR_ZONE, locale="en-GB")
    opened = await context.new_page()
    opened.set_default_timeout(15_000)
    try:
        yield opened
    finally:
        await context.close()


def count(text: str) -> int:
    return int(text.replace(",", "").strip())


async def column(page: Page, table, index: int) -> list[int]:
    return [count(text) for text in await table.locator(f"tbody tr td:nth-child({index}) a").all_inner_texts()]


async def test_insights_agents_sort_by_failures_both_ways(demo: Platform, page: Page, axe_source):
    await page.goto(demo.link(path="/console/insights"))
    table = page.locator("section[aria-labelledby='agents-runs'] table")
    await expect(table.locator("tbody tr").first).to_be_visible()
    served = await column(page, table, 4)
    assert len(set(served)) >= 2, f"the demo's agents must differ in failures for the order to show: {served}"

    failures = table.get_by_role("columnheader", name=re.compile(r"^Failures"))
    runs = table.get_by_role("columnheader", name=re.compile(r"^Runs"))
    await failures.get_by_role("button").click()
    await expect(failures).to_have_attribute("aria-sort", "descending")
    await expect(page).to_have_url(re.compile(r"sort=failures&order=desc"))
    assert await runs.get_attribute("aria-sort") is None
    largest_first = await column(page, table, 4)
    assert largest_first == sorted(served, reverse=True), largest_first

    # The same header by keyboard turns the order around.
    await failures.get_by_role("button").focus()
    await page.keyboard.press("Enter")
    await expect(failures).to_have_attribute("aria-sort", "ascending")
    smallest_first = await column(page, table, 4)
    assert smallest_first == sorted(served), smallest_first

    # The footer adds up every agent whatever the order, and the sort survives a reload.
    footer = table.locator("tfoot tr")
    await expect(footer.locator("td").nth(1)).to_have_text(f"{sum(await column(page, table, 3)):,}")
    await page.reload()
    await expect(failures).to_have_attribute("aria-sort", "ascending")
    assert await column(page, table, 4) == sorted(served)
    await expect(page.get_by_role("radio", name="24 h")).to_be_checked()
    await page.get_by_role("radio", name="7 d").check()
    await expect(page).to_have_url(re.compile(r"days=7"))
    await expect(failures).to_have_attribute("aria-sort", "ascending")
    await screenshot(page, "tables-insights-sorted")
    found = await serious_violations(page, axe_source)
    assert found == [], pretty(found)


async def test_a_page_size_of_100_on_decisions_is_asked_for_and_keeps_the_filters(demo: Platform, page: Page):
    async with httpx.AsyncClient(base_url=demo.base) as client:
        reply = await client.get("/admin/ai/decisions", params={"limit": 200}, headers=bearer(role=4))
        assert reply.status_code == 200, reply.text
        decision_type, _ = Counter(d["decision_type"] for d in reply.json()["items"]).most_common(1)[0]
        reply = await client.get(
            "/admin/ai/decisions", params={"limit": 200, "decision_type": decision_type}, headers=bearer(role=4)
        )
    of_type = len(reply.json()["items"])
    assert of_type > 25, f"a page of 25 must not hold every {decision_type} decision: {of_type}"

    await page.goto(demo.link(path=f"/console/decisions?decision_type={decision_type}"))
    rows = page.locator("table tbody tr")
    await expect(rows).to_have_count(25)
    async with page.expect_request(lambda r: "/admin/ai/decisions?" in r.url and "limit=100" in r.url) as asked:
        await page.get_by_label("Rows per page").select_option("100")
    assert f"decision_type={decision_type}" in (await asked.value).url
    await expect(page).to_have_url(re.compile(r"[?&]limit=100"))
    await expect(page).to_have_url(re.compile(rf"[?&]decision_type={decision_type}"))
    await expect(rows).to_have_count(min(100, of_type))
    await expect(page.get_by_label("Type", exact=True)).to_have_value(decision_type)
    await expect(page.locator(".pager")).to_contain_text("of at most 100")
    types = await page.locator("table tbody tr td:nth-child(2)").all_inner_texts()
    assert set(types) == {decision_type}, set(types)

    # A filter applied afterwards keeps the page size.
    await page.get_by_label("Outcome", exact=True).select_option("success")
    await page.get_by_role("button", name="Apply filters").click()
    await expect(page).to_have_url(re.compile(r"outcome=success"))
    await expect(page).to_have_url(re.compile(r"limit=100"))
    await expect(page.get_by_label("Rows per page")).to_have_value("100")


async def test_utc_chosen_in_the_header_holds_across_pages_and_a_reload(demo: Platform, page: Page):
    decision = await a_decision(demo)
    instant = datetime.fromisoformat(decision["decided_at"])
    wall = {zone: instant.astimezone(ZoneInfo(zone)).strftime("%H:%M:%S") for zone in (OPERATOR_ZONE, "UTC")}
    assert wall[OPERATOR_ZONE] != wall["UTC"]
    shown = page.locator(f"main time[datetime='{decision['decided_at']}']").first

    await page.goto(demo.link(path=f"/console/decisions/{decision['id']}"))
    await expect(shown).to_contain_text(f"{wall[OPERATOR_ZONE]} GMT+5:30")
    await expect(shown).to_have_attribute("title", re.compile(rf"{wall['UTC']} UTC$"))

    await page.get_by_label("Times in").select_option("utc")
    await expect(shown).to_contain_text(f"{wall['UTC']} UTC")
    await expect(shown).to_have_attribute("title", re.compile(rf"{wall[OPERATOR_ZONE]} GMT\+5:30$"))

    # Another page, then a reload: still UTC, on a 24-hour clock.
    await page.evaluate(GO, "/console/decisions")
    await expect(shown).to_contain_text(f"{wall['UTC']} UTC")
    await page.reload()
    await expect(shown).to_contain_text(f"{wall['UTC']} UTC")
    await expect(page.get_by_label("Times in")).to_have_value("utc")
    times = await page.locator("main time").all_inner_texts()
    assert times and all(re.search(r", ([01]\d|2[0-3]):[0-5]\d:[0-5]\d UTC$", t) for t in times), times
    await screenshot(page, "tables-decisions-utc")

    await page.get_by_label("Times in").select_option("local")
    await expect(shown).to_contain_text(f"{wall[OPERATOR_ZONE]} GMT+5:30")


LOOKED_AT = [
    "/console/insights?sort=failures&order=desc",
    "/console/routing?decision_type=stall_response&sort=pick&order=desc",
    "/console/decisions?limit=100",
    "/console/runs?limit=50",
    "/console/rollouts",
    "/console/audit?limit=25",
]


async def test_sorted_and_resized_tables_pass_axe_in_both_schemes_and_fit_390_px(
    demo: Platform, browser: Browser, phone: Page, axe_source
):
    await phone.goto(demo.link(path="/console/agents"))
    await expect(phone.get_by_role("navigation", name="Console sections")).to_be_visible()
    too_wide, found = {}, {}
    for path in LOOKED_AT:
        await phone.evaluate(GO, path)
        await expect(phone.locator("main")).not_to_contain_text("Loading")
        await expect(phone.locator("main table").first).to_be_visible()
        width = await phone.evaluate("document.documentElement.scrollWidth")
        if width > PHONE["width"]:
            too_wide[path] = (width, await phone.evaluate(OVERFLOWING))
        await screenshot(phone, "tables-phone" + path.replace("/console", "").replace("/", "-").split("?")[0])
        violations = await serious_violations(phone, axe_source)
        if violations:
            found[f"light {path}"] = violations
    assert too_wide == {}, too_wide

    context = await browser.new_context(
        viewport={"width": 1360, "height": 900}, timezone_id=OPERATOR_ZONE, locale="en-GB", color_scheme="dark"
    )
    dark = await context.new_page()
    dark.set_default_timeout(15_000)
    try:
        await dark.goto(demo.link(path="/console/agents"))
        await expect(dark.get_by_role("navigation", name="Console sections")).to_be_visible()
        await dark.get_by_label("Times in").select_option("utc")
        for path in LOOKED_AT:
            await dark.evaluate(GO, path)
            await expect(dark.locator("main")).not_to_contain_text("Loading")
            await expect(dark.locator("main table").first).to_be_visible()
            await screenshot(dark, "tables-dark" + path.replace("/console", "").replace("/", "-").split("?")[0])
            violations = await serious_violations(dark, axe_source)
            if violations:
                found[f"dark {path}"] = violations
    finally:
        await context.close()
    assert found == {}, pretty([found])
