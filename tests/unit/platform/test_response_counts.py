"""The gateway counts its answers by status class for /metrics: an
unexpected error answered 500 outside every middleware counts as a 5xx, and
the monitoring's own scrapes and probes are left out."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from fastapi.responses import RedirectResponse

from gateway.app import create_app
from gateway.errors import ApiError
from gateway.responses import ResponseCounts
from services.common.settings import load


@pytest.fixture
def app(tmp_path: Path) -> FastAPI:
    app = create_app(
        load({"OUTRIDER_DATA_DIR": str(tmp_path), "OUTRIDER_JWT_SECRET": "j" * 40, "OUTRIDER_INTERNAL_KEY": "k" * 40})
    )

    @app.get("/broken")
    async def broken() -> None:
        raise RuntimeError("a bug")

    @app.get("/away")
    async def away() -> None:
        raise ApiError(503, "UPSTREAM_UNAVAILABLE", "decisions is not answering")

    @app.get("/moved")
    async def moved() -> RedirectResponse:
        return RedirectResponse("/healthz")

    return app


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as http:
        yield http


async def test_answers_are_counted_by_class_and_an_unexpected_error_as_5xx(app, client):
    counts: ResponseCounts = app.state.responses
    assert (await client.get("/broken")).status_code == 500
    assert (await client.get("/away")).status_code == 503
    assert (await client.get("/moved")).status_code == 307
    assert (await client.get("/no-such-route")).status_code == 404
    assert (await client.get("/openapi.json")).status_code == 200
    assert counts.by_class == {"2xx": 1, "3xx": 1, "4xx": 1, "5xx": 2}


async def test_scrapes_and_probes_are_not_counted(app, client):
    counts: ResponseCounts = app.state.responses
    assert (await client.get("/healthz")).status_code == 200
    assert (await client.get("/metrics")).status_code == 401
    assert counts.by_class == {"2xx": 0, "3xx": 0, "4xx": 0, "5xx": 0}


def test_the_exposition_has_one_series_per_class():
    counts = ResponseCounts()
    counts.count(502)
    counts.count(201)
    counts.count(101)  # an upgrade is no answer of a class the alert divides by
    assert counts.exposition().splitlines()[1:] == [
        "# TYPE outrider_http_responses_total counter",
        'outrider_http_responses_total{class="2xx"} 1',
        'outrider_http_responses_total{class="3xx"} 0',
        'outrider_http_responses_total{class="4xx"} 0',
        'outrider_http_responses_total{class="5xx"} 1',
    ]
