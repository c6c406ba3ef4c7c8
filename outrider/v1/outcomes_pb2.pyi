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
    __slots__ = ("role", "text", "ref", "model", "trace_id")
    ROLE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    role: str
    text: str
    ref: str
    model: str
    trace_id: str
    def __init__(self, role: _Optional[str] = ..., text: _Optional[str] = ..., ref: _Optional[str] = ..., model: _Optional[str] = ..., trace_id: _Optional[str] = ...) -> None: ...

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
    __slots__ = ("model", "arms", "seed", "key")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    ARMS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    model: str
    arms: _containers.RepeatedCompositeFieldContainer[ModelArm]
    seed: int
    key: str
    def __init__(self, model: _Optional[str] = ..., arms: _Optional[_Iterable[_Union[ModelArm, _Mapping]]] = ..., seed: _Optional[int] = ..., key: _Optional[str] = ...) -> None: ...

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
