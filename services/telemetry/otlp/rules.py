"""OTLP spans as telemetry: which span is a task run, which is a model call,
and what each keeps. Pure functions; the codec hands in plain values, never
wire types.

The mapping follows the OpenTelemetry GenAI semantic conventions. A span
becomes a task run when it is a trace's root or an `invoke_agent` span, and a
model call when its `gen_ai.operation.name` names a call to a model; a root
model-call span is both, since for that engine the call is the whole task.
Every other span is ignored, not refused: an instrumented engine sends HTTP
and database spans too, and refusing them would make its exporter report
errors for spans it had every right to send.

Prompt and completion contents are never kept. Only the attributes named in
SPAN_ATTRIBUTES and RESOURCE_ATTRIBUTES are read; the codec drops every other
attribute, every event and every link before a span leaves the gateway, so
message text the conventions allow in `gen_ai.input.messages`,
`gen_ai.output.messages` or events never reaches the stream or the database.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from services.common import guards
from services.telemetry.rules import (
    MAX_ERROR_LENGTH,
    MAX_ID_LENGTH,
    RUN_CLOCK_SKEW,
    MalformedTelemetry,
    ModelCall,
    TaskRun,
)

AttributeValue = str | int | float | bool

OPERATION = "gen_ai.operation.name"
AGENT_NAME = "gen_ai.agent.name"
AGENT_ID = "gen_ai.agent.id"
SERVICE_NAME = "service.name"
PROVIDER = "gen_ai.provider.name"
# The conventions' name for the provider before gen_ai.provider.name.
LEGACY_PROVIDER = "gen_ai.system"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
# Earlier names of the two usage attributes, still sent by older instrumentations.
LEGACY_INPUT_TOKENS = "gen_ai.usage.prompt_tokens"
LEGACY_OUTPUT_TOKENS = "gen_ai.usage.completion_tokens"
ERROR_TYPE = "error.type"

INVOKE_AGENT = "invoke_agent"
MODEL_OPERATIONS = frozenset({"chat", "text_completion", "generate_content", "embeddings"})

# The agent is looked up in this order, on the span and then on its resource.
AGENT_KEYS = (AGENT_NAME, AGENT_ID)
SPAN_ATTRIBUTES = frozenset(
    {
        OPERATION,
        AGENT_NAME,
        AGENT_ID,
        PROVIDER,
        LEGACY_PROVIDER,
        REQUEST_MODEL,
        RESPONSE_MODEL,
        INPUT_TOKENS,
        OUTPUT_TOKENS,
        LEGACY_INPUT_TOKENS,
        LEGACY_OUTPUT_TOKENS,
        ERROR_TYPE,
    }
)
RESOURCE_ATTRIBUTES = frozenset({SERVICE_NAME, AGENT_NAME, AGENT_ID})

TRACE_ID_BYTES = 16
SPAN_ID_BYTES = 8
MAX_MODEL_LENGTH = 256
# Token counts land in a bigint column.
MAX_TOKENS = 2**63 - 1


@dataclass(frozen=True, slots=True)
class Span:
    """One OTLP span, as much of it as the mapping reads."""

    trace_id: bytes
    span_id: bytes
    parent_span_id: bytes
    name: str
    start_ns: int
    end_ns: int
    # The span's status is ERROR.
    error_status: bool
    status_message: str
    attributes: Mapping[str, AttributeValue]
    resource: Mapping[str, AttributeValue]


@dataclass(frozen=True, slots=True)
class Mapped:
    """What one span becomes: a run, a model call, both, or neither (ignored)."""

    run: TaskRun | None = None
    model_call: ModelCall | None = None

    @property
    def ignored(self) -> bool:
        return self.run is None and self.model_call is None


IGNORED = Mapped()


def _text(span: Span, key: str, limit: int) -> str | None:
    """A span's string attribute, stripped and cut to `limit`; None when absent or blank.

    A label longer than its column is cut rather than refused: the span's
    figures matter more than the tail of a model or type name.
    """
    value = span.attributes.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise MalformedTelemetry(key, f"expected a string, got {type(value).__name__}")
    _carriable(key, value)
    return value.strip()[:limit] or None


def _carriable(field: str, value: str) -> None:
    # Postgres text holds no NUL (nor a lone surrogate, which OTLP/JSON's
    # \ud800 could carry); such a row would fail its whole batch.
    guards.text(field, value, max_length=len(value), error=MalformedTelemetry)


def agent_of(span: Span) -> str:
    """gen_ai.agent.name, else gen_ai.agent.id (span first, then resource),
    else the resource's service.name.

    The name is kept whole or the span refused: cutting it could fold two
    agents into one.
    """
    candidates = [(key, False) for key in AGENT_KEYS] + [(key, True) for key in AGENT_KEYS]
    candidates.append((SERVICE_NAME, True))
    for key, on_resource in candidates:
        value = (span.resource if on_resource else span.attributes).get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise MalformedTelemetry(key, f"expected a string, got {type(value).__name__}")
        _carriable(key, value)
        agent = value.strip()
        if not agent:
            continue
        if len(agent) > MAX_ID_LENGTH:
            raise MalformedTelemetry(key, f"the agent name is longer than {MAX_ID_LENGTH} characters")
        # One agent however its name was typed, and never a look-alike of another.
        return guards.identifier(key, agent, max_length=MAX_ID_LENGTH, error=MalformedTelemetry)
    raise MalformedTelemetry("agent", f"names no agent: set {AGENT_NAME}, {AGENT_ID} or the resource's {SERVICE_NAME}")


def _tokens(span: Span, key: str, legacy: str) -> int | None:
    for name in (key, legacy):
        value = span.attributes.get(name)
        if value is None:
            continue
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise MalformedTelemetry(name, f"expected an integer, got {type(value).__name__}")
        if not 0 <= value <= MAX_TOKENS:
            raise MalformedTelemetry(name, f"must be a non-negative token count, got {value}")
        return value
    return None


def _instant(nanos: int) -> datetime:
    seconds, rest = divmod(nanos, 10**9)
    return datetime.fromtimestamp(seconds, tz=UTC).replace(microsecond=rest // 1000)


def map_span(span: Span, *, now: datetime | None = None) -> Mapped:
    """What a span becomes; MalformedTelemetry names the attribute at fault.

    Its times are a run's: from 2000-01-01 and not in the future of `now`
    (this clock unless given), as DESIGN §3 bounds them.

    A span missing an attribute the mapping can do without is kept with that
    part unknown (no usage means no token counts, not a refusal); only what
    identifies it (ids, times, agent) or a value of the wrong kind refuses it.
    """
    if len(span.trace_id) != TRACE_ID_BYTES or not any(span.trace_id):
        raise MalformedTelemetry("trace_id", f"must be {TRACE_ID_BYTES} bytes, not all zero")
    if len(span.span_id) != SPAN_ID_BYTES or not any(span.span_id):
        raise MalformedTelemetry("span_id", f"must be {SPAN_ID_BYTES} bytes, not all zero")
    if span.parent_span_id and len(span.parent_span_id) != SPAN_ID_BYTES:
        raise MalformedTelemetry("parent_span_id", f"must be empty or {SPAN_ID_BYTES} bytes")
    clock = now or datetime.now(UTC)
    for name, nanos in (("start_time_unix_nano", span.start_ns), ("end_time_unix_nano", span.end_ns)):
        if not nanos:
            raise MalformedTelemetry(name, "must be set")
        seconds, rest = divmod(nanos, 10**9)
        guards.epoch_instant(name, seconds, rest, now=clock, future=RUN_CLOCK_SKEW, error=MalformedTelemetry)
    if span.end_ns < span.start_ns:
        raise MalformedTelemetry("end_time_unix_nano", "is before start_time_unix_nano")

    operation = _text(span, OPERATION, MAX_ID_LENGTH)
    is_run = not any(span.parent_span_id) or operation == INVOKE_AGENT
    # Set only for a call to a model: the operation it names, known to be a string.
    model_operation = operation if operation in MODEL_OPERATIONS else None
    if not (is_run or model_operation):
        return IGNORED

    agent = agent_of(span)
    error_type = _text(span, ERROR_TYPE, MAX_ID_LENGTH)
    # The conventions set error.type exactly when the operation failed; some
    # instrumentations set it without marking the span's status.
    status = "failed" if span.error_status or error_type is not None else "succeeded"
    duration_ms = (span.end_ns - span.start_ns) / 1e6
    started = _instant(span.start_ns)
    trace_id, span_id = span.trace_id.hex(), span.span_id.hex()

    run = None
    if is_run:
        _carriable("name", span.name)
        task_type = span.name.strip()[:MAX_ID_LENGTH] or operation
        if task_type is None:
            raise MalformedTelemetry("name", f"is empty and {OPERATION} is not set")
        _carriable("status.message", span.status_message)
        error = (span.status_message.strip() or error_type) if status == "failed" else None
        run = TaskRun(
            agent_id=agent,
            task_id=f"{trace_id}-{span_id}",
            task_type=task_type,
            status=status,
            started_at=started,
            finished_at=_instant(span.end_ns),
            duration_ms=duration_ms,
            error=error[:MAX_ERROR_LENGTH] if error else None,
        )

    model_call = None
    if model_operation is not None:
        model_call = ModelCall(
            trace_id=trace_id,
            span_id=span_id,
            agent_id=agent,
            operation=model_operation,
            provider=_text(span, PROVIDER, MAX_ID_LENGTH) or _text(span, LEGACY_PROVIDER, MAX_ID_LENGTH),
            request_model=_text(span, REQUEST_MODEL, MAX_MODEL_LENGTH),
            response_model=_text(span, RESPONSE_MODEL, MAX_MODEL_LENGTH),
            input_tokens=_tokens(span, INPUT_TOKENS, LEGACY_INPUT_TOKENS),
            output_tokens=_tokens(span, OUTPUT_TOKENS, LEGACY_OUTPUT_TOKENS),
            status=status,
            error_type=error_type,
            started_at=started,
            duration_ms=duration_ms,
        )
    return Mapped(run=run, model_call=model_call)
