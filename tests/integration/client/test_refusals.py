"""Outrider's refusals reach the engine typed, through the real SDK against
the real decisions context and a real human-input feed: the code and
details the context sent, not only the status.

HUMAN_SOURCES_MISCONFIGURED cannot be met here: the context refuses to start
with a source it cannot build, so its class is checked in tests/unit/client.
"""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest

from outrider.client import (
    Conflict,
    HumanSourceConflict,
    LeaseRefused,
    LeaseUnavailable,
    OutriderError,
    SubjectGate,
    Unavailable,
)
from outrider.v1 import decisions_pb2, decisions_pb2_grpc
from tests.harness import INTERNAL_KEY, reserved_port, running, service_channel, with_env
from tests.integration.decisions.human_feed import Feed, serving

SOURCE = "tracker:ops/bookings"
SUBJECT = "BK-1042"


@pytest.fixture
def feed() -> Iterator[Feed]:
    with serving(Feed()) as running_feed:
        yield running_feed


async def lease_refused(settings, feed: Feed) -> LeaseRefused:
    """Register the subject with the feed as its source, lease it once, and
    return the refusal the engine caught."""
    with_feed = with_env(settings, human_sources={SOURCE: {"url": feed.url, "token": feed.token, "timeout_s": 3}})
    async with running(with_feed, ["decisions"]):
        async with service_channel(with_feed, "decisions") as channel:
            await decisions_pb2_grpc.DecisionsStub(channel).RegisterSubject(
                decisions_pb2.RegisterSubjectRequest(id=SUBJECT, source=SOURCE)
            )
        gate = SubjectGate(with_feed.addr("decisions"), INTERNAL_KEY)
        try:
            with pytest.raises(LeaseRefused) as raised:
                await gate.lease(SUBJECT)
        finally:
            await gate.close()
    return raised.value


async def test_a_feed_that_is_down_refuses_the_lease_as_unavailable(settings, feed):
    feed.fail(1, status=503)
    refused = await lease_refused(settings, feed)
    assert type(refused) is LeaseUnavailable and isinstance(refused, Unavailable)
    assert (refused.subject_id, refused.code, refused.status) == (
        SUBJECT,
        "HUMAN_SOURCE_UNAVAILABLE",
        grpc.StatusCode.UNAVAILABLE,
    )
    assert refused.details["source"] == SOURCE
    assert SOURCE in refused.message


async def test_an_input_that_cannot_be_recorded_refuses_the_lease_as_a_conflict(settings, feed):
    feed.add(SUBJECT, None, "reassign to the night shift")
    refused = await lease_refused(settings, feed)
    assert type(refused) is HumanSourceConflict and isinstance(refused, Conflict)
    assert (refused.code, refused.status) == ("HUMAN_INPUT_INVALID", grpc.StatusCode.FAILED_PRECONDITION)
    assert refused.details["field"] == "external_id"


async def test_a_lease_nobody_answers_is_unavailable_and_named_by_its_status():
    gate = SubjectGate(f"127.0.0.1:{reserved_port()}", INTERNAL_KEY, timeout_s=0.5)
    try:
        with pytest.raises(LeaseUnavailable) as raised:
            await gate.lease(SUBJECT)
    finally:
        await gate.close()
    refused = raised.value
    assert isinstance(refused, OutriderError)
    assert refused.status in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
    assert refused.code == refused.status.name
    assert refused.details == {}
