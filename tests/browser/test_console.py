"""The operator console in Chromium against the embedded stack with demo data:
every page signed in by link, its write controls, its refusals, and axe-core's
accessibility rules."""

from __future__ import annotations

import json
import re

import httpx
import pytest
from playwright.async_api import Page, Route, expect

from gateway.auth import issue_token
from tests.browser.conftest import Platform, pretty, screenshot, serious_violations
from tests.harness import bearer, internal_headers
from tests.integration.playground.scripted import Call, Say

AGENT_LIST = ".agent-list"


async def accessible(page: Page, axe_source: str) -> None:
    found = await serious_violations(page, axe_source)
    assert found == [], pretty(found)


async def test_a_sign_in_link_opens_the_first_agent_with_skills_and_shows_badges(
    demo: Platform, page: Page, axe_source
):
    await page.goto(demo.link())
    await expect(page.get_by_role("heading", name=re.compile("^Console assistant"))).to_be_visible()
    # The token left the address bar at once; it lives in this tab's session storage.
    assert "#token" not in page.url and page.url.endswith("/console/agents/CONSOLE_ASSISTANT")
    assert await page.evaluate("Object.keys(sessionStorage)") == ["outrider.console.token"]
    agents = page.locator(AGENT_LIST)
    await expect(agents.locator(".badge-simulation")).to_have_count(3)
    for name, status in (
        ("Hub agent", "simulation"),
        ("Order agent", "broken"),
        ("Jarvis", "partial"),
        ("Exception agent", "live"),
    ):
        await expect(agents.get_by_role("link", name=re.compile(f"^{name}")).locator(".badge-status")).to_have_text(
            status
        )
    # A simulation is drawn unlike a live agent: never the live badge's look.
    live = await agents.locator(".badge-live").first.evaluate("e => getComputedStyle(e).backgroundColor")
    simulated = await agents.locator(".badge-simulation").first.evaluate("e => getComputedStyle(e).backgroundImage")
    assert live != "rgba(0, 0, 0, 0)" and "repeating-linear-gradient" in simulated
    await expect(agents.get_by_role("link", name=re.compile("^Exception agent"))).to_contain_text("watching stalls")
    await screenshot(page, "agents")
    await accessible(page, axe_source)


async def test_an_expired_link_lands_on_sign_in_with_the_reason(demo: Platform, page: Page, axe_source):
    await page.goto(demo.link(ttl_s=-60))
    await expect(page.get_by_role("alert")).to_contain_text("expired")
    await expect(page.get_by_label("Console token (JWT)")).to_be_visible()
    await screenshot(page, "sign-in")
    await accessible(page, axe_source)
    await page.get_by_label("Console token (JWT)").fill(demo.link().split("#token=")[1])
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_role("navigation", name="Console sections")).to_be_visible()


async def test_a_token_the_gateway_refuses_returns_to_sign_in_with_its_reason(demo: Platform, page: Page):
    forged = issue_token("not-the-platform-secret-0123456789abcdef", sub="x", role=1, tenant_id=0, ttl_s=600)
    await page.goto(f"{demo.base}/console/insights#token={forged}")
    alert = page.get_by_role("alert")
    await expect(alert).to_contain_text("The gateway refused your sign-in")
    await expect(alert).to_contain_text("the token is not valid")
    await expect(page.get_by_label("Console token (JWT)")).to_be_visible()
    assert await page.evaluate("sessionStorage.length") == 0


async def test_someone_elses_change_in_between_is_a_conflict_and_the_page_reloads(demo: Platform, page: Page):
    await page.goto(demo.link(path="/console/agents/CONSOLE_OPS_AGENT"))
    card = page.locator("article.skill", has=page.get_by_role("heading", name="Late dispatch"))
    await expect(card).to_contain_text("version 1")
    # A colleague saves first, straight through the API.
    async with httpx.AsyncClient(base_url=demo.base, headers=bearer(role=1, sub="u-other")) as client:
        other = await client.patch("/admin/ai/skills/late_dispatch", json={"thresholds": {"unassignedMinutes": 25}})
    assert other.status_code == 200, other.text
    await card.get_by_role("switch", name="Enable Late dispatch").click()
    await expect(card.get_by_role("alert")).to_contain_text("Someone else changed this skill")
    await expect(card).to_contain_text("version 2")
    await expect(card.get_by_label("unassignedMinutes")).to_have_value("25")
    await expect(card.get_by_role("switch", name="Enable Late dispatch")).to_have_attribute("aria-checked", "true")


