"""The Insights charts as an operator reads them: runs, latency, tokens and
estimated cost over time, each value readable by pointer and by keyboard,
in both colour schemes and on a 390 px screen."""

from __future__ import annotations

import re
from dataclasses import dataclass

import httpx
import pytest
from playwright.async_api import Browser, Page, expect

from tests.browser.conftest import OPERATOR_ZONE, Platform, pretty, screenshot, serious_violations
from tests.harness import INTERNAL_KEY, bearer, eventually
from tests.integration.telemetry.otlp_support import export, span

PHONE = {"width": 390, "height": 844}
CHART_TITLES = (
    "Runs and failures, all agents",
    "Run latency p95, busiest agents",
    "Tokens per model",
    "Estimated cost per model",
)


# Priced by the default table's claude-sonnet-4-5* glob, and called by no one
# else: the demo's own calls share the bucket the engine's land in.
PRICED = "claude-sonnet-4-5-charts"


async def reported_calls(demo: Platform) -> tuple[int, int]:
    """One engine's run with a priced call, a call without usage and an unpriced call."""
    request = export(
        span(1, "sweep_bookings", ms=800),
        span(
            2,
            "chat",
            parent=1,
            ms=300,
            gen_ai__operation__name="chat",
            gen_ai__request__model=PRICED,
            gen_ai__usage__input_tokens=1000,
            gen_ai__usage__output_tokens=200,
        ),
        span(3, "chat", parent=1, ms=200, gen_ai__operation__name="chat", gen_ai__request__model=PRICED),
        span(
            4,
            "chat",
            parent=1,
            ms=100,
            gen_ai__operation__name="chat",
            gen_ai__request__model="house-model",
            gen_ai__usage__input_tokens=40,
            gen_ai__usage__output_tokens=4,
        ),
        service="CHARTS_ENGINE",
    )
    async with httpx.AsyncClient(base_url=demo.base) as client:
        posted = await client.post(
            "/v1/traces",
            content=request.SerializeToString(),
            headers={"Content-Type": "application/x-protobuf", "X-Internal-Key": INTERNAL_KEY},
        )
        assert posted.status_code == 200, posted.text

        async def series() -> dict:
            reply = await client.get("/admin/ai/insights/series?days=1", headers=bearer(role=3))
            assert reply.status_code == 200, reply.text
            body: dict = reply.json()
            return body

        body = await eventually(
            series,
            lambda body: any(s["name"] == "CHARTS_ENGINE" for s in body["usage_by_agent"]),
            what="the engine's model calls in the series",
        )
    [engine] = [s["points"] for s in body["usage_by_agent"] if s["name"] == "CHARTS_ENGINE"]
    [held] = [i for i, p in enumerate(engine) if p["calls"]]
    return held, len(engine)


@dataclass
class Charted:
    platform: Platform
    # The bucket holding the engine's calls, and how many buckets there are.
    bucket: int
    buckets: int


@pytest.fixture(scope="module")
async def charted(demo: Platform) -> Charted:
    bucket, buckets = await reported_calls(demo)
    return Charted(demo, bucket, buckets)


async def to_the_calls(page: Page, charted: Charted, title: str) -> None:
    """Focus a chart and step with the keyboard to the bucket holding the calls."""
    await plot(page, title).focus()
    await page.keyboard.press("End")
    for _ in range(charted.buckets - 1 - charted.bucket):
        await page.keyboard.press("ArrowLeft")


async def open_insights(page: Page, charted: Charted) -> None:
    await page.goto(charted.platform.link(path="/console/insights"))
    await expect(page.get_by_role("heading", name="Runs, latency, tokens and cost over time")).to_be_visible()
    for title in CHART_TITLES:
        await expect(page.locator("figcaption", has_text=title)).to_be_visible()


def plot(page: Page, title: str):
    return page.get_by_role("group", name=re.compile(f"^{re.escape(title)}:"))


def readout(page: Page, title: str):
    return page.locator("figure", has=page.locator("figcaption", has_text=title)).locator(".chart-readout")


