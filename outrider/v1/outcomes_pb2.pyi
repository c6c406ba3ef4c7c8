import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from outrider.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RecordFactsRequest(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: bytes
    def __init__(self, event: _Optional[bytes] = ...) -> None: ...

class RecordFactsResponse(_message.Message):
    __slots__ = ("subject_id", "facts", "changed")
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    FACTS_FIELD_NUMBER: _ClassVar[int]
    CHANGED_FIELD_NUMBER: _ClassVar[int]
    subject_id: str
    facts: bytes
    changed: bool
    def __init__(self, subject_id: _Optional[str] = ..., facts: _Optional[bytes] = ..., changed: _Optional[bool] = ...) -> None: ...

class SweepRequest(_message.Message):
    __slots__ = ("batch_size",)
    BATCH_SIZE_FIELD_NUMBER: _ClassVar[int]
    batch_size: int
    def __init__(self, batch_size: _Optional[int] = ...) -> None: ...

class SweepResponse(_message.Message):
    __slots__ = ("judged", "by_outcome", "scanned")
    class ByOutcomeEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    JUDGED_FIELD_NUMBER: _ClassVar[int]
    BY_OUTCOME_FIELD_NUMBER: _ClassVar[int]
    SCANNED_FIELD_NUMBER: _ClassVar[int]
    judged: int
    by_outcome: _containers.ScalarMap[str, int]
    scanned: int
    def __init__(self, judged: _Optional[int] = ..., by_outcome: _Optional[_Mapping[str, int]] = ..., scanned: _Optional[int] = ...) -> None: ...

class Turn(_message.Message):
    __slots__ = ("role", "text", "ref", "model", "trace_id", "rollout")
    ROLE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    ROLLOUT_FIELD_NUMBER: _ClassVar[int]
    role: str
    text: str
    ref: str
    model: str
    trace_id: str
    rollout: _common_pb2.RolloutArm
    def __init__(self, role: _Optional[str] = ..., text: _Optional[str] = ..., ref: _Optional[str] = ..., model: _Optional[str] = ..., trace_id: _Optional[str] = ..., rollout: _Optional[_Union[_common_pb2.RolloutArm, _Mapping]] = ...) -> None: ...

class SubmitConversationRequest(_message.Message):
    __slots__ = ("conversation_id", "turns", "skill", "decision_type")
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    TURNS_FIELD_NUMBER: _ClassVar[int]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    DECISION_TYPE_FIELD_NUMBER: _ClassVar[int]
    conversation_id: str
    turns: _containers.RepeatedCompositeFieldContainer[Turn]
    skill: str
    decision_type: str
    def __init__(self, conversation_id: _Optional[str] = ..., turns: _Optional[_Iterable[_Union[Turn, _Mapping]]] = ..., skill: _Optional[str] = ..., decision_type: _Optional[str] = ...) -> None: ...

class TurnCredit(_message.Message):
    __slots__ = ("turn_ref", "model", "trace_id", "credit", "confidence", "episode_id", "resolution")
    TURN_REF_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    CREDIT_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    EPISODE_ID_FIELD_NUMBER: _ClassVar[int]
    RESOLUTION_FIELD_NUMBER: _ClassVar[int]
    turn_ref: str
    model: str
    trace_id: str
    credit: str
    confidence: float
    episode_id: int
    resolution: str
    def __init__(self, turn_ref: _Optional[str] = ..., model: _Optional[str] = ..., trace_id: _Optional[str] = ..., credit: _Optional[str] = ..., confidence: _Optional[float] = ..., episode_id: _Optional[int] = ..., resolution: _Optional[str] = ...) -> None: ...

class SubmitConversationResponse(_message.Message):
    __slots__ = ("credits", "deferred")
    CREDITS_FIELD_NUMBER: _ClassVar[int]
    DEFERRED_FIELD_NUMBER: _ClassVar[int]
    credits: _containers.RepeatedCompositeFieldContainer[TurnCredit]
    deferred: int
    def __init__(self, credits: _Optional[_Iterable[_Union[TurnCredit, _Mapping]]] = ..., deferred: _Optional[int] = ...) -> None: ...

class GetConversationMetricsRequest(_message.Message):
    __slots__ = ("model",)
    MODEL_FIELD_NUMBER: _ClassVar[int]
    model: str
    def __init__(self, model: _Optional[str] = ...) -> None: ...

class ConversationMetrics(_message.Message):
    __slots__ = ("episodes", "resolved", "abandoned", "ambiguous", "ongoing", "first_turn_resolutions", "first_turn_resolution_rate", "avg_turns_to_resolution", "churn_rate", "pending", "model")
    EPISODES_FIELD_NUMBER: _ClassVar[int]
    RESOLVED_FIELD_NUMBER: _ClassVar[int]
    ABANDONED_FIELD_NUMBER: _ClassVar[int]
    AMBIGUOUS_FIELD_NUMBER: _ClassVar[int]
    ONGOING_FIELD_NUMBER: _ClassVar[int]
    FIRST_TURN_RESOLUTIONS_FIELD_NUMBER: _ClassVar[int]
    FIRST_TURN_RESOLUTION_RATE_FIELD_NUMBER: _ClassVar[int]
    AVG_TURNS_TO_RESOLUTION_FIELD_NUMBER: _ClassVar[int]
    CHURN_RATE_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    episodes: int
    resolved: int
    abandoned: int
    ambiguous: int
    ongoing: int
    first_turn_resolutions: int
    first_turn_resolution_rate: float
    avg_turns_to_resolution: float
    churn_rate: float
    pending: int
    model: str
    def __init__(self, episodes: _Optional[int] = ..., resolved: _Optional[int] = ..., abandoned: _Optional[int] = ..., ambiguous: _Optional[int] = ..., ongoing: _Optional[int] = ..., first_turn_resolutions: _Optional[int] = ..., first_turn_resolution_rate: _Optional[float] = ..., avg_turns_to_resolution: _Optional[float] = ..., churn_rate: _Optional[float] = ..., pending: _Optional[int] = ..., model: _Optional[str] = ...) -> None: ...

class GetRoutingRequest(_message.Message):
    __slots__ = ("decision_type", "skill", "seed", "candidates")
    DECISION_TYPE_FIELD_NUMBER: _ClassVar[int]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    decision_type: str
    skill: str
    seed: int
    candidates: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, decision_type: _Optional[str] = ..., skill: _Optional[str] = ..., seed: _Optional[int] = ..., candidates: _Optional[_Iterable[str]] = ...) -> None: ...