async def test_toggling_a_skill_writes_an_audit_row(demo: Platform, page: Page, axe_source):
    await page.goto(demo.link(email="lead@example.com", path="/console/agents/CONSOLE_OPS_AGENT"))
    switch = page.get_by_role("switch", name="Enable Doorstep stall")
    await expect(switch).to_have_attribute("aria-checked", "true")
    await switch.click()
    await expect(switch).to_have_attribute("aria-checked", "false")
    card = page.locator("article.skill", has=page.get_by_role("heading", name="Doorstep stall"))
    await expect(card).to_contain_text("version 2")
    await card.get_by_text("Recent changes").click()
    # The same words as the audit log: only what changed, before → after.
    change = card.locator(".history-list li").first
    await expect(change).to_contain_text("by lead@example.com")
    await expect(change.locator(".diff")).to_have_text("enabled true → false")
    await screenshot(page, "agent-studio-console-ops")
    await accessible(page, axe_source)

    await page.get_by_role("navigation", name="Console sections").get_by_role("link", name="Audit").click()
    row = page.get_by_role("row", name=re.compile("doorstep_stall"))
    await expect(row.first).to_contain_text("lead@example.com")
    await page.get_by_label("Changed by (email or id)").fill("nobody@example.com")
    await page.get_by_role("button", name="Apply filters").click()
    await expect(page.get_by_text("No change matches.")).to_be_visible()
    await page.get_by_label("Changed by (email or id)").fill("lead@example.com")
    await page.get_by_role("button", name="Apply filters").click()
    await expect(page.get_by_role("row", name=re.compile("doorstep_stall"))).to_have_count(1)
    await screenshot(page, "audit")
    await accessible(page, axe_source)


async def test_a_skill_toggles_by_keyboard_alone(demo: Platform, page: Page):
    await page.goto(demo.link(path="/console/agents/EXPRESS_DISPATCH_AGENT"))
    switch = page.get_by_role("switch", name="Enable Express batch dispatch")
    await expect(switch).to_be_visible()
    before = await switch.get_attribute("aria-checked")
    after = "false" if before == "true" else "true"
    for _ in range(60):
        await page.keyboard.press("Tab")
        if await switch.evaluate("e => e === document.activeElement"):
            break
    else:
        pytest.fail("the skill switch is not reachable with Tab")
    outline = await switch.evaluate("e => getComputedStyle(e).outlineStyle")
    assert outline != "none", "the focused switch shows no focus ring"
    await page.keyboard.press("Space")
    await expect(switch).to_have_attribute("aria-checked", after)
    await page.keyboard.press("Space")
    await expect(switch).to_have_attribute("aria-checked", before)


async def test_a_threshold_out_of_range_is_refused_in_the_browser_and_by_the_server(demo: Platform, page: Page):
    await page.goto(demo.link(path="/console/agents/EXCEPTION_AGENT"))
    field = page.get_by_label("stallMinutes")
    await expect(field).to_be_visible()
    await screenshot(page, "agent-studio", full_page=False)
    save = page.get_by_role("button", name="Save thresholds")
    await field.fill("99")
    await expect(page.get_by_text("must be between 3 and 60, got 99")).to_be_visible()
    await expect(field).to_have_attribute("aria-invalid", "true")
    await expect(save).to_be_disabled()

    # Forced past the browser's check: the PATCH leaves with 99 in it anyway.
    async def force(route: Route) -> None:
        body = json.loads(route.request.post_data or "{}")
        body["thresholds"] = {"stallMinutes": 99}
        await route.continue_(post_data=json.dumps(body))

    await page.route("**/admin/ai/skills/stall_response", force)
    await field.fill("12")
    await expect(save).to_be_enabled()
    await save.click()
    await expect(page.get_by_text("Refused by the server: must be between 3 and 60, got 99")).to_be_visible()
    await page.unroute("**/admin/ai/skills/stall_response")
    await expect(page.locator("article.skill").first).to_contain_text("version 1")
    await save.click()
    await expect(page.get_by_role("status").filter(has_text="Saved as version 2")).to_be_visible()
    await expect(field).to_have_value("12")


