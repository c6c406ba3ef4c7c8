"""The console as an operator on a phone meets it: the model picker offers the
models the platform has evidence for and applies a pin only on confirm, error
states in an operator's words, a session that follows a link into a new tab,
a colleague's change showing without a reload, and every page at 390 px."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Browser, Page, expect

from tests.browser.conftest import OPERATOR_ZONE, Platform, pretty, screenshot, serious_violations
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


async def accessible(page: Page, axe_source: str) -> None:
    found = await serious_violations(page, axe_source)
    assert found == [], pretty(found)


async def document_width(page: Page) -> int:
    width: int = await page.evaluate("document.documentElement.scrollWidth")
    return width


async def stored_pin(demo: Platform, agent_id: str) -> str | None:
    async with httpx.AsyncClient(base_url=demo.base) as client:
        reply = await client.get(f"/admin/ai/agents/{agent_id}", headers=bearer(role=4))
    assert reply.status_code == 200, reply.text
    pin: str | None = reply.json()["model"]
    return pin


async def test_the_model_picker_offers_evidence_and_applies_only_on_confirm(demo: Platform, phone: Page, axe_source):
    await phone.goto(demo.link(path="/console/agents/DISPATCH_AGENT"))
    picker = phone.get_by_label("Model", exact=True)
    # The demo's dispatch decisions went to these two models; routing holds their evidence.
    await expect(picker.locator("option", has_text="claude-sonnet-4-5")).to_have_text(
        re.compile(r"claude-sonnet-4-5 — in its decisions, in routing")
    )
    await expect(picker.locator("option", has_text="claude-haiku-4-5")).to_have_count(1)
    assert await picker.locator("option", has_text="claude-opus-5-5").count() == 0
    assert await document_width(phone) <= PHONE["width"]

    await picker.select_option("claude-haiku-4-5")
    assert await stored_pin(demo, "DISPATCH_AGENT") is None
    await phone.get_by_role("button", name="Review change").click()
    dialog = phone.get_by_role("dialog")
    await expect(dialog.locator(".model-change")).to_have_text(re.compile(r"From Engine default to claude-haiku-4-5"))
    assert await document_width(phone) <= PHONE["width"]
    await screenshot(phone, "operator-model-confirm", full_page=False)
    await accessible(phone, axe_source)
    await dialog.get_by_role("button", name="Cancel").click()
    await expect(dialog).to_be_hidden()
    assert await stored_pin(demo, "DISPATCH_AGENT") is None

    await phone.get_by_role("button", name="Review change").click()
    await dialog.get_by_role("button", name="Apply").click()
    await expect(dialog).to_be_hidden()
    assert await stored_pin(demo, "DISPATCH_AGENT") == "claude-haiku-4-5"
    await expect(picker.locator("option", has_text="claude-haiku-4-5")).to_have_text(re.compile("pinned now"))

    # Any id the deployment's patterns (claude-* by default) allow can be typed.
    await picker.select_option(label="Other model id…")
    other = phone.get_by_label("Other model id")
    await other.fill("gpt-4.1")
    await expect(phone.get_by_text("This deployment only allows models matching claude-*.")).to_be_visible()
    await expect(phone.get_by_role("button", name="Review change")).to_be_disabled()
    await other.fill("claude-opus-9-9")
    await phone.get_by_role("button", name="Review change").click()
    await expect(dialog.locator(".model-change")).to_have_text(re.compile(r"From claude-haiku-4-5 to claude-opus-9-9"))
    await dialog.get_by_role("button", name="Apply").click()
    await expect(dialog).to_be_hidden()
    assert await stored_pin(demo, "DISPATCH_AGENT") == "claude-opus-9-9"
    await screenshot(phone, "operator-model-picker")
    assert await document_width(phone) <= PHONE["width"]

    await picker.select_option("")
    await phone.get_by_role("button", name="Review change").click()
    await expect(dialog.locator(".model-change")).to_have_text(re.compile(r"From claude-opus-9-9 to Engine default"))
    await dialog.get_by_role("button", name="Apply").click()
    await expect(dialog).to_be_hidden()
    assert await stored_pin(demo, "DISPATCH_AGENT") is None


# The widest elements, named, so a page that overflows says what overflows.
OVERFLOWING = """() => [...document.querySelectorAll('body *')]
  .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
  .filter(e => !e.closest('.table-wrap, pre, .visually-hidden, dialog:not([open])'))
  .slice(0, 8)
  .map(e => e.tagName.toLowerCase() + (e.className ? '.' + String(e.className).split(' ').join('.') : '')
    + ' ' + Math.round(e.getBoundingClientRect().right))"""


# In-page navigation, as a click on a link does: the session stays in the tab.
GO = "to => { history.pushState(null, '', to); dispatchEvent(new PopStateEvent('popstate')); }"


async def a_decision(demo: Platform) -> dict:
    async with httpx.AsyncClient(base_url=demo.base) as client:
        reply = await client.get("/admin/ai/decisions", params={"limit": 1}, headers=bearer(role=4))
    assert reply.status_code == 200, reply.text
    decision: dict = reply.json()["items"][0]
    return decision


async def test_every_page_fits_a_390_px_screen(demo: Platform, phone: Page):
    decision = await a_decision(demo)
    pages = [
        "/console/agents",
        "/console/agents/DISPATCH_AGENT",
        "/console/agents/CONSOLE_OPS_AGENT",
        "/console/agents/CONSOLE_OPS_AGENT/skills/new",
        "/console/decisions",
        f"/console/decisions/{decision['id']}",
        f"/console/subjects/{decision['subject_id']}",
        "/console/insights",
        "/console/runs",
        "/console/routing",
        "/console/playground",
        "/console/audit",
    ]
    await phone.goto(demo.link(path=pages[0]))
    await expect(phone.get_by_role("navigation", name="Console sections")).to_be_visible()
    widths = {}
    for path in pages:
        await phone.evaluate(GO, path)
        await expect(phone.locator("main")).not_to_contain_text("Loading")
        widths[path] = (await document_width(phone), await phone.evaluate(OVERFLOWING))
        await screenshot(phone, "phone" + path.replace("/console", "").replace("/", "-")[:60])
    too_wide = {path: found for path, found in widths.items() if found[0] > PHONE["width"]}
    assert too_wide == {}, too_wide


async def test_decision_errors_are_in_an_operators_words_and_retry_only_where_it_can_help(demo: Platform, phone: Page):
    await phone.goto(demo.link(path="/console/decisions?from=2026-03-02T10:00&to=2026-03-01T10:00"))
    alert = phone.get_by_role("alert")
    await expect(alert).to_contain_text("“Decided before” must be later than “Decided from”.")
    await expect(alert).not_to_contain_text("decided_to")
    await expect(alert.get_by_role("button", name="Try again")).to_have_count(0)
    await screenshot(phone, "operator-decisions-bad-window")

    requests: list[str] = []
    phone.on("request", lambda request: requests.append(request.url))
    await phone.evaluate(GO, "/console/decisions/not-a-uuid")
    await expect(alert).to_contain_text("“not-a-uuid” is not a decision id")
    await expect(alert).not_to_contain_text("pattern")
    assert [url for url in requests if "/admin/ai/decisions/not-a-uuid" in url] == []

    await phone.evaluate(GO, "/console/decisions/00000000-0000-4000-8000-000000000000")
    await expect(alert).to_contain_text("Not found")
    await expect(alert.get_by_role("button", name="Try again")).to_have_count(0)


async def test_an_unseen_subject_has_no_human_decisions_and_logs_no_error(demo: Platform, phone: Page):
    errors: list[str] = []
    phone.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    phone.on("pageerror", lambda error: errors.append(str(error)))
    await phone.goto(demo.link(path="/console/subjects/never-reported-7"))
    await expect(phone.get_by_text("No person has decided anything about never-reported-7.")).to_be_visible()
    current = phone.get_by_role("navigation", name="Console sections").locator("[aria-current=page]")
    await expect(current).to_have_text("Decisions")
    assert errors == []


async def test_the_nav_marks_the_current_section_on_every_page(demo: Platform, phone: Page):
    decision = await a_decision(demo)
    sections = {
        "/console/agents/DISPATCH_AGENT": "Agents",
        "/console/agents/CONSOLE_OPS_AGENT/skills/new": "Agents",
        "/console/decisions": "Decisions",
        f"/console/decisions/{decision['id']}": "Decisions",
        f"/console/subjects/{decision['subject_id']}": "Decisions",
        "/console/insights": "Insights",
        "/console/routing": "Routing",
        "/console/playground": "Playground",
        "/console/playground/runs/00000000-0000-4000-8000-000000000000": "Playground",
        "/console/audit": "Audit",
    }
    await phone.goto(demo.link(path="/console/agents"))
    current = phone.get_by_role("navigation", name="Console sections").locator("[aria-current=page]")
    await expect(current).to_have_text("Agents")
    for path, section in sections.items():
        await phone.evaluate(GO, path)
        await expect(current).to_have_text(section)


async def test_a_link_opened_in_a_new_tab_keeps_the_session_and_signing_out_ends_it_everywhere(
    demo: Platform, phone: Page
):
    await phone.goto(demo.link(path="/console/agents"))
    await expect(phone.get_by_role("navigation", name="Console sections")).to_be_visible()
    second = await phone.context.new_page()
    await second.goto(f"{demo.base}/console/decisions")
    await expect(second.get_by_role("heading", name="Decisions", exact=True)).to_be_visible()
    await expect(second.get_by_label("Console token (JWT)")).to_have_count(0)
    # Handed over tab to tab: in each tab's session storage, never on disk in local storage.
    for tab in (phone, second):
        assert await tab.evaluate("Object.keys(sessionStorage)") == ["outrider.console.token"]
        assert await tab.evaluate("localStorage.length") == 0

    await second.get_by_role("button", name="Sign out").click()
    await expect(second.get_by_label("Console token (JWT)")).to_be_visible()
    await expect(phone.get_by_label("Console token (JWT)")).to_be_visible()
    await expect(phone.get_by_role("alert")).to_contain_text("You signed out in another tab.")
    assert await phone.evaluate("sessionStorage.length") == 0

    # With no tab holding a session, a new tab has nothing to be handed.
    third = await phone.context.new_page()
    await third.goto(f"{demo.base}/console/agents")
    await expect(third.get_by_label("Console token (JWT)")).to_be_visible()


async def test_an_open_agent_studio_shows_a_colleagues_change_without_a_reload(demo: Platform, phone: Page):
    await phone.goto(demo.link(path="/console/agents/EXCEPTION_AGENT"))
    async with httpx.AsyncClient(base_url=demo.base) as client:
        agent = (await client.get("/admin/ai/agents/EXCEPTION_AGENT", headers=bearer(role=4))).json()
        skill = agent["skills"][0]
        switch = phone.get_by_role("switch", name=f"Enable {skill['title']}")
        await expect(switch).to_have_attribute("aria-checked", "true" if skill["enabled"] else "false")
        await expect(phone.locator(".freshness")).to_have_text(re.compile(r"^updated (just now|\d+ s ago)$"))
        # A colleague switches the skill in another console, straight through the API.
        change = {"enabled": not skill["enabled"], "version": skill["version"]}
        reply = await client.patch(f"/admin/ai/skills/{skill['id']}", json=change, headers=bearer(role=1))
        assert reply.status_code == 200, reply.text
    # The studio looks again every 10 s: well inside the 40 s it stayed stale before.
    await expect(switch).to_have_attribute("aria-checked", "false" if skill["enabled"] else "true", timeout=15_000)
    await expect(phone.locator(".freshness")).to_have_text(re.compile(r"^updated (just now|\d s ago)$"))


async def test_every_page_passes_axe_in_dark_mode_too(demo: Platform, browser: Browser, axe_source):
    decision = await a_decision(demo)
    context = await browser.new_context(
        viewport={"width": 1360, "height": 900}, timezone_id=OPERATOR_ZONE, locale="en-GB", color_scheme="dark"
    )
    dark = await context.new_page()
    dark.set_default_timeout(15_000)
    try:
        await dark.goto(demo.link(path="/console/agents/DISPATCH_AGENT"))
        await expect(dark.get_by_role("navigation", name="Console sections")).to_be_visible()
        background = await dark.evaluate("getComputedStyle(document.documentElement).backgroundColor")
        assert background == "rgb(18, 24, 33)", background
        found = {}
        for path in (
            "/console/agents/DISPATCH_AGENT",
            "/console/decisions",
            f"/console/decisions/{decision['id']}",
            "/console/insights",
            "/console/runs",
            "/console/routing?decision_type=stall_response",
            "/console/rollouts",
            "/console/alerts",
            "/console/playground",
            "/console/audit",
        ):
            await dark.evaluate(GO, path)
            await expect(dark.locator("main")).not_to_contain_text("Loading")
            await screenshot(dark, "dark" + path.replace("/console", "").replace("/", "-").split("?")[0][:60])
            violations = await serious_violations(dark, axe_source)
            if violations:
                found[path] = violations
        assert found == {}, pretty([found])
    finally:
        await context.close()


async def test_slash_searches_agents_and_then_subjects(demo: Platform, page: Page):
    decision = await a_decision(demo)
    await page.goto(demo.link(path="/console/agents/DISPATCH_AGENT"))
    await expect(page.locator(".agent-list .agent-item").first).to_be_visible()
    await page.keyboard.press("/")
    search = page.get_by_label("Find an agent")
    await expect(search).to_be_focused()
    await page.keyboard.type("express dispatch")
    agents = page.locator(".agent-list .agent-item")
    await expect(agents).to_have_count(1)
    await expect(agents.first).to_have_attribute("href", "/console/agents/EXPRESS_DISPATCH_AGENT")

    # A page without a search field of its own sends "/" to the decisions list's subject search.
    await page.evaluate(GO, "/console/insights")
    await expect(page.locator("main")).not_to_contain_text("Loading")
    await page.keyboard.press("/")
    subject = page.get_by_label("Subject")
    await expect(subject).to_be_focused()
    await page.keyboard.type(decision["subject_id"])
    await page.keyboard.press("Enter")
    await expect(page).to_have_url(re.compile(r"subject_id="))
    async with httpx.AsyncClient(base_url=demo.base) as client:
        reply = await client.get(
            "/admin/ai/decisions", params={"subject_id": decision["subject_id"], "limit": 25}, headers=bearer(role=4)
        )
    about_the_subject = len(reply.json()["items"])
    assert about_the_subject >= 1
    # The listing keeps the previous page on screen while the filtered one loads: wait for the filtered rows.
    await expect(page.locator("tbody tr td a[href*='/subjects/']")).to_have_text(
        [decision["subject_id"]] * about_the_subject
    )


async def test_a_range_preset_filters_decisions_by_how_recent(demo: Platform, page: Page):
    await page.goto(demo.link(path="/console/decisions"))
    await page.get_by_role("button", name="Last hour").click()
    await expect(page).to_have_url(re.compile(r"from=\d{4}-\d{2}-\d{2}T\d{2}%3A\d{2}"))
    await expect(page.get_by_label("Decided from")).not_to_have_value("")
    # The wall time an hour back in the operator's zone, to the minute the input keeps.
    reach_s = await page.evaluate(
        "() => (Date.now() - new Date(document.getElementById('f-from').value).getTime()) / 1000"
    )
    assert 3540 <= reach_s <= 3720, reach_s
    await expect(page.get_by_label("Decided before")).to_have_value("")
    await page.get_by_role("button", name="Last 7 days").click()
    reach_s = await page.evaluate(
        "() => (Date.now() - new Date(document.getElementById('f-from').value).getTime()) / 1000"
    )
    assert 7 * 86400 - 60 <= reach_s <= 7 * 86400 + 120, reach_s
    await expect(page.locator("tbody tr").first).to_be_visible()


async def test_a_tenant_login_gets_one_screen_that_says_why(demo: Platform, page: Page):
    await page.goto(demo.link(tenant=17, path="/console/decisions"))
    await expect(page.get_by_role("heading", name="No access to the Outrider console")).to_be_visible()
    await expect(page.get_by_role("status")).to_contain_text("tenant 17")
    assert await page.get_by_role("alert").count() == 0
    await page.goto(demo.link(role=2, path="/console/agents"))
    await expect(page.get_by_role("status")).to_contain_text("Role 2 may not read the console")
    await page.get_by_role("button", name="Sign out").click()
    await expect(page.get_by_role("heading", name="Sign in to the Outrider console")).to_be_visible()


async def test_thresholds_read_as_words_with_their_keys(demo: Platform, page: Page):
    await page.goto(demo.link(path="/console/agents/EXCEPTION_AGENT"))
    field = page.get_by_label("Stall minutes")
    await expect(field).to_be_visible()
    await expect(page.locator("label", has=page.locator("code", has_text="stallMinutes"))).to_have_count(1)
    # The schema's description says what the number means, read out with the field.
    await expect(field).to_have_accessible_description(
        re.compile(r"^Minutes without progress before a rider counts as stalled\. Whole number from 3 to 60")
    )


async def test_export_saves_every_decision_the_filters_select(demo: Platform, page: Page):
    async with httpx.AsyncClient(base_url=demo.base) as client:
        reply = await client.get(
            "/admin/ai/decisions/export",
            params={"agent_id": "EXCEPTION_AGENT", "format": "jsonl"},
            headers=bearer(role=4),
        )
    assert reply.status_code == 200, reply.text
    expected = {json.loads(line)["id"] for line in reply.text.splitlines()}
    assert len(expected) > 25, "the demo should leave more than one page of exception decisions"

    await page.goto(demo.link(path="/console/decisions?agent_id=EXCEPTION_AGENT"))
    await expect(page.locator("tbody tr").first).to_be_visible()
    async with page.expect_download() as started:
        await page.get_by_role("button", name="Export CSV").click()
    download = await started.value
    assert re.fullmatch(r"decisions-\d{8}T\d{6}Z\.csv", download.suggested_filename), download.suggested_filename
    saved = await asyncio.to_thread(Path(await download.path()).read_text)
    rows = list(csv.DictReader(io.StringIO(saved)))
    assert {row["id"] for row in rows} == expected
    assert {row["agent_id"] for row in rows} == {"EXCEPTION_AGENT"}
    await expect(page.get_by_role("status").filter(has_text="Exported")).to_contain_text(
        f"Exported {len(expected):,} decisions"
    )