class ModelArm(_message.Message):
    __slots__ = ("model", "successes", "failures", "alpha", "beta", "posterior_mean", "pick_probability", "credit_successes", "credit_failures", "decision_successes", "decision_failures")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    SUCCESSES_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    ALPHA_FIELD_NUMBER: _ClassVar[int]
    BETA_FIELD_NUMBER: _ClassVar[int]
    POSTERIOR_MEAN_FIELD_NUMBER: _ClassVar[int]
    PICK_PROBABILITY_FIELD_NUMBER: _ClassVar[int]
    CREDIT_SUCCESSES_FIELD_NUMBER: _ClassVar[int]
    CREDIT_FAILURES_FIELD_NUMBER: _ClassVar[int]
    DECISION_SUCCESSES_FIELD_NUMBER: _ClassVar[int]
    DECISION_FAILURES_FIELD_NUMBER: _ClassVar[int]
    model: str
    successes: float
    failures: float
    alpha: float
    beta: float
    posterior_mean: float
    pick_probability: float
    credit_successes: float
    credit_failures: float
    decision_successes: float
    decision_failures: float
    def __init__(self, model: _Optional[str] = ..., successes: _Optional[float] = ..., failures: _Optional[float] = ..., alpha: _Optional[float] = ..., beta: _Optional[float] = ..., posterior_mean: _Optional[float] = ..., pick_probability: _Optional[float] = ..., credit_successes: _Optional[float] = ..., credit_failures: _Optional[float] = ..., decision_successes: _Optional[float] = ..., decision_failures: _Optional[float] = ...) -> None: ...

class Routing(_message.Message):
    __slots__ = ("key", "arms", "pick", "seed")
    KEY_FIELD_NUMBER: _ClassVar[int]
    ARMS_FIELD_NUMBER: _ClassVar[int]
    PICK_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    key: str
    arms: _containers.RepeatedCompositeFieldContainer[ModelArm]
    pick: str
    seed: int
    def __init__(self, key: _Optional[str] = ..., arms: _Optional[_Iterable[_Union[ModelArm, _Mapping]]] = ..., pick: _Optional[str] = ..., seed: _Optional[int] = ...) -> None: ...