async def test_autonomy_needs_the_agent_id_typed_out(demo: Platform, page: Page, axe_source):
    await page.goto(demo.link(path="/console/agents/DISPATCH_AGENT"))
    switch = page.get_by_role("switch", name="Autonomy of DISPATCH_AGENT")
    await expect(switch).to_have_attribute("aria-checked", "false")
    await switch.click()
    dialog = page.get_by_role("dialog")
    confirm = dialog.get_by_role("button", name="Turn autonomy on")
    await expect(confirm).to_be_disabled()
    await dialog.get_by_label("Agent id").fill("dispatch_agent")
    await expect(confirm).to_be_disabled()
    await accessible(page, axe_source)
    await dialog.get_by_label("Agent id").fill("DISPATCH_AGENT")
    await confirm.click()
    await expect(dialog).to_be_hidden()
    await expect(switch).to_have_attribute("aria-checked", "true")
    await expect(page.locator(AGENT_LIST).get_by_role("link", name=re.compile("^Dispatch agent"))).to_contain_text(
        "autonomous"
    )
    await switch.click()
    await expect(switch).to_have_attribute("aria-checked", "false")


async def test_a_new_skill_comes_from_the_console_agents_own_tools(demo: Platform, page: Page, axe_source):
    await page.goto(demo.link(path="/console/agents/CONSOLE_OPS_AGENT/skills/new"))
    await page.get_by_role("button", name="Create skill").click()
    await expect(page.get_by_text("choose at least one tool")).to_be_visible()
    await accessible(page, axe_source)
    await page.get_by_label("Skill id (lowercase_snake_case)").fill("late_pickup_watch")
    await page.get_by_label("Title").fill("Late pickup watch")
    await page.get_by_label(re.compile("^scan_bookings")).check()
    await page.get_by_role("button", name="Create skill").click()
    await expect(page.get_by_role("heading", name="Late pickup watch")).to_be_visible()
    await expect(
        page.locator("article.skill", has=page.get_by_role("heading", name="Late pickup watch"))
    ).to_contain_text("source custom")
    await page.goto(demo.link(path="/console/agents/EXCEPTION_AGENT"))
    await expect(page.get_by_role("heading", name="Skills")).to_be_visible()
    await expect(page.get_by_role("link", name="New skill")).to_have_count(0)


async def test_read_only_staff_see_every_page_but_no_write_control(demo: Platform, page: Page, axe_source):
    await page.goto(demo.link(role=3, path="/console/agents/EXCEPTION_AGENT"))
    await expect(page.get_by_text("role 3 · read-only")).to_be_visible()
    await expect(page.get_by_role("heading", name="Skills")).to_be_visible()
    await expect(page.locator(".thresholds-readonly")).to_contain_text("stallMinutes")
    assert await page.get_by_role("switch").count() == 0
    assert await page.get_by_role("button", name="Save thresholds").count() == 0
    assert await page.get_by_role("spinbutton").count() == 0
    assert await page.get_by_label("Model", exact=True).count() == 0
    await screenshot(page, "agent-studio-read-only")
    await accessible(page, axe_source)
    await page.goto(demo.link(role=4, path="/console/agents/CONSOLE_OPS_AGENT"))
    await expect(page.get_by_role("heading", name="Skills")).to_be_visible()
    assert await page.get_by_role("link", name="New skill").count() == 0
    await page.goto(demo.link(role=3, path="/console/playground"))
    await expect(page.get_by_text("Only role 1 may run prompts")).to_be_visible()
    assert await page.get_by_role("button", name="Run").count() == 0
    await page.goto(demo.link(role=3, path="/console/decisions"))
    await page.locator("table a[href*='/console/decisions/']").first.click()
    await expect(page.get_by_role("heading", name="Outcome history")).to_be_visible()
    assert await page.get_by_role("button", name="Record judgement").count() == 0


async def test_a_tenant_login_gets_one_screen_that_says_why_and_no_page_asks_the_gateway(
    demo: Platform, page: Page, axe_source
):
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url) if "/admin/ai/" in request.url else None)
    await page.goto(demo.link(role=1, tenant=7))
    await expect(page.get_by_role("heading", name="No access to the Outrider console")).to_be_visible()
    await expect(page.get_by_role("status")).to_contain_text("signed in for tenant 7")
    # The gateway refuses a tenant every page (STAFF_ONLY); the console does not ask, and shows no refusal box.
    assert await page.get_by_role("alert").count() == 0
    assert asked == []
    await screenshot(page, "tenant-no-access")
    await accessible(page, axe_source)


