"""The run list in the console, in Chromium against the embedded stack with
demo data and one traced run sent over OTLP: from an agent's counts on
Insights to its runs and its failures, into the traced run and its model
calls; every view passes axe-core and fits 390 px."""

from __future__ import annotations

import re
import time

import httpx
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1 import trace_pb2
from playwright.async_api import Page, expect

from tests.browser.conftest import Platform, pretty, screenshot, serious_violations
from tests.harness import INTERNAL_KEY, bearer, eventually
from tests.integration.telemetry.otlp_support import attribute

AGENT = "DISPATCH_AGENT"
TRACE = bytes.fromhex("5b8efff798038103d269b633813fc60c")
NARROW = {"width": 390, "height": 844}


def _span(n: int, name: str, start_ns: int, ms: int, *, parent: int | None = None, failed: bool = False, **attributes):
    return trace_pb2.Span(
        trace_id=TRACE,
        span_id=n.to_bytes(8, "big"),
        parent_span_id=parent.to_bytes(8, "big") if parent else b"",
        name=name,
        start_time_unix_nano=start_ns,
        end_time_unix_nano=start_ns + ms * 1_000_000,
        status=trace_pb2.Status(code=trace_pb2.Status.StatusCode.STATUS_CODE_ERROR if failed else 0),
        attributes=[attribute(key.replace("__", "."), value) for key, value in attributes.items()],
    )


