"""Every RPC of every context against every kind of credential.

The methods come from the service descriptors, not from the access tables,
so a method added to a .proto without a decision on who may call it shows
up here as refused to everyone and fails the table check below.
"""

from __future__ import annotations

import importlib
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import grpc
from google.protobuf import descriptor, descriptor_pool
from google.protobuf.message_factory import GetMessageClass

from outrider.rpc import ERROR_CODE_KEY, channel_with
from outrider.rpc import INTERNAL_KEY_HEADER as ENGINE_KEY_HEADER
from services.common.callers import (
    CALLER_HEADER,
    CALLER_SIGNATURE_HEADER,
    ENVELOPE_TTL_S,
    SERVICE_KEY_HEADER,
    Access,
    Caller,
    Principal,
    seal,
)
from services.common.settings import CONTEXTS
from tests.harness import INTERNAL_KEY, SERVICE_KEY, make_settings, person, running

OTHER_ENGINE_KEY = "second-engine-key-0123456789abcdefgh"
PREVIOUS_SERVICE_KEY = "previous-service-key-0123456789abcdef"
WRONG_KEY = "not-a-key-anyone-holds-0123456789abcd"


E, R, W, S, WP = Access.ENGINE, Access.READ, Access.WRITE, Access.SERVICE, Access.WRITE_OR_PLATFORM

# Who may call what, written out here rather than read from the contexts'
# tables, so that widening a table is a change a reviewer sees in this file.
# Engines reach what an engine does on each decision and nothing else.
POLICY: dict[str, dict[str, Access]] = {
    "registry": {
        "GetSnapshot": E,
        "WatchSnapshot": E,
        "ListAgents": R,
        "GetAgent": R,
        "ListSkills": R,
        "ListTools": R,
        "ListAudit": R,
        "UpdateAgent": WP,
        "CreateSkill": W,
        "UpdateSkill": W,
        "AppendAudit": W,
        "CreateRollout": W,
        "ListRollouts": R,
        "GetRollout": R,
        "PauseRollout": W,
        "ResumeRollout": W,
        "AbortRollout": W,
        "JudgeRollout": S,
    },
    "decisions": {
        "RecordDecision": E,
        "RecordDecisions": E,
        "FindSimilar": E,
        "SearchPrecedents": E,
        "SetOutcome": E,
        "RegisterSubject": E,
        "RecordHumanInput": E,
        "LeaseSubject": E,
        "ListDecisions": R,
        "GetDecision": R,
        "GetDecisionContext": W,
        "ListHumanDecisions": R,
        "ListPending": S,
        "SetOutcomes": S,
        "CountOutcomes": S,
        "EraseSubject": W,
        "CountAgentRefusals": S,
        "CountRolloutArms": S,
        "WeighDecisions": S,
        "CountExecutions": S,
        "CountJudgedWindows": S,
        "CountOutcomeSeries": R,
        "ListDecisionFacets": R,
    },
    "outcomes": {
        "RecordFacts": E,
        "SubmitConversation": E,
        "RecommendModel": E,
        "Sweep": E,
        "GetConversationMetrics": R,
        "GetRouting": R,
        "EraseSubject": W,
        "GetRetention": S,
        "Evaluate": R,
        "GetAutonomyEvidence": R,
        "ListAlerts": R,
        "GetAlertDelivery": S,
    },
    "playground": {"Run": W, "RunStream": W, "ListRuns": R, "GetRun": R, "GetStatus": R, "GetRetention": S},
    "telemetry": {
        "GetInsights": R,
        "GetRunSeries": R,
        "ListRuns": R,
        "ListRunFacets": R,
        "GetRun": R,
        "GetCounters": S,
        "GetIngestState": S,
        "GetRetention": S,
    },
}


def _envelope(who: Principal, key: str, *, now: float | None = None) -> tuple[tuple[str, str], ...]:
    return seal(Caller(kind="service", principal=who), key, now=now)


@dataclass(frozen=True)
class Credential:
    name: str
    metadata: tuple[tuple[str, str], ...]
    # Which kinds of method it should open.
    opens: frozenset[Access]


