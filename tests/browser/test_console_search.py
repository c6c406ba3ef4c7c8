"""Finding decisions as an operator does, in Chromium against the embedded
stack with demo data: part of a model's name finds every model holding it,
the model field offers the models decisions name, and a time typed in the
filters is read on the clock of the zone chosen in the header and kept in
the link as an instant, so a colleague in another zone opens the same span."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import httpx
from playwright.async_api import Browser, Page, expect

from tests.browser.conftest import Platform, pretty, screenshot, serious_violations
from tests.harness import bearer


def url_query(page: Page) -> dict[str, list[str]]:
    return parse_qs(urlparse(page.url).query)


async def test_part_of_a_model_name_finds_every_decision_of_the_models_holding_it(
    demo: Platform, page: Page, axe_source
):
    async with httpx.AsyncClient(base_url=demo.base) as client:
        facets = (await client.get("/admin/ai/decisions/facets", headers=bearer(role=4))).json()
        wanted = await client.get(
            "/admin/ai/decisions", params={"model_contains": "HAIKU", "limit": 25}, headers=bearer(role=4)
        )
    haiku = [d["id"] for d in wanted.json()["items"]]
    assert haiku and any("haiku" in m for m in facets["models"]), facets

    await page.goto(demo.link(path="/console/decisions"))
    field = page.get_by_label("Model")
    # The field offers the models the last 30 days' decisions name.
    await expect(page.locator("#f-model-suggestions option")).to_have_count(len(facets["models"]))
    await field.fill("HAIKU")
    await page.get_by_role("button", name="Apply filters").click()
    await expect(page).to_have_url(re.compile(r"model=HAIKU"))
    rows = page.locator("tbody tr")
    await expect(rows).to_have_count(len(haiku))
    models = await rows.locator("td:nth-child(7)").all_inner_texts()
    assert all("haiku" in m.lower() for m in models), models
    found = [
        re.sub(r".*/decisions/", "", h or "")
        for h in await rows.locator("td:first-child a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    ]
    assert found == haiku
    await screenshot(page, "decisions-model-search")
    found_violations = await serious_violations(page, axe_source)
    assert found_violations == [], pretty(found_violations)


async def test_a_typed_time_is_read_in_the_chosen_zone_and_the_link_keeps_the_instant(
    demo: Platform, page: Page, browser: Browser
):
    await page.goto(demo.link(path="/console/decisions"))
    start = page.get_by_label("Decided from")
    # The operator's own zone first (Asia/Kolkata, 5 h 30 ahead of UTC).
    # Chromium names the zone by its older alias.
    await expect(page.locator("label[for='f-from']")).to_contain_text(re.compile(r"\(Asia/(Kolkata|Calcutta)\)"))
    await start.fill("2026-03-02 10:00")
    await page.get_by_role("button", name="Apply filters").click()
    await expect(page).to_have_url(re.compile(r"from=2026-03-02T04%3A30%3A00Z"))

    # In UTC the same bound reads 04:30; the link does not change.
    await page.get_by_label("Times in").select_option("utc")
    await expect(page.locator("label[for='f-from']")).to_contain_text("(UTC)")
    await expect(start).to_have_value("2026-03-02 04:30")
    assert url_query(page)["from"] == ["2026-03-02T04:30:00Z"]
    await start.fill("2026-03-02 10:00")
    await page.get_by_role("button", name="Apply filters").click()
    await expect(page).to_have_url(re.compile(r"from=2026-03-02T10%3A00%3A00Z"))
    shared = page.url

    # A colleague in New York opening the link sees the same instant on their clock.
    context = await browser.new_context(timezone_id="America/New_York", locale="en-US")
    try:
        colleague = await context.new_page()
        await colleague.goto(demo.link(path="/console" + shared.split("#")[0].split("/console", 1)[1]))
        # On a 24-hour clock, as the tables read, though the browser speaks en-US.
        await expect(colleague.get_by_label("Decided from")).to_have_value("2026-03-02 05:00")
        await expect(colleague.locator("label[for='f-from']")).to_contain_text("(America/New_York)")
        # A time typed the 12-hour way is not guessed at: the field says so and the filters stay.
        await colleague.get_by_label("Decided from").fill("2026-03-02 5:00 PM")
        await expect(
            colleague.get_by_text("Not a time: type it as 2026-03-02 14:30, on a 24-hour clock.")
        ).to_be_visible()
        await expect(colleague.get_by_label("Decided from")).to_have_attribute("aria-invalid", "true")
        before = colleague.url
        await colleague.get_by_role("button", name="Apply filters").click()
        assert colleague.url == before
        await colleague.get_by_label("Decided from").fill("2026-03-02 17:00")
        await expect(colleague.get_by_label("Decided from")).not_to_have_attribute("aria-invalid", "true")
        await colleague.get_by_role("button", name="Apply filters").click()
        await expect(colleague).to_have_url(re.compile(r"from=2026-03-02T22%3A00%3A00Z"))
    finally:
        await context.close()