class RecommendModelRequest(_message.Message):
    __slots__ = ("decision_type", "skill", "candidates", "seed")
    DECISION_TYPE_FIELD_NUMBER: _ClassVar[int]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    decision_type: str
    skill: str
    candidates: _containers.RepeatedScalarFieldContainer[str]
    seed: int
    def __init__(self, decision_type: _Optional[str] = ..., skill: _Optional[str] = ..., candidates: _Optional[_Iterable[str]] = ..., seed: _Optional[int] = ...) -> None: ...

class RecommendModelResponse(_message.Message):
    __slots__ = ("model", "arms", "seed", "key", "propensity", "propensity_draws")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    ARMS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    PROPENSITY_FIELD_NUMBER: _ClassVar[int]
    PROPENSITY_DRAWS_FIELD_NUMBER: _ClassVar[int]
    model: str
    arms: _containers.RepeatedCompositeFieldContainer[ModelArm]
    seed: int
    key: str
    propensity: float
    propensity_draws: int
    def __init__(self, model: _Optional[str] = ..., arms: _Optional[_Iterable[_Union[ModelArm, _Mapping]]] = ..., seed: _Optional[int] = ..., key: _Optional[str] = ..., propensity: _Optional[float] = ..., propensity_draws: _Optional[int] = ...) -> None: ...

class EvaluateRequest(_message.Message):
    __slots__ = ("decision_type", "model")
    DECISION_TYPE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    decision_type: str
    model: str
    def __init__(self, decision_type: _Optional[str] = ..., model: _Optional[str] = ...) -> None: ...

class Interval(_message.Message):
    __slots__ = ("mean", "low", "high")
    MEAN_FIELD_NUMBER: _ClassVar[int]
    LOW_FIELD_NUMBER: _ClassVar[int]
    HIGH_FIELD_NUMBER: _ClassVar[int]
    mean: float
    low: float
    high: float
    def __init__(self, mean: _Optional[float] = ..., low: _Optional[float] = ..., high: _Optional[float] = ...) -> None: ...

class LoggedPolicy(_message.Message):
    __slots__ = ("decisions", "judged", "with_propensity", "mean", "unknown", "pending")
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    JUDGED_FIELD_NUMBER: _ClassVar[int]
    WITH_PROPENSITY_FIELD_NUMBER: _ClassVar[int]
    MEAN_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    decisions: int
    judged: int
    with_propensity: int
    mean: float
    unknown: int
    pending: int
    def __init__(self, decisions: _Optional[int] = ..., judged: _Optional[int] = ..., with_propensity: _Optional[int] = ..., mean: _Optional[float] = ..., unknown: _Optional[int] = ..., pending: _Optional[int] = ...) -> None: ...

class Evaluation(_message.Message):
    __slots__ = ("decision_type", "model", "method", "estimate", "logged", "matched", "effective_sample_size", "reason", "interval_method")
    DECISION_TYPE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    METHOD_FIELD_NUMBER: _ClassVar[int]
    ESTIMATE_FIELD_NUMBER: _ClassVar[int]
    LOGGED_FIELD_NUMBER: _ClassVar[int]
    MATCHED_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_SAMPLE_SIZE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    INTERVAL_METHOD_FIELD_NUMBER: _ClassVar[int]
    decision_type: str
    model: str
    method: str
    estimate: Interval
    logged: LoggedPolicy
    matched: int
    effective_sample_size: float
    reason: str
    interval_method: str
    def __init__(self, decision_type: _Optional[str] = ..., model: _Optional[str] = ..., method: _Optional[str] = ..., estimate: _Optional[_Union[Interval, _Mapping]] = ..., logged: _Optional[_Union[LoggedPolicy, _Mapping]] = ..., matched: _Optional[int] = ..., effective_sample_size: _Optional[float] = ..., reason: _Optional[str] = ..., interval_method: _Optional[str] = ...) -> None: ...