async def test_insights_draw_runs_over_time_in_the_operators_zone(demo: Platform, page: Page, axe_source):
    await page.goto(demo.link(path="/console/insights"))
    await expect(page.get_by_role("heading", name="Runs and failures over time")).to_be_visible()
    # Each agent by its name with its id, in the charts and the table.
    chart = page.get_by_role("img", name=re.compile(r"^\S.* \(EXCEPTION_AGENT\): 30 runs"))
    await expect(chart).to_be_visible()
    assert await chart.locator("rect.bar-runs").count() == 25
    await expect(page.get_by_text("Telemetry is not arriving")).to_have_count(0)
    row = page.get_by_role("row", name=re.compile(r"^\S.* EXCEPTION_AGENT "))
    await expect(row).to_contain_text("30")
    last_run = row.locator("time")
    assert (await last_run.inner_text()).endswith("GMT+5:30")
    assert (await last_run.get_attribute("title")).endswith("UTC")
    await expect(page.get_by_role("row", name=re.compile(r"^\S.* HUB_AGENT "))).to_contain_text("no run in this window")
    await expect(page.get_by_role("rowheader", name="stall_response")).to_be_visible()
    await screenshot(page, "insights", full_page=False)
    await accessible(page, axe_source)
    await page.get_by_text("7 d", exact=True).click()
    await expect(page).to_have_url(re.compile(r"days=7"))
    await expect(page.get_by_role("heading", name="Agents, last 7 d")).to_be_visible()


async def test_decisions_page_by_keyset_and_a_person_rejudges(demo: Platform, page: Page, axe_source):
    await page.goto(demo.link(email="judge@example.com", path="/console/decisions"))
    rows = page.locator("table tbody tr")
    await expect(rows).to_have_count(25)
    await expect(page.get_by_text("Page 1 ·")).to_be_visible()
    first_link = rows.first.locator("a").first
    first_page = await first_link.get_attribute("href")
    await accessible(page, axe_source)
    await screenshot(page, "decisions")
    await page.get_by_role("button", name="Next page").click()
    await expect(page.get_by_text("Page 2 ·")).to_be_visible()
    await expect(first_link).not_to_have_attribute("href", first_page)
    await page.get_by_role("button", name="Previous page").click()
    await expect(page.get_by_text("Page 1 ·")).to_be_visible()
    await expect(first_link).to_have_attribute("href", first_page)

    await page.get_by_label("Outcome", exact=True).select_option("failure")
    await page.get_by_label("Agent").select_option("EXCEPTION_AGENT")
    await page.get_by_role("button", name="Apply filters").click()
    await expect(page).to_have_url(re.compile("outcome=failure"))
    await expect(rows.first.locator(".badge-outcome")).to_have_text("failure")
    assert set(await rows.locator(".badge-outcome").all_inner_texts()) == {"failure"}

    await rows.first.locator("a[href*='/console/decisions/']").click()
    await expect(page.get_by_role("heading", name="Precedents")).to_be_visible()
    await expect(page.locator("table").first).to_contain_text("sweeper")
    await accessible(page, axe_source)
    await page.get_by_label("Outcome", exact=True).select_option("success")
    await page.get_by_label("Reason (kept in the history)").fill("the rider did arrive; the feed was late")
    await page.get_by_role("button", name="Record judgement").click()
    history = page.locator("table").first
    await expect(history).to_contain_text("human judgement: judge@example.com")
    await expect(history).to_contain_text("the rider did arrive; the feed was late")
    await expect(page.get_by_role("heading", name=re.compile("success$"))).to_be_visible()
    await screenshot(page, "decision")

    subject_link = page.locator("dd a[href*='/console/subjects/']")
    subject = (await subject_link.inner_text()).strip()
    await subject_link.click()
    await expect(page.get_by_role("heading", name=f"Human decisions for {subject}")).to_be_visible()
    await expect(page.get_by_text(f"No person has decided anything about {subject}")).to_be_visible()
    async with httpx.AsyncClient(base_url=demo.base, headers=internal_headers()) as client:
        registered = await client.put(f"/internal/subjects/{subject}", json={})
        assert registered.status_code == 200, registered.text
        pushed = await client.post(
            "/internal/human-inputs",
            json={
                "provider": "linear:ops/dispatch",
                "external_id": "c-1",
                "subject_id": subject,
                "author": "Priya (dispatch lead)",
                "at": "2026-09-29T15:27:00+00:00",
                "body": "Hold this booking for the customer; do not reassign.",
            },
        )
    assert pushed.status_code == 201, pushed.text
    await page.reload()
    item = page.locator(".timeline-item")
    await expect(item).to_contain_text("operator instruction by Priya (dispatch lead)")
    await expect(item).to_contain_text("Hold this booking for the customer; do not reassign.")
    await expect(item.locator("time").first).to_have_text("29 Sept 2026, 20:57:00 GMT+5:30")
    await expect(item.locator("time").first).to_have_attribute("title", "2026-09-29 15:27:00 UTC")
    await screenshot(page, "human-decisions")
    await accessible(page, axe_source)


