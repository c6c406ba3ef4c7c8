"""A GenAI trace from a real instrumentation library: the OpenTelemetry
instrumentation of the anthropic SDK, its model faked at the HTTP layer,
exported by the SDK to the gateway and read back in insights."""

from __future__ import annotations

import asyncio
import json

import anthropic
import httpx
import httpx2
from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.harness import bearer, eventually, running, with_env
from tests.integration.telemetry.otlp_support import live_gateway, published, table_text, tracer_provider
from tests.integration.telemetry.support import broker, counters

PROMPT = "Rider Vikram Shetty (+91 98450 12345) is stuck at Silk Board; reassign booking 1001?"
REPLY = "Reassign 1001 to the next free rider near Koramangala."


def answer(request: httpx2.Request) -> httpx2.Response:
    assert json.loads(request.content)["model"] == "claude-sonnet-4"
    return httpx2.Response(
        200,
        json={
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-20250514",
            "content": [{"type": "text", "text": REPLY}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 321, "output_tokens": 45},
        },
    )


async def test_the_anthropic_instrumentation_reports_a_model_call_without_its_contents(settings, template, database):
    fast = with_env(settings, telemetry_batch_wait_ms=100)
    seen_by_sdk = InMemorySpanExporter()
    async with (
        running(fast, ["telemetry"]),
        live_gateway(fast) as base,
        broker(fast) as (nc, _),
        published(nc) as tapped,
    ):

        def engine() -> None:
            with tracer_provider(base, "triage-agent") as provider:
                provider.add_span_processor(SimpleSpanProcessor(seen_by_sdk))
                instrumentor = AnthropicInstrumentor()
                instrumentor.instrument(tracer_provider=provider)
                try:
                    client = anthropic.Anthropic(
                        api_key="sk-test",
                        base_url="http://model.invalid",
                        http_client=httpx2.Client(transport=httpx2.MockTransport(answer)),
                    )
                    with provider.get_tracer("triage").start_as_current_span("triage_ticket"):
                        client.messages.create(
                            model="claude-sonnet-4", max_tokens=200, messages=[{"role": "user", "content": PROMPT}]
                        )
                finally:
                    instrumentor.uninstrument()

        await asyncio.to_thread(engine)
        await eventually(
            lambda: counters(fast),
            lambda seen: seen["otlp_runs_inserted"] == 1 and seen["model_calls_inserted"] == 1,
            what="the run and the model call",
        )
        async with httpx.AsyncClient(base_url=base) as client:
            body = (await client.get("/admin/ai/insights?days=1", headers=bearer(role=3))).json()
        held = b"".join(tapped)
        assert held, "the gateway published what it took in"

    # The instrumentation did send the conversation: it is in what the SDK exported.
    exported = json.dumps([dict(s.attributes or {}) for s in seen_by_sdk.get_finished_spans()])
    assert "Silk Board" in exported and "Koramangala" in exported
    [agent] = body["agents"]
    assert (agent["agent_id"], agent["runs"], agent["model_calls"]) == ("triage-agent", 1, 1)
    assert (agent["input_tokens"], agent["output_tokens"]) == (321, 45)
    [model] = body["models"]
    assert (model["model"], model["provider"], model["calls"], model["failures"]) == (
        "claude-sonnet-4-20250514",
        "anthropic",
        1,
        0,
    )
    stored = await table_text(template, database)
    for secret in ("Vikram", "98450", "Silk Board", "Koramangala"):
        assert secret not in stored
        assert secret.encode() not in held
