"""Guarded rollouts in the console, in Chromium against the embedded stack with
demo data: one started from Agent Studio, watched, paused, resumed and
aborted; a second one refused while the first is in the way; read-only staff
see it all with no action; every view passes axe-core."""

from __future__ import annotations

import re

import httpx
from playwright.async_api import Page, expect

from outrider.v1 import registry_pb2, registry_pb2_grpc
from tests.browser.conftest import Platform, pretty, screenshot, serious_violations
from tests.harness import bearer, service_channel

EVIDENCE = registry_pb2.ArmEvidence(
    judged=60, successes=45, failures=15, unknown=4, pending=7, mean=0.74, low=0.62, high=0.84
)


async def accessible(page: Page, axe_source: str) -> None:
    found = await serious_violations(page, axe_source)
    assert found == [], pretty(found)


async def start_by_api(demo: Platform, draft: dict) -> dict:
    async with httpx.AsyncClient(base_url=demo.base, headers=bearer(role=1, sub="u-other")) as client:
        created = await client.post("/admin/ai/rollouts", json=draft)
    assert created.status_code == 201, created.text
    return created.json()


async def judge(demo: Platform, rollout_id: str, verdict: str, step: int, p_harm: float) -> None:
    """A look of the guard, as the platform gives it."""
    request = registry_pb2.JudgeRolloutRequest(
        id=rollout_id,
        verdict=verdict,
        step=step,
        control=EVIDENCE,
        candidate=EVIDENCE,
        p_harm=p_harm,
        reason=f"{verdict} on 60 judged per arm",
    )
    async with service_channel(demo.settings, "registry") as channel:
        await registry_pb2_grpc.RegistryStub(channel).JudgeRollout(request)