class GetAutonomyEvidenceRequest(_message.Message):
    __slots__ = ("agent_id", "decision_type")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    DECISION_TYPE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    decision_type: str
    def __init__(self, agent_id: _Optional[str] = ..., decision_type: _Optional[str] = ...) -> None: ...

class ExecutionEvidence(_message.Message):
    __slots__ = ("judged", "successes", "failures", "mean", "low", "high", "unknown", "pending")
    JUDGED_FIELD_NUMBER: _ClassVar[int]
    SUCCESSES_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    MEAN_FIELD_NUMBER: _ClassVar[int]
    LOW_FIELD_NUMBER: _ClassVar[int]
    HIGH_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    judged: int
    successes: int
    failures: int
    mean: float
    low: float
    high: float
    unknown: int
    pending: int
    def __init__(self, judged: _Optional[int] = ..., successes: _Optional[int] = ..., failures: _Optional[int] = ..., mean: _Optional[float] = ..., low: _Optional[float] = ..., high: _Optional[float] = ..., unknown: _Optional[int] = ..., pending: _Optional[int] = ...) -> None: ...

class AutonomyEvidence(_message.Message):
    __slots__ = ("agent_id", "decision_type", "by_execution", "agreement_rate", "recommendation", "reason")
    class ByExecutionEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: ExecutionEvidence
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[ExecutionEvidence, _Mapping]] = ...) -> None: ...
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    DECISION_TYPE_FIELD_NUMBER: _ClassVar[int]
    BY_EXECUTION_FIELD_NUMBER: _ClassVar[int]
    AGREEMENT_RATE_FIELD_NUMBER: _ClassVar[int]
    RECOMMENDATION_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    decision_type: str
    by_execution: _containers.MessageMap[str, ExecutionEvidence]
    agreement_rate: float
    recommendation: str
    reason: str
    def __init__(self, agent_id: _Optional[str] = ..., decision_type: _Optional[str] = ..., by_execution: _Optional[_Mapping[str, ExecutionEvidence]] = ..., agreement_rate: _Optional[float] = ..., recommendation: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class Alert(_message.Message):
    __slots__ = ("id", "rule", "agent_id", "decision_type", "state", "summary", "value", "threshold", "started_at", "resolved_at", "rollout_id")
    ID_FIELD_NUMBER: _ClassVar[int]
    RULE_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    DECISION_TYPE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    RESOLVED_AT_FIELD_NUMBER: _ClassVar[int]
    ROLLOUT_ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    rule: str
    agent_id: str
    decision_type: str
    state: str
    summary: str
    value: float
    threshold: float
    started_at: _timestamp_pb2.Timestamp
    resolved_at: _timestamp_pb2.Timestamp
    rollout_id: str
    def __init__(self, id: _Optional[str] = ..., rule: _Optional[str] = ..., agent_id: _Optional[str] = ..., decision_type: _Optional[str] = ..., state: _Optional[str] = ..., summary: _Optional[str] = ..., value: _Optional[float] = ..., threshold: _Optional[float] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., resolved_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., rollout_id: _Optional[str] = ...) -> None: ...

class ListAlertsRequest(_message.Message):
    __slots__ = ("state", "page")
    STATE_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    state: str
    page: _common_pb2.PageRequest
    def __init__(self, state: _Optional[str] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListAlertsResponse(_message.Message):
    __slots__ = ("items", "next_cursor")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[Alert]
    next_cursor: str
    def __init__(self, items: _Optional[_Iterable[_Union[Alert, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class GetAlertDeliveryRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class AlertDelivery(_message.Message):
    __slots__ = ("delivered", "pending", "failed_attempts")
    DELIVERED_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    FAILED_ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    delivered: int
    pending: int
    failed_attempts: int
    def __init__(self, delivered: _Optional[int] = ..., pending: _Optional[int] = ..., failed_attempts: _Optional[int] = ...) -> None: ...

class EraseSubjectFactsRequest(_message.Message):
    __slots__ = ("subject_id",)
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    subject_id: str
    def __init__(self, subject_id: _Optional[str] = ...) -> None: ...

class EraseSubjectFactsResponse(_message.Message):
    __slots__ = ("facts",)
    FACTS_FIELD_NUMBER: _ClassVar[int]
    facts: int
    def __init__(self, facts: _Optional[int] = ...) -> None: ...
