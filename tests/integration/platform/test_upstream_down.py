"""A context that is down is named in a 503; its address never reaches the caller."""

from __future__ import annotations

import asyncio
import gc
import logging

import pytest

from tests.harness import bearer, eventually, gateway_client, internal_headers

ROUTES = [
    ("registry", "get", "/admin/ai/agents", None),
    ("decisions", "get", "/admin/ai/decisions", None),
    ("outcomes", "get", "/admin/ai/conversation-metrics", None),
    ("playground", "get", "/admin/ai/playground/runs", None),
    ("telemetry", "get", "/admin/ai/insights", None),
    ("telemetry", "get", "/admin/ai/runs", None),
    # An export reads its first page before its answer starts: a down context is a 503, not a file cut short.
    ("decisions", "get", "/admin/ai/decisions/export", None),
    ("telemetry", "get", "/admin/ai/runs/export", None),
    ("registry", "get", "/admin/ai/audit/export", None),
    ("decisions", "post", "/internal/agent-decisions/similar", {"decision_type": "stall_response", "context": {}}),
    ("outcomes", "post", "/internal/facts", {"subject_id": "b-1", "at": "2026-09-29T10:00:00Z", "status": "x"}),
]


@pytest.mark.parametrize(("context", "method", "path", "body"), ROUTES, ids=[f"{r[1]} {r[2]}" for r in ROUTES])
async def test_a_down_context_is_named_without_its_address(settings, context, method, path, body):
    # Nothing listens at any context's address: every one is down.
    async with gateway_client(settings) as client:
        headers = {**bearer(role=1), **internal_headers()}
        reply = await client.request(method, path, json=body, headers=headers)
    assert reply.status_code == 503, reply.text
    error = reply.json()["error"]
    assert (error["code"], error["details"]) == (
        "UPSTREAM_UNAVAILABLE",
        {"context": context, "request_id": reply.headers["x-request-id"]},
    )
    address = settings.addr(context)
    assert address not in reply.text and address.split(":")[0] not in reply.text


async def test_a_failed_call_leaves_no_caller_behind_to_clean_up_later(settings, caplog):
    """Who a request acts for is set for that request alone; its end, however
    it ends, leaves nothing that fails later in another task."""
    before = asyncio.all_tasks()
    async with gateway_client(settings) as client:
        headers = {**bearer(role=1), **internal_headers()}
        for _, method, path, body in ROUTES:
            assert (await client.request(method, path, json=body, headers=headers)).status_code == 503
    # What a request left unfinished is closed when it is collected, by a task
    # the loop is asked (call_soon_threadsafe) to start for it; a failure there
    # is logged when that task is collected in turn. So: collect; ask the
    # loop for a callback the same way, which runs after those it was asked
    # for before; wait until no task started since the test began is left;
    # collect again.
    gc.collect()
    loop = asyncio.get_running_loop()
    asked_before = loop.create_future()
    loop.call_soon_threadsafe(asked_before.set_result, None)
    await asked_before

    async def left_behind() -> set[asyncio.Task]:
        return asyncio.all_tasks() - before

    await eventually(left_behind, lambda left: not left, what="every task the requests left behind ended")
    gc.collect()
    late = [record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR]
    assert late == []