def traced_run() -> ExportTraceServiceRequest:
    """A dispatch run of 1.2 s, just now, with three model calls: one failed without usage."""
    start = (time.time_ns() // 10**9 - 20) * 10**9
    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    resource_spans.resource.attributes.append(attribute("gen_ai.agent.name", AGENT))
    resource_spans.scope_spans.add().spans.extend(
        [
            _span(1, "assign_rider", start, 1200),
            _span(
                2,
                "chat",
                start + 50 * 10**6,
                400,
                parent=1,
                gen_ai__operation__name="chat",
                gen_ai__response__model="claude-sonnet-4-5",
                gen_ai__usage__input_tokens=1830,
                gen_ai__usage__output_tokens=96,
            ),
            _span(
                3,
                "chat",
                start + 500 * 10**6,
                150,
                parent=1,
                failed=True,
                gen_ai__operation__name="chat",
                gen_ai__request__model="claude-haiku-4-5",
                error__type="overloaded",
            ),
            _span(
                4,
                "chat",
                start + 700 * 10**6,
                450,
                parent=1,
                gen_ai__operation__name="chat",
                gen_ai__response__model="claude-haiku-4-5",
                gen_ai__usage__input_tokens=1911,
                gen_ai__usage__output_tokens=120,
            ),
        ]
    )
    return request


async def send_traced_run(demo: Platform) -> str:
    """The traced run's task id, once the run list shows it."""
    async with httpx.AsyncClient(base_url=demo.base) as client:
        sent = await client.post(
            "/v1/traces",
            content=traced_run().SerializeToString(),
            headers={"Content-Type": "application/x-protobuf", "X-Internal-Key": INTERNAL_KEY},
        )
        assert sent.status_code == 200, sent.text
        task_id = f"{TRACE.hex()}-{(1).to_bytes(8, 'big').hex()}"

        async def calls() -> int:
            reply = await client.get(f"/admin/ai/runs/{AGENT}/{task_id}", headers=bearer(role=3))
            return len(reply.json()["model_calls"]) if reply.status_code == 200 else -1

        await eventually(calls, lambda n: n == 3, timeout=30, what="the traced run and its three calls")
    return task_id


async def accessible(page: Page, axe_source: str) -> None:
    found = await serious_violations(page, axe_source)
    assert found == [], pretty(found)


async def fits(page: Page) -> None:
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= NARROW["width"], width


async def test_from_insights_to_an_agents_runs_and_into_a_traced_run_with_its_model_calls(
    demo: Platform, page: Page, axe_source
):
    task_id = await send_traced_run(demo)
    await page.goto(demo.link(role=3, path="/console/insights"))
    await page.get_by_role("link", name=re.compile(rf"^[\d,]+ runs of {AGENT}$")).click()
    await expect(page).to_have_url(re.compile(rf"/console/runs\?agent_id={AGENT}&from=\d{{4}}-"))
    await expect(page.get_by_label("Agent", exact=True)).to_have_value(AGENT)
    table = page.get_by_role("table", name=re.compile("Newest first"))
    rows = table.locator("tbody tr")
    await expect(rows).to_have_count(25)
    # The agent by name, its id beside it.
    assert set(await rows.locator("td:nth-child(2) .agent-ref code").all_inner_texts()) == {AGENT}
    assert set(await rows.locator("td:nth-child(2)").all_inner_texts()) == {f"Dispatch agent {AGENT}"}
    # Newest first: the run sent a moment ago leads, before the demo's older ones.
    await expect(rows.first).to_contain_text("assign_rider")
    await expect(rows.first).to_contain_text("1.2 s")
    await screenshot(page, "runs")
    await accessible(page, axe_source)

    await page.get_by_role("button", name="Next page").click()
    await expect(page.get_by_text(re.compile(r"^Page 2 ·"))).to_be_visible()
    await expect(page).to_have_url(re.compile(r"cursor="))
    await page.get_by_role("button", name="Previous page").click()
    await expect(page.get_by_text(re.compile(r"^Page 1 ·"))).to_be_visible()

    await page.get_by_role("link", name=re.compile(f"run {task_id}$")).click()
    await expect(page).to_have_url(re.compile(rf"/console/runs/{AGENT}/{task_id}$"))
    await expect(page.get_by_role("heading", name=re.compile("assign_rider"))).to_be_visible()
    await expect(page.get_by_text("the calls of this run’s own trace")).to_be_visible()
    calls = page.get_by_role("table", name=re.compile("Oldest first")).locator("tbody tr")
    await expect(calls).to_have_count(3)
    await expect(calls.nth(0)).to_contain_text("claude-sonnet-4-5")
    await expect(calls.nth(0)).to_contain_text("1,830")
    await expect(calls.nth(0)).to_contain_text("400 ms")
    await expect(calls.nth(1)).to_contain_text("claude-haiku-4-5")
    await expect(calls.nth(1)).to_contain_text("not reported")
    await expect(calls.nth(1)).to_contain_text("failed")
    await expect(calls.nth(1)).to_contain_text("overloaded")
    timeline = page.get_by_role("img", name=re.compile("with 3 model calls, 1 failed"))
    await expect(timeline.locator("rect")).to_have_count(4)
    await expect(timeline.locator("rect.span-failed")).to_have_count(1)
    await screenshot(page, "run")
    await accessible(page, axe_source)
    await page.set_viewport_size(NARROW)
    await fits(page)
    await screenshot(page, "run-narrow")
    await accessible(page, axe_source)

    await page.go_back()
    await expect(rows.first).to_contain_text("assign_rider")
    await fits(page)
    await screenshot(page, "runs-narrow")
    await accessible(page, axe_source)


async def test_an_agents_failures_on_insights_open_its_failed_runs(demo: Platform, page: Page, axe_source):
    async with httpx.AsyncClient(base_url=demo.base) as client:
        reply = await client.get("/admin/ai/insights", params={"days": 1}, headers=bearer(role=3))
    failures = next(a["failures"] for a in reply.json()["agents"] if a["agent_id"] == AGENT)
    assert failures > 0, "the demo fails some runs of every reporting agent"
    await page.set_viewport_size(NARROW)
    await page.goto(demo.link(role=4, path="/console/insights"))
    await page.get_by_role("link", name=f"{failures} failed runs of {AGENT}", exact=True).click()
    await expect(page).to_have_url(re.compile(rf"agent_id={AGENT}&status=failed&from="))
    await expect(page.get_by_label("Status", exact=True)).to_have_value("failed")
    rows = page.get_by_role("table", name=re.compile("Newest first")).locator("tbody tr")
    await expect(rows).to_have_count(failures)
    assert set(await rows.locator("td:nth-child(4)").all_inner_texts()) == {"failed"}
    assert set(await rows.locator("td:nth-child(6)").all_inner_texts()) == {"upstream timeout"}
    await fits(page)
    await screenshot(page, "runs-failed-narrow")
    await accessible(page, axe_source)

    await rows.first.get_by_role("link").click()
    await expect(page.get_by_text(re.compile("this agent’s calls that started while the run did"))).to_be_visible()
    # The demo exports each run's model call over OTLP; a failed run's call failed too.
    calls = page.locator("section[aria-labelledby='calls-heading'] tbody tr")
    await expect(calls.first).to_contain_text("timeout")
    await expect(page.get_by_text("none: reported on telemetry.task")).to_be_visible()
    await fits(page)
    await accessible(page, axe_source)


async def test_a_demo_run_opens_with_the_model_call_it_exported(demo: Platform, page: Page, axe_source):
    async with httpx.AsyncClient(base_url=demo.base, headers=bearer(role=3)) as client:
        # The demo's own runs (task ids "<run>-<n>", not a trace), oldest of the list's first page.
        listed = (await client.get("/admin/ai/runs", params={"agent_id": "EXCEPTION_AGENT", "limit": 25})).json()
        run = next(r for r in listed["items"] if r["task_type"] == "tick")

        async def detail() -> dict:
            reply = await client.get(f"/admin/ai/runs/EXCEPTION_AGENT/{run['task_id']}")
            return reply.json() if reply.status_code == 200 else {}

        found = await eventually(
            detail, lambda d: bool(d.get("model_calls")), timeout=30, what="the demo run's model call"
        )
    call = found["model_calls"][0]
    assert found["matched_by"] == "window" and call["model"] in ("claude-sonnet-4-5", "claude-haiku-4-5")
    await page.goto(demo.link(role=3, path=f"/console/runs/EXCEPTION_AGENT/{run['task_id']}"))
    calls = page.get_by_role("region", name="Model calls", exact=True)
    await expect(calls).to_contain_text(call["model"])
    await expect(calls).to_contain_text(f"{call['input_tokens']:,}")
    await expect(calls).to_contain_text("started while the run did")
    await screenshot(page, "demo-run-model-call")
    await accessible(page, axe_source)


async def test_an_agent_that_reports_without_being_registered_is_offered_in_the_filter(
    demo: Platform, page: Page, axe_source
):
    unregistered = "NIGHT_SHIFT_AGENT"
    start = (time.time_ns() // 10**9 - 60) * 10**9
    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    resource_spans.resource.attributes.append(attribute("gen_ai.agent.name", unregistered))
    resource_spans.scope_spans.add().spans.extend(
        [
            trace_pb2.Span(
                trace_id=bytes.fromhex("6c8efff798038103d269b633813fc60d"),
                span_id=(1).to_bytes(8, "big"),
                name="sweep_bookings",
                start_time_unix_nano=start,
                end_time_unix_nano=start + 800 * 10**6,
            )
        ]
    )
    async with httpx.AsyncClient(base_url=demo.base) as client:
        sent = await client.post(
            "/v1/traces",
            content=request.SerializeToString(),
            headers={"Content-Type": "application/x-protobuf", "X-Internal-Key": INTERNAL_KEY},
        )
        assert sent.status_code == 200, sent.text

        async def facets() -> list[str]:
            return (await client.get("/admin/ai/runs/facets", headers=bearer(role=3))).json()["agent_ids"]

        await eventually(facets, lambda agents: unregistered in agents, timeout=30, what="the unregistered agent's run")

    await page.goto(demo.link(role=3, path="/console/runs"))
    agent = page.get_by_label("Agent", exact=True)
    # Offered once each, the registered beside the unregistered.
    await expect(agent.locator(f"option[value='{unregistered}']")).to_have_count(1)
    await expect(agent.locator(f"option[value='{AGENT}']")).to_have_count(1)
    await agent.select_option(unregistered)
    await page.get_by_role("button", name="Apply filters").click()
    await expect(page).to_have_url(re.compile(rf"agent_id={unregistered}"))
    rows = page.get_by_role("table", name=re.compile("Newest first")).locator("tbody tr")
    await expect(rows).to_have_count(1)
    await expect(rows.first).to_contain_text("sweep_bookings")
    await accessible(page, axe_source)


def _ms(text: str) -> float:
    """A duration as the table shows it ("850 ms", "1.2 s") in ms."""
    value, unit = text.replace(",", "").split()
    return float(value) * (1000 if unit == "s" else 60_000 if unit == "min" else 1)


async def test_the_duration_header_orders_every_run_longest_first_across_pages(demo: Platform, page: Page, axe_source):
    async with httpx.AsyncClient(base_url=demo.base) as client:
        reply = await client.get("/admin/ai/runs", params={"order": "slowest", "limit": 1}, headers=bearer(role=3))
    [slowest] = reply.json()["items"]

    await page.goto(demo.link(role=3, path="/console/runs"))
    duration = page.get_by_role("columnheader", name=re.compile(r"^Duration"))
    started = page.get_by_role("columnheader", name=re.compile(r"^Started"))
    await expect(started).to_have_attribute("aria-sort", "descending")
    await duration.get_by_role("button").click()
    await expect(page).to_have_url(re.compile(r"order=slowest"))
    await expect(duration).to_have_attribute("aria-sort", "descending")
    table = page.get_by_role("table", name=re.compile("Longest first"))
    rows = table.locator("tbody tr")
    await expect(rows.first.get_by_role("link")).to_contain_text(f"run {slowest['task_id']}")
    first_page = [_ms(text) for text in await rows.locator("td:nth-child(5)").all_inner_texts()]
    assert first_page == sorted(first_page, reverse=True), first_page
    await accessible(page, axe_source)

    await page.get_by_role("button", name="Next page").click()
    await expect(page.get_by_text(re.compile(r"^Page 2 ·"))).to_be_visible()
    second_page = [_ms(text) for text in await rows.locator("td:nth-child(5)").all_inner_texts()]
    assert second_page == sorted(second_page, reverse=True) and second_page[0] <= first_page[-1]

    await started.get_by_role("button").click()
    await expect(page.get_by_role("table", name=re.compile("Newest first"))).to_be_visible()
    await expect(page.get_by_text(re.compile(r"^Page 1 ·"))).to_be_visible()
    assert "order=" not in page.url.split("?", 1)[-1].replace("order=&", "")