async def test_a_model_rollout_starts_in_agent_studio_and_is_paused_resumed_and_aborted(
    demo: Platform, page: Page, axe_source
):
    await page.goto(demo.link(email="lead@example.com", path="/console/agents/DISPATCH_AGENT"))
    config = page.get_by_role("region", name="Configuration")
    await config.get_by_role("button", name="Roll out gradually").click()
    dialog = page.get_by_role("dialog")
    await expect(dialog.get_by_label("Steps (% of subjects)")).to_have_value("5, 25, 50, 100")
    await expect(dialog.get_by_label("Largest drop allowed")).to_have_value("0.05")
    await expect(dialog.get_by_label("Confidence")).to_have_value("0.95")
    await expect(dialog.get_by_label("Judged per arm before a step")).to_have_value("50")
    await dialog.get_by_label("Model pin").check()
    await dialog.get_by_label(re.compile("^Candidate model")).fill("claude-opus-5-5")
    # A decision type not in the registry's shape is refused before anything is sent.
    await dialog.get_by_label("Decision type").fill("Rider Reassignment")
    await dialog.get_by_role("button", name="Start rollout").click()
    await expect(dialog.get_by_text("lowercase_snake_case, as the agent records it")).to_be_visible()
    await dialog.get_by_label("Decision type").fill("rider_reassignment")
    await screenshot(page, "rollout-dialog")
    await accessible(page, axe_source)
    await dialog.get_by_role("button", name="Start rollout").click()
    await expect(dialog.get_by_role("status")).to_contain_text("Rolling out to 5 % of rider_reassignment subjects")
    await dialog.get_by_role("link", name="Open the rollout").click()

    heading = page.get_by_role("heading", name=re.compile("model the engine default → claude-opus-5-5"))
    await expect(heading).to_be_visible()
    assert re.search(r"/console/rollouts/[0-9a-f-]{36}$", page.url), page.url
    summary = page.locator("section", has=page.get_by_role("heading", name=re.compile("^model ")))
    await expect(summary.locator(".badge")).to_have_text("running")
    await expect(summary).to_contain_text("5 % of subjects · steps 5 → 25 → 50 → 100 %")
    # Both arms drawn, each with its interval; the counts per arm beside them.
    await expect(page.locator(".chart-posterior svg path")).to_have_count(2)
    await expect(page.get_by_role("row", name=re.compile("^Control"))).to_be_visible()
    await expect(page.get_by_role("row", name=re.compile("^Candidate"))).to_be_visible()
    timeline = page.get_by_role("list", name="Steps of this rollout")
    await expect(timeline.locator("li")).to_have_count(1)
    await expect(timeline.locator("li").first).to_contain_text("started at 5 % · by lead@example.com")
    await screenshot(page, "rollout")
    await accessible(page, axe_source)

    await page.get_by_role("button", name="Pause").click()
    await expect(summary.locator(".badge")).to_have_text("paused")
    await expect(page.get_by_role("button", name="Pause")).to_have_count(0)
    await page.get_by_role("button", name="Resume").click()
    await expect(summary.locator(".badge")).to_have_text("running")
    await expect(timeline.locator("li")).to_have_count(3)
    await expect(timeline.locator("li").nth(1)).to_contain_text("paused")
    await expect(timeline.locator("li").nth(2)).to_contain_text("resumed")

    await page.get_by_role("button", name="Abort…").click()
    confirm = page.get_by_role("dialog").get_by_role("button", name="Abort rollout")
    await expect(confirm).to_be_disabled()
    await accessible(page, axe_source)
    await page.get_by_label("Reason (kept in its history)").fill("dispatch leads want a week of shadow runs first")
    await confirm.click()
    await expect(summary.locator(".badge")).to_have_text("aborted")
    await expect(summary).to_contain_text("0 % of subjects")
    await expect(timeline.locator("li").last).to_contain_text("aborted at 0 % · by lead@example.com")
    await expect(timeline.locator("li").last).to_contain_text("dispatch leads want a week of shadow runs first")
    for action in ("Pause", "Resume", "Abort…"):
        await expect(page.get_by_role("button", name=action)).to_have_count(0)

    await page.get_by_role("navigation", name="Console sections").get_by_role("link", name="Rollouts").click()
    row = page.get_by_role("row", name=re.compile("Dispatch agent"))
    await expect(row).to_contain_text("rider_reassignment")
    await expect(row).to_contain_text("model the engine default → claude-opus-5-5")
    await expect(row).to_contain_text("aborted")
    await page.get_by_label("State").select_option("running")
    await page.get_by_role("button", name="Apply filters").click()
    await expect(page).to_have_url(re.compile(r"state=running"))
    await expect(page.get_by_role("row", name=re.compile("Dispatch agent"))).to_have_count(0)
    await page.get_by_label("State").select_option("aborted")
    await page.get_by_label("Agent").select_option("DISPATCH_AGENT")
    await page.get_by_role("button", name="Apply filters").click()
    await expect(page).to_have_url(re.compile(r"agent=DISPATCH_AGENT&state=aborted"))
    await expect(page.get_by_role("row", name=re.compile("Dispatch agent"))).to_have_count(1)
    await screenshot(page, "rollouts")
    await accessible(page, axe_source)
    await page.set_viewport_size({"width": 390, "height": 844})
    await screenshot(page, "rollouts-narrow")
    await accessible(page, axe_source)
    await page.get_by_role("row", name=re.compile("Dispatch agent")).get_by_role("link").click()
    await expect(page.locator(".chart-posterior svg path")).to_have_count(2)
    await screenshot(page, "rollout-narrow")
    await accessible(page, axe_source)


async def test_a_second_rollout_of_one_decision_type_links_to_the_one_in_the_way(
    demo: Platform, page: Page, axe_source
):
    first = await start_by_api(
        demo,
        {
            "agent_id": "CONSOLE_OPS_AGENT",
            "decision_type": "late_dispatch_alert",
            "change": {"skill_id": "late_dispatch", "thresholds": {"unassignedMinutes": 25}},
        },
    )
    await page.goto(demo.link(path="/console/agents/CONSOLE_OPS_AGENT"))
    card = page.locator("article.skill", has=page.get_by_role("heading", name="Late dispatch"))
    await card.get_by_role("button", name="Roll out gradually").click()
    dialog = page.get_by_role("dialog")
    await dialog.get_by_label("Decision type").fill("late_dispatch_alert")
    # Nothing changed yet: the dialog says so instead of sending an empty change.
    await dialog.get_by_role("button", name="Start rollout").click()
    await expect(dialog.get_by_role("alert")).to_contain_text("change the switch or at least one threshold")
    await dialog.get_by_label(re.compile("^Switch")).select_option("off")
    await dialog.get_by_role("button", name="Start rollout").click()
    refusal = dialog.get_by_role("alert")
    await expect(refusal).to_contain_text("already has a running or paused rollout for late_dispatch_alert")
    await accessible(page, axe_source)
    await refusal.get_by_role("link", name="Open the rollout in the way").click()
    assert page.url.endswith(f"/console/rollouts/{first['id']}"), page.url
    await expect(page.get_by_role("heading", name=re.compile("late_dispatch unassignedMinutes .*→ 25"))).to_be_visible()
    # A colleague pauses it first: the refused pause says so in words and shows where it stands.
    async with httpx.AsyncClient(base_url=demo.base, headers=bearer(role=1, sub="u-other")) as client:
        paused = await client.post(f"/admin/ai/rollouts/{first['id']}/pause", json={"reason": "checking"})
    assert paused.status_code == 200, paused.text
    await page.get_by_role("button", name="Pause").click()
    await expect(page.get_by_role("alert")).to_contain_text("This rollout changed while you were looking at it")
    await expect(page.get_by_role("button", name="Resume")).to_be_visible()
    await accessible(page, axe_source)


