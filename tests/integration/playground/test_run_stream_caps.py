"""Playground runs as Server-Sent Events are capped per person and for
everyone together; past a cap the console is answered 429 naming it,
before any run is admitted, and a stream that ends frees its place."""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any

import httpx

from tests.harness import bearer, eventually, with_env
from tests.integration.playground.scripted import Say
from tests.integration.playground.support import RUN, count_rows, playground, served_gateway, sse_events

STREAM = {"Accept": "text/event-stream"}
BODY = {"agent_id": "CUSTOMER_AGENT", "prompt": "Where is booking 1001?"}


async def started(http: httpx.AsyncClient, streams: AsyncExitStack, sub: str) -> httpx.Response:
    """A run stream of `sub`, kept open by `streams`; read up to its first event when it was admitted."""
    reply = await streams.enter_async_context(
        http.stream("POST", RUN, json=BODY, headers={**bearer(sub=sub), **STREAM})
    )
    if reply.status_code != 200:
        await reply.aread()
        return reply
    # The events are read through one generator kept with the stream: a
    # dropped one is closed by the event loop, and closes the stream with it.
    events = sse_events(reply)
    streams.push_async_callback(events.aclose)
    name, _ = await anext(events)
    assert name == "started"
    return reply


async def test_a_person_past_their_streams_is_refused_by_name_and_a_closed_stream_frees_its_place(
    settings, template, database
):
    settings = with_env(settings, sse_per_person=1, sse_total=2)
    async with playground(settings) as pg, served_gateway(pg.settings) as url:
        # Every run thinks for a while, so its stream stays open meanwhile.
        pg.model.script(Say("Booking 1001 is on its way.", delay_s=5), repeat_last=True)
        async with httpx.AsyncClient(base_url=url, timeout=20) as http, AsyncExitStack() as streams:
            # Opaque subjects: an error's details pass the redactor like any
            # value, and a sub that reads as a name would be shown as a
            # placeholder, which is not what this test is about.
            first = AsyncExitStack()
            priya = await started(http, first, "ops-17")
            priya_again = await started(http, streams, "ops-17")
            arjun = await started(http, streams, "ops-18")
            meera = await started(http, streams, "ops-19")
            refused_admissions = await count_rows(template.raw_dsn(database), "run_admissions")
            await first.aclose()

            async def priya_admitted() -> int:
                reply = await started(http, streams, "ops-17")
                return reply.status_code

            retried = await eventually(priya_admitted, lambda status: status == 200, what="priya's place freed")

    assert priya.status_code == 200 and arjun.status_code == 200
    assert priya_again.status_code == 429 and meera.status_code == 429
    assert envelope(priya_again) == {
        "code": "STREAM_CAP_REACHED",
        "details": {"cap": "per_caller", "stream": "playground run", "limit": 1, "caller": "person:ops-17"},
    }
    assert envelope(meera) == {
        "code": "STREAM_CAP_REACHED",
        "details": {"cap": "total", "stream": "playground run", "limit": 2, "caller": "person:ops-19"},
    }
    # A refused stream reached no playground: only the two admitted runs were counted against anyone.
    assert refused_admissions == 2
    assert retried == 200


def envelope(reply: httpx.Response) -> dict[str, Any]:
    error = reply.json()["error"]
    return {"code": error["code"], "details": error["details"]}
