"""/metrics says what /readyz says and counts the gateway's 5xx: with every
context serving the scrape reads `outrider_ready 1`; with the registry
stopped it reads 0 and names the registry, and the 503 a registry route
answers meanwhile moves `outrider_http_responses_total{class="5xx"}`."""

from __future__ import annotations

from services.common.nats import StreamLimits, ensure_topology
from services.common.settings import CONTEXTS
from tests.harness import bearer, gateway_client, internal_headers, running
from tests.integration.telemetry.otlp_support import metric_samples
from tests.integration.telemetry.support import broker

FIVE_XX = 'outrider_http_responses_total{class="5xx"}'
TWO_XX = 'outrider_http_responses_total{class="2xx"}'


async def test_readiness_and_5xx_answers_show_in_the_scrape(settings):
    async with running(settings, CONTEXTS) as servers, broker(settings) as (_, js):
        await ensure_topology(js, StreamLimits.of(settings))
        async with gateway_client(settings) as client:
            green = await client.get("/readyz")
            serving = metric_samples((await client.get("/metrics", headers=internal_headers())).text)
            listed = await client.get("/admin/ai/agents", headers=bearer(role=1))
            await servers["registry"].stop(grace=0.5)
            refused = await client.get("/admin/ai/agents", headers=bearer(role=1))
            red = await client.get("/readyz")
            down = metric_samples((await client.get("/metrics", headers=internal_headers())).text)
    assert green.status_code == 200, green.text
    assert serving["outrider_ready"] == 1
    assert {
        context: serving[f'outrider_context_serving{{context="{context}"}}'] for context in CONTEXTS
    } == dict.fromkeys(CONTEXTS, 1)
    assert listed.status_code == 200 and refused.status_code == 503
    assert red.status_code == 503 and red.json()["contexts"]["registry"].startswith("unavailable")
    assert down["outrider_ready"] == 0
    assert down['outrider_context_serving{context="registry"}'] == 0
    assert down['outrider_context_serving{context="decisions"}'] == 1
    # Between the scrapes, one answer of each class: the listing and the
    # refusal. The probes and the scrapes themselves are not counted.
    assert down[TWO_XX] - serving[TWO_XX] == 1
    assert down[FIVE_XX] - serving[FIVE_XX] == 1