async def test_every_chart_is_full_width_with_ticks_a_legend_and_a_text_alternative(charted: Charted, page: Page):
    await open_insights(page, charted)
    section = page.locator("section", has=page.get_by_role("heading", name="Runs, latency, tokens and cost over time"))
    section_width = (await section.bounding_box() or {}).get("width", 0)
    for title in CHART_TITLES:
        figure = page.locator("figure", has=page.locator("figcaption", has_text=title))
        box = await figure.bounding_box()
        assert box is not None and box["width"] >= section_width * 0.95, (title, box, section_width)
        image = figure.get_by_role("img")
        await expect(image).to_have_attribute("aria-label", re.compile(r"\w+ .* per bucket"))
        # A y axis of at least two ticks and time ticks along the foot.
        assert await figure.locator("svg text.tick").count() >= 4, title
        await expect(figure.locator(".chart-legend li").first).to_be_visible()
    cost = page.locator("figure", has=page.locator("figcaption", has_text="Estimated cost per model"))
    await expect(cost.locator(".chart-legend")).to_contain_text(PRICED)
    await expect(cost.locator(".chart-legend")).to_contain_text("house-model")
    notes = section.locator("p.hint")
    await expect(notes).to_contain_text(["Tokens count only the calls that reported usage"])
    await expect(notes.filter(has_text="Estimated from")).to_contain_text("built-in list-price estimates")
    await expect(notes.filter(has_text="Estimated from")).to_contain_text("No price for house-model")
    # Time ticks read in the operator's zone: buckets start on whole UTC
    # hours, which are half past in India.
    ticks = (
        await page.locator("figure", has=page.locator("figcaption", has_text=CHART_TITLES[0]))
        .locator("svg text.tick")
        .all_text_contents()
    )
    times = [tick for tick in ticks if re.fullmatch(r"\d\d:\d\d", tick)]
    assert times and all(tick.endswith(":30") for tick in times), ticks
    await screenshot(page, "charts-insights")


async def test_values_read_out_by_keyboard_and_by_pointer(charted: Charted, page: Page):
    await open_insights(page, charted)
    await page.get_by_role("radio", name="Tokens and cost by agent").check()
    await to_the_calls(page, charted, "Estimated cost per agent")
    # One priced call of 1000 in and 200 out, and one unpriced.
    await expect(readout(page, "Estimated cost per agent")).to_contain_text("CHARTS_ENGINE no price")
    await page.get_by_role("radio", name="Tokens and cost by model").check()
    await to_the_calls(page, charted, "Estimated cost per model")
    await expect(readout(page, "Estimated cost per model")).to_contain_text(f"{PRICED} $0.006")
    await expect(readout(page, "Estimated cost per model")).to_contain_text("house-model no price")
    await page.keyboard.press("ArrowLeft")
    await expect(readout(page, "Estimated cost per model")).not_to_contain_text(f"{PRICED} $0.006")
    await page.keyboard.press("ArrowRight")
    await expect(readout(page, "Estimated cost per model")).to_contain_text(f"{PRICED} $0.006")

    tokens = page.locator("figure", has=page.locator("figcaption", has_text="Tokens per model"))
    box = await tokens.locator("svg").bounding_box()
    assert box is not None
    # The plot starts 64 px in and ends 12 px short of the right edge (TimeChart).
    slot = (box["width"] - 76) / charted.buckets
    await page.mouse.move(box["x"] + 64 + (charted.bucket + 0.5) * slot, box["y"] + box["height"] / 2)
    await expect(readout(page, "Tokens per model")).to_contain_text(f"{PRICED} 1.2K")
    # A bar's own title holds its values for the pointer's native tooltip.
    titles = await tokens.locator("svg g > title").all_text_contents()
    assert any(f"{PRICED} 1.2K" in title for title in titles), titles[-3:]

    await page.get_by_label("Runs and latency of").select_option("CHARTS_ENGINE")
    await to_the_calls(page, charted, "Run latency, CHARTS_ENGINE")
    await expect(readout(page, "Run latency, CHARTS_ENGINE")).to_contain_text("p50 800 ms, p95 800 ms")
    await screenshot(page, "charts-keyboard", full_page=False)


async def test_the_charts_pass_axe_in_both_schemes_and_fit_a_phone(charted: Charted, browser: Browser, axe_source):
    for scheme in ("light", "dark"):
        context = await browser.new_context(
            viewport={"width": 1360, "height": 900}, timezone_id=OPERATOR_ZONE, locale="en-GB", color_scheme=scheme
        )
        try:
            opened = await context.new_page()
            opened.set_default_timeout(15_000)
            await open_insights(opened, charted)
            await plot(opened, "Estimated cost per model").focus()
            found = await serious_violations(opened, axe_source)
            assert found == [], f"{scheme}: {pretty(found)}"
            await screenshot(opened, f"charts-{scheme}")
        finally:
            await context.close()
    context = await browser.new_context(viewport=PHONE, timezone_id=OPERATOR_ZONE, locale="en-GB")
    try:
        phone = await context.new_page()
        phone.set_default_timeout(15_000)
        await open_insights(phone, charted)
        width = await phone.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], width
        for title in CHART_TITLES:
            box = await phone.locator("figure", has=phone.locator("figcaption", has_text=title)).bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], (title, box)
        found = await serious_violations(phone, axe_source)
        assert found == [], pretty(found)
        await screenshot(phone, "charts-phone")
    finally:
        await context.close()