def credentials() -> list[Credential]:
    everything = frozenset(Access)
    platform = frozenset({Access.ENGINE, Access.READ, Access.SERVICE})
    # The platform acting for nobody also makes its own narrow changes.
    itself = platform | {Access.WRITE_OR_PLATFORM}
    as_service = ((SERVICE_KEY_HEADER, SERVICE_KEY),)
    writer, reader, tenant_writer = person(1), person(3), person(1, tenant=7)
    forged = tuple((name, value) for name, value in _envelope(writer, WRONG_KEY))
    # A reader's genuine signature under a writer's envelope.
    _, reader_signature = (value for _, value in _envelope(reader, SERVICE_KEY))
    promoted = _envelope(writer, WRONG_KEY)[0][1]
    return [
        Credential("no credential", (), frozenset()),
        Credential("wrong engine key", ((ENGINE_KEY_HEADER, WRONG_KEY),), frozenset()),
        Credential("wrong service key", ((SERVICE_KEY_HEADER, WRONG_KEY),), frozenset()),
        Credential("empty keys", ((ENGINE_KEY_HEADER, ""), (SERVICE_KEY_HEADER, "")), frozenset()),
        Credential("engine key", ((ENGINE_KEY_HEADER, INTERNAL_KEY),), frozenset({Access.ENGINE})),
        Credential("a second engine's key", ((ENGINE_KEY_HEADER, OTHER_ENGINE_KEY),), frozenset({Access.ENGINE})),
        Credential(
            "engine key with a writer's envelope",
            ((ENGINE_KEY_HEADER, INTERNAL_KEY), *_envelope(writer, SERVICE_KEY)),
            frozenset({Access.ENGINE}),
        ),
        Credential("service key alone", as_service, itself),
        Credential("previous service key", ((SERVICE_KEY_HEADER, PREVIOUS_SERVICE_KEY),), itself),
        Credential("service key for a reader (role 3)", (*as_service, *_envelope(reader, SERVICE_KEY)), platform),
        Credential("service key for a role 4 reader", (*as_service, *_envelope(person(4), SERVICE_KEY)), platform),
        Credential("service key for a writer (role 1)", (*as_service, *_envelope(writer, SERVICE_KEY)), everything),
        Credential(
            "service key for a tenant's role 1",
            (*as_service, *_envelope(tenant_writer, SERVICE_KEY)),
            frozenset({Access.ENGINE, Access.SERVICE}),
        ),
        Credential(
            "service key for role 2",
            (*as_service, *_envelope(person(2), SERVICE_KEY)),
            frozenset({Access.ENGINE, Access.SERVICE}),
        ),
        Credential("envelope signed with a wrong key", (*as_service, *forged), frozenset()),
        Credential(
            "reader's signature on a writer's envelope",
            (*as_service, (CALLER_HEADER, promoted), (CALLER_SIGNATURE_HEADER, reader_signature)),
            frozenset(),
        ),
        Credential(
            "expired envelope",
            (*as_service, *_envelope(writer, SERVICE_KEY, now=time.time() - ENVELOPE_TTL_S - 5)),
            frozenset(),
        ),
        Credential("envelope without the service key", _envelope(writer, SERVICE_KEY), frozenset()),
    ]


def methods(context: str) -> list[descriptor.MethodDescriptor]:
    server = importlib.import_module(f"services.{context}.server")
    pool = descriptor_pool.Default()
    return [method for full_name in server.SERVICE_NAMES for method in pool.FindServiceByName(full_name).methods]


def test_every_served_method_has_the_access_the_policy_gives_it():
    for context in CONTEXTS:
        served = {method.name for method in methods(context)}
        assert set(POLICY[context]) == served, f"{context}: the policy and the service descriptors differ"
        assert POLICY[context] == importlib.import_module(f"services.{context}.server").ACCESS


def _call(channel: grpc.aio.Channel, method: descriptor.MethodDescriptor) -> Callable[..., object]:
    path = f"/{method.containing_service.full_name}/{method.name}"
    request_type = GetMessageClass(method.input_type)
    response_type = GetMessageClass(method.output_type)
    kwargs = {"request_serializer": request_type.SerializeToString, "response_deserializer": response_type.FromString}
    if method.client_streaming and method.server_streaming:
        return channel.stream_stream(path, **kwargs)
    if method.client_streaming:
        return channel.stream_unary(path, **kwargs)
    if method.server_streaming:
        return channel.unary_stream(path, **kwargs)
    return channel.unary_unary(path, **kwargs)


async def _refused_by_gate(channel: grpc.aio.Channel, method: descriptor.MethodDescriptor) -> bool:
    """Whether the call is turned away at the door; any other answer,
    an error of the handler's own included, means it was let in."""
    request = GetMessageClass(method.input_type)()
    call = _call(channel, method)
    try:
        reply = call(iter([request]), timeout=5) if method.client_streaming else call(request, timeout=5)
        if method.server_streaming:
            async for _ in reply:
                break
        else:
            await reply
    except grpc.aio.AioRpcError as error:
        if error.code() not in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
            return False
        codes = dict(error.trailing_metadata() or ())
        # The gate marks its refusals with the status itself; a handler's
        # own PERMISSION_DENIED (a human verdict from an engine) carries
        # its domain code and counts as admitted.
        return codes.get(ERROR_CODE_KEY) == error.code().name
    return False


async def test_every_rpc_against_every_credential(template, database):
    settings = make_settings(
        template,
        database,
        OUTRIDER_ENGINE_KEYS=f'{{"dispatch": "{INTERNAL_KEY}", "support": "{OTHER_ENGINE_KEY}"}}',
        OUTRIDER_SERVICE_KEY_PREVIOUS=PREVIOUS_SERVICE_KEY,
    )
    wrong: list[str] = []
    tally: Counter[str] = Counter()
    async with running(settings, CONTEXTS):
        for context in CONTEXTS:
            access = POLICY[context]
            for credential in credentials():
                channel = channel_with(settings.addr(context), lambda credential=credential: credential.metadata)
                async with channel:
                    for method in methods(context):
                        expected_open = access[method.name] in credential.opens
                        refused = await _refused_by_gate(channel, method)
                        tally["refused" if refused else "admitted"] += 1
                        if refused == expected_open:
                            wrong.append(
                                f"{context}.{method.name} with {credential.name}: "
                                f"{'refused' if refused else 'admitted'}"
                            )
    assert not wrong, "\n".join(wrong)
    method_count = sum(len(methods(c)) for c in CONTEXTS)
    assert tally.total() == method_count * len(credentials())
    # Both answers occur for every kind of method, so neither side is vacuous.
    assert tally["refused"] > 0 and tally["admitted"] > 0
