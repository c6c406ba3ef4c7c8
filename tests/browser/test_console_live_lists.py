"""Lists that stay live, in Chromium against the embedded stack with demo
data: an open Decisions, Runs or Audit page shows what arrived after it
opened within half a minute, with no reload, and says how old its figures
are. The page's clock is driven, so the half minute passes at once."""

from __future__ import annotations

import re
import time
import uuid

import httpx
from playwright.async_api import Page, expect

from tests.browser.conftest import Platform, screenshot
from tests.harness import bearer, internal_headers

HALF_MINUTE_AND_A_BIT = 31_000


async def opened(page: Page, demo: Platform, path: str) -> None:
    await page.clock.install(time=time.time())
    await page.goto(demo.link(role=3, path=path))
    await expect(page.get_by_text(re.compile(r"^updated "))).to_be_visible()


async def test_a_decision_recorded_after_the_list_opened_shows_without_a_reload(demo: Platform, page: Page):
    subject = f"booking-live-{uuid.uuid4().hex[:8]}"
    await opened(page, demo, "/console/decisions?agent_id=EXCEPTION_AGENT")
    await expect(page.locator("tbody tr").first).to_be_visible()
    await expect(page.get_by_text(subject)).to_have_count(0)

    async with httpx.AsyncClient(base_url=demo.base) as api:
        recorded = await api.post(
            "/internal/agent-decisions",
            json={
                "id": str(uuid.uuid4()),
                "decision_type": "stall_response",
                "agent_id": "EXCEPTION_AGENT",
                "subject_id": subject,
                "context": {"stall_minutes": 14, "zone": "hsr"},
                "decision": {"action": "reassign", "confidence": 0.8},
                "reasoning": "rider stalled 14 min",
                "model": "claude-sonnet-4-5",
            },
            headers=internal_headers(),
        )
    assert recorded.status_code == 201, recorded.text
    await page.clock.fast_forward(HALF_MINUTE_AND_A_BIT)
    await expect(page.locator("tbody tr").first).to_contain_text(subject)
    await screenshot(page, "decisions-live")


async def test_a_change_made_after_the_audit_opened_shows_without_a_reload(demo: Platform, page: Page):
    await opened(page, demo, "/console/audit?actor=live-judge%40example.com")
    await expect(page.get_by_text("No change matches.")).to_be_visible()

    async with httpx.AsyncClient(
        base_url=demo.base, headers=bearer(role=1, sub="u-live-judge", email="live-judge@example.com")
    ) as api:
        listed = await api.get("/admin/ai/decisions", params={"outcome": "failure", "limit": 1})
        [decision] = listed.json()["items"]
        judged = await api.patch(
            f"/admin/ai/decisions/{decision['id']}/outcome", json={"outcome": "success", "reason": "delivered late"}
        )
    assert judged.status_code == 200, judged.text
    await page.clock.fast_forward(HALF_MINUTE_AND_A_BIT)
    await expect(page.get_by_role("row").filter(has_text="verdict.outcome failure → success")).to_have_count(1)


async def test_a_page_further_back_is_read_as_it_was(demo: Platform, page: Page):
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url) if "/admin/ai/runs?" in request.url else None)
    await opened(page, demo, "/console/runs")
    await page.get_by_role("button", name="Next page").click()
    await expect(page.get_by_text(re.compile(r"^Page 2 ·"))).to_be_visible()
    second_page = [url for url in asked if "cursor=" in url]
    await page.clock.fast_forward(HALF_MINUTE_AND_A_BIT)
    await page.clock.fast_forward(HALF_MINUTE_AND_A_BIT)
    await expect(page.get_by_text(re.compile(r"^Page 2 ·"))).to_be_visible()
    assert [url for url in asked if "cursor=" in url] == second_page
