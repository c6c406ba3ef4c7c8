"""Who judged a decision is the verified caller, never a field: an engine's
verdict is signed with its key's name whatever it claims, the sweeper's
only by the platform itself, a person's by the signed-in principal."""

from __future__ import annotations

import uuid

import grpc
import pytest

from outrider.rpc import ERROR_CODE_KEY, channel_with
from outrider.v1 import decisions_pb2, decisions_pb2_grpc
from services.common.callers import SERVICE_KEY_HEADER, Caller, seal
from tests.harness import bearer, engine_channel, gateway_client, internal_headers, running, with_env
from tests.integration.decisions.memory_support import connect, insert_rows, unit_vector

DISPATCH_KEY = "dispatch-engine-key-0123456789abcdefgh"


async def pending(template, database, count: int) -> list[str]:
    conn = await connect(template, database)
    try:
        return [str(i) for i in await insert_rows(conn, [{"embedding": unit_vector(n)} for n in range(count)])]
    finally:
        await conn.close()


async def judges(template, database, decision_id: str) -> tuple[str, list[tuple[str, str]]]:
    """The decision's judge, and every judge of its history with the person named, oldest first."""
    conn = await connect(template, database)
    try:
        judged_by = await conn.fetchval("select judged_by from decisions where id = $1", uuid.UUID(decision_id))
        history = await conn.fetch(
            "select judged_by, changed_by_email from outcome_history where decision_id = $1 order by id",
            uuid.UUID(decision_id),
        )
    finally:
        await conn.close()
    return judged_by, [(row["judged_by"], row["changed_by_email"]) for row in history]


async def test_an_engines_verdict_lands_as_that_engine_whatever_it_claims(settings, template, database):
    settings = with_env(settings, engine_keys={**settings.engine_keys, "dispatch": (DISPATCH_KEY,)})
    claimed_sweeper, claimed_human, over_rest = await pending(template, database, 3)
    async with (
        running(settings, ["decisions"]),
        gateway_client(settings) as client,
        engine_channel(settings, "decisions") as default_channel,
        engine_channel(settings, "decisions", DISPATCH_KEY) as dispatch_channel,
    ):
        as_default = await decisions_pb2_grpc.DecisionsStub(default_channel).SetOutcome(
            decisions_pb2.SetOutcomeRequest(id=claimed_sweeper, outcome="success", judged_by="sweeper")
        )
        as_dispatch = await decisions_pb2_grpc.DecisionsStub(dispatch_channel).SetOutcome(
            decisions_pb2.SetOutcomeRequest(id=claimed_human, outcome="failure", judged_by="human")
        )
        rest = await client.patch(
            f"/internal/agent-decisions/{over_rest}/outcome",
            json={"outcome": "success", "reason": "delivered"},
            headers=internal_headers(DISPATCH_KEY),
        )
        # The engine cannot overrule its own verdict by claiming to be the sweeper or a person.
        with pytest.raises(grpc.aio.AioRpcError) as overruled:
            await decisions_pb2_grpc.DecisionsStub(default_channel).SetOutcome(
                decisions_pb2.SetOutcomeRequest(id=claimed_sweeper, outcome="failure", judged_by="human")
            )
        relabelled = await decisions_pb2_grpc.DecisionsStub(default_channel).SetOutcome(
            decisions_pb2.SetOutcomeRequest(id=claimed_sweeper, outcome="success", judged_by="sweeper")
        )

    assert (as_default.judged_by, as_dispatch.judged_by) == ("engine:default", "engine:dispatch")
    assert rest.status_code == 200, rest.text
    assert rest.json()["judged_by"] == "engine:dispatch"
    assert overruled.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert dict(overruled.value.trailing_metadata() or ())[ERROR_CODE_KEY] == "ALREADY_JUDGED"
    # The same verdict again is a retry: it changes nothing, the judge included.
    assert relabelled.judged_by == "engine:default"
    assert await judges(template, database, claimed_sweeper) == ("engine:default", [("engine:default", "")])
    assert await judges(template, database, claimed_human) == ("engine:dispatch", [("engine:dispatch", "")])
    assert await judges(template, database, over_rest) == ("engine:dispatch", [("engine:dispatch", "")])


async def test_batch_verdicts_are_the_sweepers_only_from_the_platform_itself(settings, template, database):
    swept, forged = await pending(template, database, 2)

    def acting_for_an_engine() -> tuple[tuple[str, str], ...]:
        envelope = seal(Caller(kind="service", engine="dispatch"), settings.service_key)
        return ((SERVICE_KEY_HEADER, settings.service_key), *envelope)

    async with (
        running(settings, ["decisions"]),
        channel_with(settings.addr("decisions"), lambda: ((SERVICE_KEY_HEADER, settings.service_key),)) as platform,
        channel_with(settings.addr("decisions"), acting_for_an_engine) as vouching,
    ):
        judged = await decisions_pb2_grpc.DecisionsStub(platform).SetOutcomes(
            decisions_pb2.SetOutcomesRequest(
                judged_by="human", verdicts=[decisions_pb2.OutcomeVerdict(id=swept, outcome="success")]
            )
        )
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await decisions_pb2_grpc.DecisionsStub(vouching).SetOutcomes(
                decisions_pb2.SetOutcomesRequest(
                    judged_by="sweeper", verdicts=[decisions_pb2.OutcomeVerdict(id=forged, outcome="failure")]
                )
            )

    assert list(judged.judged_ids) == [swept]
    assert await judges(template, database, swept) == ("sweeper", [("sweeper", "")])
    assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert dict(refused.value.trailing_metadata() or ())[ERROR_CODE_KEY] == "SWEEP_VERDICTS_ONLY"
    assert await judges(template, database, forged) == (None, [])


async def test_a_console_rejudge_reads_the_person_who_made_it(settings, template, database):
    [decision_id] = await pending(template, database, 1)
    async with running(settings, ["registry", "decisions"]), gateway_client(settings) as client:
        machine = await client.patch(
            f"/internal/agent-decisions/{decision_id}/outcome", json={"outcome": "failure"}, headers=internal_headers()
        )
        person = await client.patch(
            f"/admin/ai/decisions/{decision_id}/outcome",
            json={"outcome": "success", "reason": "the customer confirmed delivery"},
            headers=bearer(role=1, sub="u-7", email="lead@example.com"),
        )
        detail = await client.get(f"/admin/ai/decisions/{decision_id}", headers=bearer(role=3))

    assert (machine.json()["judged_by"], person.json()["judged_by"]) == ("engine:default", "human")
    history = [(h["judged_by"], h["changed_by"], h["changed_by_email"]) for h in detail.json()["history"]]
    assert history == [("engine:default", None, None), ("human", "u-7", "lead@example.com")]
    assert detail.json()["judged_by"] == "human"
