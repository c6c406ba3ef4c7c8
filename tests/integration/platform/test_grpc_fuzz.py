"""A mutation fuzzer for every context's gRPC API, as an engine calls it:
each unary method (the streaming ones are left out) gets messages with
random values of each field's wire type (extreme numbers, hostile text,
random bytes, unknown enum values, nested messages and repeated fields),
sent with the engine key.

A method an engine may not call (its context's ACCESS says) answers
PERMISSION_DENIED; the others answer or refuse by name. No message may get
UNKNOWN or INTERNAL (a handler that raised), and every context must still
be live at the end.
"""

from __future__ import annotations

import random
from typing import Any

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor, MethodDescriptor
from google.protobuf.message import Message

from outrider.rpc import keyed_channel
from outrider.v1 import decisions_pb2, outcomes_pb2, playground_pb2, registry_pb2, telemetry_pb2
from services.common.callers import Access
from services.common.settings import CONTEXTS
from services.decisions import server as decisions_server
from services.outcomes import server as outcomes_server
from services.playground import server as playground_server
from services.registry import server as registry_server
from services.telemetry import server as telemetry_server
from tests.harness import INTERNAL_KEY, running
from tests.integration.platform.fuzzing import live
from tests.integration.platform.mutations import EXTREME_INSTANTS, PROTOBUF_TEXT

SEED = 20261204
PER_METHOD = 60
SERVICES = {
    "decisions": (decisions_pb2.DESCRIPTOR.services_by_name["Decisions"], decisions_server.ACCESS),
    "outcomes": (outcomes_pb2.DESCRIPTOR.services_by_name["Outcomes"], outcomes_server.ACCESS),
    "playground": (playground_pb2.DESCRIPTOR.services_by_name["Playground"], playground_server.ACCESS),
    "registry": (registry_pb2.DESCRIPTOR.services_by_name["Registry"], registry_server.ACCESS),
    "telemetry": (telemetry_pb2.DESCRIPTOR.services_by_name["Telemetry"], telemetry_server.ACCESS),
}
# What a handler may answer a bad message: a refusal naming the problem.
REFUSALS = frozenset(
    {
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.ALREADY_EXISTS,
        grpc.StatusCode.OUT_OF_RANGE,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.StatusCode.ABORTED,
    }
)
_INTEGERS = (0, 1, -1, 2**31 - 1, -(2**31), 2**63 - 1, -(2**63))
_UNSIGNED = (0, 1, 2**32 - 1, 2**64 - 1)
_FLOATS = (0.0, -0.0, 1e308, -1e308, 5e-324, float("inf"), float("-inf"), float("nan"))
_FLOATS32 = (0.0, -0.0, 3.4e38, -3.4e38, float("inf"), float("nan"))
_TEXT = (
    *PROTOBUF_TEXT,
    "",
    "EXCEPTION_AGENT",
    "stall_response",
    "x" * 70_000,
    *(t for t in EXTREME_INSTANTS if isinstance(t, str)),
)


def _scalar(rng: random.Random, field: FieldDescriptor) -> Any:
    kind = field.type
    if kind == FieldDescriptor.TYPE_STRING:
        return rng.choice(_TEXT)
    if kind == FieldDescriptor.TYPE_BYTES:
        return rng.randbytes(rng.choice((0, 1, 16, 1000)))
    if kind == FieldDescriptor.TYPE_BOOL:
        return rng.random() < 0.5
    if kind == FieldDescriptor.TYPE_DOUBLE:
        return rng.choice(_FLOATS)
    if kind == FieldDescriptor.TYPE_FLOAT:
        return rng.choice(_FLOATS32)
    if kind == FieldDescriptor.TYPE_ENUM:
        return rng.choice([v.number for v in field.enum_type.values] + [99, -1])
    if kind in (FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_FIXED32):
        return rng.choice(_UNSIGNED[:3])
    if kind in (FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED64):
        return rng.choice(_UNSIGNED)
    if kind in (FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_SINT32, FieldDescriptor.TYPE_SFIXED32):
        return rng.choice(_INTEGERS[:5])
    return rng.choice(_INTEGERS)


def random_message(rng: random.Random, descriptor: Descriptor, depth: int = 0) -> Message:
    """A message of `descriptor` with a random subset of its fields set to random values of their type."""
    message = message_factory.GetMessageClass(descriptor)()
    for field in descriptor.fields:
        if rng.random() < 0.3:
            continue
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            mapping = getattr(message, field.name)
            key_field, value_field = (
                field.message_type.fields_by_name["key"],
                field.message_type.fields_by_name["value"],
            )
            for _ in range(rng.randrange(3)):
                key = _scalar(rng, key_field)
                if value_field.message_type is not None:
                    if depth < 3:
                        mapping[key].CopyFrom(random_message(rng, value_field.message_type, depth + 1))
                else:
                    mapping[key] = _scalar(rng, value_field)
            continue
        repeated = field.is_repeated
        count = rng.choice((0, 1, 3)) if repeated else 1
        for _ in range(count):
            if field.message_type is not None:
                if depth >= 3:
                    break
                value = random_message(rng, field.message_type, depth + 1)
                if repeated:
                    getattr(message, field.name).add().CopyFrom(value)
                else:
                    getattr(message, field.name).CopyFrom(value)
            elif repeated:
                getattr(message, field.name).append(_scalar(rng, field))
            else:
                setattr(message, field.name, _scalar(rng, field))
    return message


async def _call(channel: grpc.aio.Channel, method: MethodDescriptor, request: Message) -> grpc.StatusCode:
    response_class = message_factory.GetMessageClass(method.output_type)
    stub = channel.unary_unary(
        f"/{method.containing_service.full_name}/{method.name}",
        request_serializer=lambda message: message.SerializeToString(),
        response_deserializer=response_class.FromString,
    )
    try:
        await stub(request, timeout=30)
    except grpc.aio.AioRpcError as error:
        return error.code()
    return grpc.StatusCode.OK


async def test_no_mutated_message_breaks_a_context(settings):
    rng = random.Random(SEED)
    failures: list[str] = []
    answers: dict[str, int] = {}
    async with running(settings, CONTEXTS):
        for context, (service, access) in SERVICES.items():
            async with keyed_channel(settings.addr(context), INTERNAL_KEY) as channel:
                for method in service.methods:
                    if method.client_streaming or method.server_streaming:
                        continue
                    if access[method.name] != Access.ENGINE:
                        # Not an engine's to call: refused before its message is read.
                        code = await _call(channel, method, random_message(rng, method.input_type))
                        if code != grpc.StatusCode.PERMISSION_DENIED:
                            failures.append(f"{service.name}.{method.name} answered an engine {code.name}")
                        continue
                    for _ in range(PER_METHOD):
                        request = random_message(rng, method.input_type)
                        code = await _call(channel, method, request)
                        answers[code.name] = answers.get(code.name, 0) + 1
                        if code != grpc.StatusCode.OK and code not in REFUSALS:
                            failures.append(f"{service.name}.{method.name}: {code.name} for {str(request)[:300]!r}")
        for context in SERVICES:
            assert await live(settings.addr(context)), f"{context} is not live"
    assert failures == [], "\n".join(failures[:20])
    # Into the handlers, past the key check: most calls were answered or refused by name.
    assert answers.get("OK", 0) + answers.get("INVALID_ARGUMENT", 0) > sum(answers.values()) / 2, answers
    print(f"gRPC fuzz: {sum(answers.values())} calls, answers {dict(sorted(answers.items()))}")
