import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from outrider.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetInsightsRequest(_message.Message):
    __slots__ = ("days", "start", "end")
    DAYS_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    days: int
    start: _timestamp_pb2.Timestamp
    end: _timestamp_pb2.Timestamp
    def __init__(self, days: _Optional[int] = ..., start: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class AgentInsight(_message.Message):
    __slots__ = ("agent_id", "runs", "failures", "avg_ms", "p95_ms", "last_run_at", "state", "last_heartbeat_at", "registered", "model_calls", "input_tokens", "output_tokens", "estimated_cost")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    RUNS_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    AVG_MS_FIELD_NUMBER: _ClassVar[int]
    P95_MS_FIELD_NUMBER: _ClassVar[int]
    LAST_RUN_AT_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    LAST_HEARTBEAT_AT_FIELD_NUMBER: _ClassVar[int]
    REGISTERED_FIELD_NUMBER: _ClassVar[int]
    MODEL_CALLS_FIELD_NUMBER: _ClassVar[int]
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    ESTIMATED_COST_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    runs: int
    failures: int
    avg_ms: float
    p95_ms: float
    last_run_at: _timestamp_pb2.Timestamp
    state: str
    last_heartbeat_at: _timestamp_pb2.Timestamp
    registered: bool
    model_calls: int
    input_tokens: int
    output_tokens: int
    estimated_cost: float
    def __init__(self, agent_id: _Optional[str] = ..., runs: _Optional[int] = ..., failures: _Optional[int] = ..., avg_ms: _Optional[float] = ..., p95_ms: _Optional[float] = ..., last_run_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., state: _Optional[str] = ..., last_heartbeat_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., registered: _Optional[bool] = ..., model_calls: _Optional[int] = ..., input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., estimated_cost: _Optional[float] = ...) -> None: ...

class ModelUsage(_message.Message):
    __slots__ = ("agent_id", "model", "provider", "calls", "failures", "input_tokens", "output_tokens", "avg_ms", "p95_ms", "estimated_cost")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    CALLS_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    AVG_MS_FIELD_NUMBER: _ClassVar[int]
    P95_MS_FIELD_NUMBER: _ClassVar[int]
    ESTIMATED_COST_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    model: str
    provider: str
    calls: int
    failures: int
    input_tokens: int
    output_tokens: int
    avg_ms: float
    p95_ms: float
    estimated_cost: float
    def __init__(self, agent_id: _Optional[str] = ..., model: _Optional[str] = ..., provider: _Optional[str] = ..., calls: _Optional[int] = ..., failures: _Optional[int] = ..., input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., avg_ms: _Optional[float] = ..., p95_ms: _Optional[float] = ..., estimated_cost: _Optional[float] = ...) -> None: ...

class DecisionCount(_message.Message):
    __slots__ = ("decision_type", "outcome", "count")
    DECISION_TYPE_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    decision_type: str
    outcome: str
    count: int
    def __init__(self, decision_type: _Optional[str] = ..., outcome: _Optional[str] = ..., count: _Optional[int] = ...) -> None: ...

class Degraded(_message.Message):
    __slots__ = ("source", "reason")
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    source: str
    reason: str
    def __init__(self, source: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class Insights(_message.Message):
    __slots__ = ("window_days", "window_start", "window_end", "receiving", "agents", "decisions", "decisions_available", "degraded", "last_received_at", "models", "prices_configured", "unpriced_models")
    WINDOW_DAYS_FIELD_NUMBER: _ClassVar[int]
    WINDOW_START_FIELD_NUMBER: _ClassVar[int]
    WINDOW_END_FIELD_NUMBER: _ClassVar[int]
    RECEIVING_FIELD_NUMBER: _ClassVar[int]
    AGENTS_FIELD_NUMBER: _ClassVar[int]
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    DECISIONS_AVAILABLE_FIELD_NUMBER: _ClassVar[int]
    DEGRADED_FIELD_NUMBER: _ClassVar[int]
    LAST_RECEIVED_AT_FIELD_NUMBER: _ClassVar[int]
    MODELS_FIELD_NUMBER: _ClassVar[int]
    PRICES_CONFIGURED_FIELD_NUMBER: _ClassVar[int]
    UNPRICED_MODELS_FIELD_NUMBER: _ClassVar[int]
    window_days: int
    window_start: _timestamp_pb2.Timestamp
    window_end: _timestamp_pb2.Timestamp
    receiving: bool
    agents: _containers.RepeatedCompositeFieldContainer[AgentInsight]
    decisions: _containers.RepeatedCompositeFieldContainer[DecisionCount]
    decisions_available: bool
    degraded: _containers.RepeatedCompositeFieldContainer[Degraded]
    last_received_at: _timestamp_pb2.Timestamp
    models: _containers.RepeatedCompositeFieldContainer[ModelUsage]
    prices_configured: bool
    unpriced_models: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, window_days: _Optional[int] = ..., window_start: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., window_end: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., receiving: _Optional[bool] = ..., agents: _Optional[_Iterable[_Union[AgentInsight, _Mapping]]] = ..., decisions: _Optional[_Iterable[_Union[DecisionCount, _Mapping]]] = ..., decisions_available: _Optional[bool] = ..., degraded: _Optional[_Iterable[_Union[Degraded, _Mapping]]] = ..., last_received_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., models: _Optional[_Iterable[_Union[ModelUsage, _Mapping]]] = ..., prices_configured: _Optional[bool] = ..., unpriced_models: _Optional[_Iterable[str]] = ...) -> None: ...

class GetRunSeriesRequest(_message.Message):
    __slots__ = ("days", "start", "end")
    DAYS_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    days: int
    start: _timestamp_pb2.Timestamp
    end: _timestamp_pb2.Timestamp
    def __init__(self, days: _Optional[int] = ..., start: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class SeriesPoint(_message.Message):
    __slots__ = ("start", "runs", "failures", "p50_ms", "p95_ms")
    START_FIELD_NUMBER: _ClassVar[int]
    RUNS_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    P50_MS_FIELD_NUMBER: _ClassVar[int]
    P95_MS_FIELD_NUMBER: _ClassVar[int]
    start: _timestamp_pb2.Timestamp
    runs: int
    failures: int
    p50_ms: float
    p95_ms: float
    def __init__(self, start: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., runs: _Optional[int] = ..., failures: _Optional[int] = ..., p50_ms: _Optional[float] = ..., p95_ms: _Optional[float] = ...) -> None: ...

class UsagePoint(_message.Message):
    __slots__ = ("start", "calls", "reported_calls", "input_tokens", "output_tokens", "estimated_cost")
    START_FIELD_NUMBER: _ClassVar[int]
    CALLS_FIELD_NUMBER: _ClassVar[int]
    REPORTED_CALLS_FIELD_NUMBER: _ClassVar[int]
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    ESTIMATED_COST_FIELD_NUMBER: _ClassVar[int]
    start: _timestamp_pb2.Timestamp
    calls: int
    reported_calls: int
    input_tokens: int
    output_tokens: int
    estimated_cost: float
    def __init__(self, start: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., calls: _Optional[int] = ..., reported_calls: _Optional[int] = ..., input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., estimated_cost: _Optional[float] = ...) -> None: ...

class UsageSeries(_message.Message):
    __slots__ = ("name", "points")
    NAME_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    name: str
    points: _containers.RepeatedCompositeFieldContainer[UsagePoint]
    def __init__(self, name: _Optional[str] = ..., points: _Optional[_Iterable[_Union[UsagePoint, _Mapping]]] = ...) -> None: ...

class AgentSeries(_message.Message):
    __slots__ = ("agent_id", "points")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    points: _containers.RepeatedCompositeFieldContainer[SeriesPoint]
    def __init__(self, agent_id: _Optional[str] = ..., points: _Optional[_Iterable[_Union[SeriesPoint, _Mapping]]] = ...) -> None: ...

class RunSeries(_message.Message):
    __slots__ = ("window_days", "bucket_seconds", "start", "end", "agents", "usage_by_agent", "usage_by_model", "price_source")
    WINDOW_DAYS_FIELD_NUMBER: _ClassVar[int]
    BUCKET_SECONDS_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    AGENTS_FIELD_NUMBER: _ClassVar[int]
    USAGE_BY_AGENT_FIELD_NUMBER: _ClassVar[int]
    USAGE_BY_MODEL_FIELD_NUMBER: _ClassVar[int]
    PRICE_SOURCE_FIELD_NUMBER: _ClassVar[int]
    window_days: int
    bucket_seconds: int
    start: _timestamp_pb2.Timestamp
    end: _timestamp_pb2.Timestamp
    agents: _containers.RepeatedCompositeFieldContainer[AgentSeries]
    usage_by_agent: _containers.RepeatedCompositeFieldContainer[UsageSeries]
    usage_by_model: _containers.RepeatedCompositeFieldContainer[UsageSeries]
    price_source: str
    def __init__(self, window_days: _Optional[int] = ..., bucket_seconds: _Optional[int] = ..., start: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., agents: _Optional[_Iterable[_Union[AgentSeries, _Mapping]]] = ..., usage_by_agent: _Optional[_Iterable[_Union[UsageSeries, _Mapping]]] = ..., usage_by_model: _Optional[_Iterable[_Union[UsageSeries, _Mapping]]] = ..., price_source: _Optional[str] = ...) -> None: ...

class TaskRun(_message.Message):
    __slots__ = ("agent_id", "task_id", "task_type", "status", "started_at", "finished_at", "duration_ms", "error", "trace_id")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_TYPE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    task_id: str
    task_type: str
    status: str
    started_at: _timestamp_pb2.Timestamp
    finished_at: _timestamp_pb2.Timestamp
    duration_ms: float
    error: str
    trace_id: str
    def __init__(self, agent_id: _Optional[str] = ..., task_id: _Optional[str] = ..., task_type: _Optional[str] = ..., status: _Optional[str] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., finished_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., duration_ms: _Optional[float] = ..., error: _Optional[str] = ..., trace_id: _Optional[str] = ...) -> None: ...

class ListTaskRunsRequest(_message.Message):
    __slots__ = ("agent_id", "status", "task_type", "started_from", "started_to", "page", "order")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TASK_TYPE_FIELD_NUMBER: _ClassVar[int]
    STARTED_FROM_FIELD_NUMBER: _ClassVar[int]
    STARTED_TO_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    status: str
    task_type: str
    started_from: _timestamp_pb2.Timestamp
    started_to: _timestamp_pb2.Timestamp
    page: _common_pb2.PageRequest
    order: str
    def __init__(self, agent_id: _Optional[str] = ..., status: _Optional[str] = ..., task_type: _Optional[str] = ..., started_from: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., started_to: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ..., order: _Optional[str] = ...) -> None: ...

class ListTaskRunsResponse(_message.Message):
    __slots__ = ("items", "next_cursor")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[TaskRun]
    next_cursor: str
    def __init__(self, items: _Optional[_Iterable[_Union[TaskRun, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class ListRunFacetsRequest(_message.Message):
    __slots__ = ("days",)
    DAYS_FIELD_NUMBER: _ClassVar[int]
    days: int
    def __init__(self, days: _Optional[int] = ...) -> None: ...

class RunFacets(_message.Message):
    __slots__ = ("window_days", "agent_ids")
    WINDOW_DAYS_FIELD_NUMBER: _ClassVar[int]
    AGENT_IDS_FIELD_NUMBER: _ClassVar[int]
    window_days: int
    agent_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, window_days: _Optional[int] = ..., agent_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class GetTaskRunRequest(_message.Message):
    __slots__ = ("agent_id", "task_id")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    task_id: str
    def __init__(self, agent_id: _Optional[str] = ..., task_id: _Optional[str] = ...) -> None: ...

class ModelCall(_message.Message):
    __slots__ = ("trace_id", "span_id", "operation", "provider", "model", "input_tokens", "output_tokens", "status", "error_type", "started_at", "duration_ms")
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    SPAN_ID_FIELD_NUMBER: _ClassVar[int]
    OPERATION_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ERROR_TYPE_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    trace_id: str
    span_id: str
    operation: str
    provider: str
    model: str
    input_tokens: int
    output_tokens: int
    status: str
    error_type: str
    started_at: _timestamp_pb2.Timestamp
    duration_ms: float
    def __init__(self, trace_id: _Optional[str] = ..., span_id: _Optional[str] = ..., operation: _Optional[str] = ..., provider: _Optional[str] = ..., model: _Optional[str] = ..., input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., status: _Optional[str] = ..., error_type: _Optional[str] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., duration_ms: _Optional[float] = ...) -> None: ...

class TaskRunDetail(_message.Message):
    __slots__ = ("run", "model_calls", "matched_by", "model_calls_truncated")
    RUN_FIELD_NUMBER: _ClassVar[int]
    MODEL_CALLS_FIELD_NUMBER: _ClassVar[int]
    MATCHED_BY_FIELD_NUMBER: _ClassVar[int]
    MODEL_CALLS_TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    run: TaskRun
    model_calls: _containers.RepeatedCompositeFieldContainer[ModelCall]
    matched_by: str
    model_calls_truncated: bool
    def __init__(self, run: _Optional[_Union[TaskRun, _Mapping]] = ..., model_calls: _Optional[_Iterable[_Union[ModelCall, _Mapping]]] = ..., matched_by: _Optional[str] = ..., model_calls_truncated: _Optional[bool] = ...) -> None: ...

class GetCountersRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Counters(_message.Message):
    __slots__ = ("received", "inserted", "duplicates", "malformed", "redelivered", "heartbeats", "dead_lettered", "malformed_by_field", "otlp_received", "otlp_malformed", "otlp_spans_rejected", "otlp_runs_inserted", "model_calls_inserted", "otlp_duplicates", "otlp_unwritable", "agent_refusals", "replies_refused")
    class MalformedByFieldEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    class AgentRefusalsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    RECEIVED_FIELD_NUMBER: _ClassVar[int]
    INSERTED_FIELD_NUMBER: _ClassVar[int]
    DUPLICATES_FIELD_NUMBER: _ClassVar[int]
    MALFORMED_FIELD_NUMBER: _ClassVar[int]
    REDELIVERED_FIELD_NUMBER: _ClassVar[int]
    HEARTBEATS_FIELD_NUMBER: _ClassVar[int]
    DEAD_LETTERED_FIELD_NUMBER: _ClassVar[int]
    MALFORMED_BY_FIELD_FIELD_NUMBER: _ClassVar[int]
    OTLP_RECEIVED_FIELD_NUMBER: _ClassVar[int]
    OTLP_MALFORMED_FIELD_NUMBER: _ClassVar[int]
    OTLP_SPANS_REJECTED_FIELD_NUMBER: _ClassVar[int]
    OTLP_RUNS_INSERTED_FIELD_NUMBER: _ClassVar[int]
    MODEL_CALLS_INSERTED_FIELD_NUMBER: _ClassVar[int]
    OTLP_DUPLICATES_FIELD_NUMBER: _ClassVar[int]
    OTLP_UNWRITABLE_FIELD_NUMBER: _ClassVar[int]
    AGENT_REFUSALS_FIELD_NUMBER: _ClassVar[int]
    REPLIES_REFUSED_FIELD_NUMBER: _ClassVar[int]
    received: int
    inserted: int
    duplicates: int
    malformed: int
    redelivered: int
    heartbeats: int
    dead_lettered: int
    malformed_by_field: _containers.ScalarMap[str, int]
    otlp_received: int
    otlp_malformed: int
    otlp_spans_rejected: int
    otlp_runs_inserted: int
    model_calls_inserted: int
    otlp_duplicates: int
    otlp_unwritable: int
    agent_refusals: _containers.ScalarMap[str, int]
    replies_refused: int
    def __init__(self, received: _Optional[int] = ..., inserted: _Optional[int] = ..., duplicates: _Optional[int] = ..., malformed: _Optional[int] = ..., redelivered: _Optional[int] = ..., heartbeats: _Optional[int] = ..., dead_lettered: _Optional[int] = ..., malformed_by_field: _Optional[_Mapping[str, int]] = ..., otlp_received: _Optional[int] = ..., otlp_malformed: _Optional[int] = ..., otlp_spans_rejected: _Optional[int] = ..., otlp_runs_inserted: _Optional[int] = ..., model_calls_inserted: _Optional[int] = ..., otlp_duplicates: _Optional[int] = ..., otlp_unwritable: _Optional[int] = ..., agent_refusals: _Optional[_Mapping[str, int]] = ..., replies_refused: _Optional[int] = ...) -> None: ...

class GetIngestStateRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ConsumerIngest(_message.Message):
    __slots__ = ("name", "pending", "ack_pending", "seconds_behind")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    ACK_PENDING_FIELD_NUMBER: _ClassVar[int]
    SECONDS_BEHIND_FIELD_NUMBER: _ClassVar[int]
    name: str
    pending: int
    ack_pending: int
    seconds_behind: float
    def __init__(self, name: _Optional[str] = ..., pending: _Optional[int] = ..., ack_pending: _Optional[int] = ..., seconds_behind: _Optional[float] = ...) -> None: ...

class StreamIngest(_message.Message):
    __slots__ = ("name", "fullness", "measure", "messages", "bytes", "consumers")
    NAME_FIELD_NUMBER: _ClassVar[int]
    FULLNESS_FIELD_NUMBER: _ClassVar[int]
    MEASURE_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    CONSUMERS_FIELD_NUMBER: _ClassVar[int]
    name: str
    fullness: float
    measure: str
    messages: int
    bytes: int
    consumers: _containers.RepeatedCompositeFieldContainer[ConsumerIngest]
    def __init__(self, name: _Optional[str] = ..., fullness: _Optional[float] = ..., measure: _Optional[str] = ..., messages: _Optional[int] = ..., bytes: _Optional[int] = ..., consumers: _Optional[_Iterable[_Union[ConsumerIngest, _Mapping]]] = ...) -> None: ...

class IngestState(_message.Message):
    __slots__ = ("streams", "pending_limit")
    STREAMS_FIELD_NUMBER: _ClassVar[int]
    PENDING_LIMIT_FIELD_NUMBER: _ClassVar[int]
    streams: _containers.RepeatedCompositeFieldContainer[StreamIngest]
    pending_limit: int
    def __init__(self, streams: _Optional[_Iterable[_Union[StreamIngest, _Mapping]]] = ..., pending_limit: _Optional[int] = ...) -> None: ...