async def test_read_only_staff_see_a_rollout_with_no_action(demo: Platform, page: Page, axe_source):
    started = await start_by_api(
        demo,
        {"agent_id": "EXCEPTION_AGENT", "decision_type": "stall_response", "change": {"model": "claude-opus-4-8"}},
    )
    await judge(demo, started["id"], "observe", 0, 0.31)
    await judge(demo, started["id"], "observe", 0, 0.12)
    await judge(demo, started["id"], "advance", 0, 0.04)
    for role in (3, 4):
        await page.goto(demo.link(role=role, path=f"/console/rollouts/{started['id']}"))
        await expect(page.get_by_role("heading", name=re.compile("model .* → claude-opus-4-8"))).to_be_visible()
        await expect(page.locator(".chart-posterior svg path")).to_have_count(2)
        await expect(page.get_by_role("row", name=re.compile("^Candidate"))).to_contain_text("60")
        harm = page.get_by_role("img", name=re.compile("^p_harm over 3 looks of the guard, from 31.0 %"))
        await expect(harm).to_be_visible()
        timeline = page.get_by_role("list", name="Steps of this rollout")
        await expect(timeline.locator("li").last).to_contain_text("advanced at 25 % · by rollout-guard")
        if role == 3:
            await screenshot(page, "rollout-judged-read-only")
        for action in ("Pause", "Resume", "Abort…"):
            assert await page.get_by_role("button", name=action).count() == 0
        await accessible(page, axe_source)
        await page.goto(demo.link(role=role, path="/console/agents/EXCEPTION_AGENT"))
        await expect(page.get_by_role("heading", name="Skills")).to_be_visible()
        assert await page.get_by_role("button", name="Roll out gradually").count() == 0
    await screenshot(page, "agent-studio-read-only-rollouts")
    await page.goto(demo.link(role=3, path="/console/rollouts?agent=EXCEPTION_AGENT"))
    await expect(page.get_by_role("row", name=re.compile("Exception agent"))).to_contain_text("running")
    await accessible(page, axe_source)


async def test_an_open_rollout_shows_the_guards_next_look_without_a_reload(demo: Platform, page: Page, axe_source):
    started = await start_by_api(
        demo,
        {"agent_id": "EXCEPTION_AGENT", "decision_type": "watched_rollout", "change": {"model": "claude-opus-4-9"}},
    )
    await page.goto(demo.link(role=3, path=f"/console/rollouts/{started['id']}"))
    summary = page.locator("section", has=page.get_by_role("heading", name=re.compile("^model ")))
    await expect(summary).to_contain_text("5 % of subjects")
    await expect(page.locator(".page-header .freshness")).to_have_text(re.compile(r"^updated (just now|\d+ s ago)$"))
    # The guard advances it while the operator watches: the page catches up by itself.
    await judge(demo, started["id"], "advance", 0, 0.02)
    await expect(summary).to_contain_text("25 % of subjects", timeout=15_000)
    timeline = page.get_by_role("list", name="Steps of this rollout")
    await expect(timeline.locator("li").last).to_contain_text("advanced at 25 % · by rollout-guard")
    await judge(demo, started["id"], "halt", 1, 0.97)
    await expect(summary.locator(".badge")).to_have_text("halted", timeout=15_000)
    await screenshot(page, "rollout-live-halted")
    await accessible(page, axe_source)
