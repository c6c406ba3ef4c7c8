"""Every answer carries X-Request-Id, and a 5xx quotes it in its body, so a
failure an operator reports can be found in the gateway's logs."""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway import request_ids
from gateway.app import create_app
from gateway.errors import ApiError
from services.common.settings import load

TOKEN = re.compile(r"[A-Za-z0-9._:-]{1,64}")


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(
        load({"OUTRIDER_DATA_DIR": str(tmp_path), "OUTRIDER_JWT_SECRET": "j" * 40, "OUTRIDER_INTERNAL_KEY": "k" * 40})
    )

    @app.get("/broken")
    async def broken() -> None:
        raise RuntimeError("a bug")

    @app.get("/away")
    async def away() -> None:
        raise ApiError(503, "UPSTREAM_UNAVAILABLE", "decisions is not answering")

    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as http:
        yield http


@given(st.one_of(st.none(), st.text(max_size=80), st.from_regex(TOKEN, fullmatch=True)))
def test_a_callers_id_is_kept_only_when_it_is_a_short_token(given_id):
    chosen = request_ids.chosen_id(given_id)
    assert TOKEN.fullmatch(chosen)
    if given_id is not None and TOKEN.fullmatch(given_id):
        assert chosen == given_id
    else:
        assert chosen != given_id


async def test_every_answer_names_its_request_and_keeps_the_callers_token(client):
    ok = await client.get("/healthz")
    assert TOKEN.fullmatch(ok.headers["x-request-id"])
    assert (await client.get("/healthz")).headers["x-request-id"] != ok.headers["x-request-id"]
    assert (await client.get("/healthz", headers={"X-Request-Id": "trace-7.a:b"})).headers["x-request-id"] == (
        "trace-7.a:b"
    )
    forged = await client.get("/healthz", headers={"X-Request-Id": "x" * 65})
    assert forged.headers["x-request-id"] != "x" * 65
    missing = await client.get("/no-such-route")
    assert missing.status_code == 404 and "request_id" not in missing.json()["error"]["details"]
    assert TOKEN.fullmatch(missing.headers["x-request-id"])


async def test_a_5xx_quotes_the_id_in_its_body_header_and_log_line(client, caplog):
    with caplog.at_level(logging.ERROR, logger="gateway.errors"):
        broken = await client.get("/broken", headers={"X-Request-Id": "support-42"})
    assert broken.status_code == 500
    assert broken.headers["x-request-id"] == "support-42"
    assert broken.json()["error"]["code"] == "INTERNAL"
    assert broken.json()["error"]["details"] == {"request_id": "support-42"}
    assert [record.request_id for record in caplog.records] == ["support-42"]
    away = await client.get("/away")
    assert away.status_code == 503
    assert away.json()["error"]["details"]["request_id"] == away.headers["x-request-id"]