async def test_routing_shows_posteriors_and_pick(demo: Platform, page: Page, axe_source):
    await page.goto(demo.link(path="/console/routing"))
    await expect(page).to_have_url(re.compile("decision_type="))
    await expect(page.get_by_role("img", name=re.compile("claude-sonnet-4-5: mean"))).to_be_visible()
    await expect(page.get_by_role("rowheader", name="claude-haiku-4-5")).to_have_count(2)
    await expect(page.get_by_role("heading", name="Conversation metrics")).to_be_visible()
    await expect(page.locator("p.pick")).to_contain_text("this draw picks")
    await screenshot(page, "routing")
    await accessible(page, axe_source)
    # Conversations credit their skill fractionally; the demo's chats feed this one.
    await page.get_by_label("or skill").select_option("order_intake_auto_schedule")
    await expect(page).to_have_url(re.compile("skill=order_intake_auto_schedule"))
    await expect(page.get_by_role("img", name=re.compile("claude-sonnet-4-5: mean"))).to_be_visible()
    await expect(page.locator("p.pick")).to_contain_text("skill:order_intake_auto_schedule")


async def test_the_playground_trace_streams_step_by_step(demo: Platform, page: Page, axe_source):
    demo.model.script(
        Call(("get_booking_cache", {"booking_id": 1001}), text="Reading the booking.", delay_s=0.8),
        Call(("notify_customer", {"booking_id": 1001, "message": "Your rider is on the way."}), delay_s=1.5),
        Say("Booking 1001 is in transit; I proposed a message to the customer.", delay_s=1.5),
    )
    await page.goto(demo.link(path="/console/playground?agent=CUSTOMER_AGENT&skill=customer_notifications"))
    prompt = page.get_by_label("Prompt", exact=True)
    await prompt.fill("x" * 2001)
    await expect(page.get_by_text("2001 / 2000 characters — 1 over the limit")).to_be_visible()
    await expect(page.get_by_role("button", name="Run")).to_be_disabled()
    await prompt.fill("Where is booking 1001? The customer on +91 98450 12345 asks.")
    await expect(page.get_by_text(re.compile(r"^\d+ / 2000 characters$"))).to_be_visible()
    await accessible(page, axe_source)
    await page.get_by_role("button", name="Run").click()

    steps = page.locator("ol.steps > li")
    await expect(steps).to_have_count(1)
    # The first step is on screen while the run is still going.
    await expect(page.get_by_role("status").filter(has_text="Running…")).to_be_visible()
    await expect(steps.first).to_contain_text("get_booking_cache")
    await expect(steps.first).to_contain_text("executed")
    await expect(steps).to_have_count(2)
    await expect(page.get_by_role("status").filter(has_text="Running…")).to_be_visible()
    await expect(steps.nth(1)).to_contain_text("proposal — not executed")
    await expect(page.get_by_role("status").filter(has_text="Finished in")).to_be_visible()
    await expect(
        page.get_by_text("Booking 1001 is in transit; I proposed a message to the customer.").first
    ).to_be_visible()
    await expect(page.locator("dl.facts")).to_contain_text("in ·")
    result = await steps.first.locator("pre").nth(1).inner_text()
    assert "Ananya" not in result and "<person#1>" in result
    await screenshot(page, "playground")
    await accessible(page, axe_source)

    await page.locator("a[href*='/console/playground/runs/']").first.click()
    await expect(page.get_by_role("heading", name="Playground run")).to_be_visible()
    await expect(page.locator("ol.steps > li")).to_have_count(2)
    await expect(page.get_by_text("<phone#1>").first).to_be_visible()
    await accessible(page, axe_source)
