import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from outrider.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Decision(_message.Message):
    __slots__ = ("id", "decision_type", "agent_id", "subject_id", "action", "confidence", "reasoning", "model", "decided_at", "outcome", "outcome_reason", "judged_at", "judged_by", "context_json", "similarity", "rollout", "model_propensity", "execution")
    ID_FIELD_NUMBER: _ClassVar[int]
    DECISION_TYPE_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    DECIDED_AT_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_REASON_FIELD_NUMBER: _ClassVar[int]
    JUDGED_AT_FIELD_NUMBER: _ClassVar[int]
    JUDGED_BY_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_JSON_FIELD_NUMBER: _ClassVar[int]
    SIMILARITY_FIELD_NUMBER: _ClassVar[int]
    ROLLOUT_FIELD_NUMBER: _ClassVar[int]
    MODEL_PROPENSITY_FIELD_NUMBER: _ClassVar[int]
    EXECUTION_FIELD_NUMBER: _ClassVar[int]
    id: str
    decision_type: str
    agent_id: str
    subject_id: str
    action: str
    confidence: float
    reasoning: str
    model: str
    decided_at: _timestamp_pb2.Timestamp
    outcome: str
    outcome_reason: str
    judged_at: _timestamp_pb2.Timestamp
    judged_by: str
    context_json: bytes
    similarity: float
    rollout: _common_pb2.RolloutArm
    model_propensity: float
    execution: str
    def __init__(self, id: _Optional[str] = ..., decision_type: _Optional[str] = ..., agent_id: _Optional[str] = ..., subject_id: _Optional[str] = ..., action: _Optional[str] = ..., confidence: _Optional[float] = ..., reasoning: _Optional[str] = ..., model: _Optional[str] = ..., decided_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., outcome: _Optional[str] = ..., outcome_reason: _Optional[str] = ..., judged_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., judged_by: _Optional[str] = ..., context_json: _Optional[bytes] = ..., similarity: _Optional[float] = ..., rollout: _Optional[_Union[_common_pb2.RolloutArm, _Mapping]] = ..., model_propensity: _Optional[float] = ..., execution: _Optional[str] = ...) -> None: ...

class RecordDecisionRequest(_message.Message):
    __slots__ = ("id", "decision_type", "agent_id", "subject_id", "context_json", "action", "confidence", "reasoning", "model", "embedding", "decided_at", "rollout", "model_propensity", "execution")
    ID_FIELD_NUMBER: _ClassVar[int]
    DECISION_TYPE_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_JSON_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_FIELD_NUMBER: _ClassVar[int]
    DECIDED_AT_FIELD_NUMBER: _ClassVar[int]
    ROLLOUT_FIELD_NUMBER: _ClassVar[int]
    MODEL_PROPENSITY_FIELD_NUMBER: _ClassVar[int]
    EXECUTION_FIELD_NUMBER: _ClassVar[int]
    id: str
    decision_type: str
    agent_id: str
    subject_id: str
    context_json: bytes
    action: str
    confidence: float
    reasoning: str
    model: str
    embedding: _containers.RepeatedScalarFieldContainer[float]
    decided_at: _timestamp_pb2.Timestamp
    rollout: _common_pb2.RolloutArm
    model_propensity: float
    execution: str
    def __init__(self, id: _Optional[str] = ..., decision_type: _Optional[str] = ..., agent_id: _Optional[str] = ..., subject_id: _Optional[str] = ..., context_json: _Optional[bytes] = ..., action: _Optional[str] = ..., confidence: _Optional[float] = ..., reasoning: _Optional[str] = ..., model: _Optional[str] = ..., embedding: _Optional[_Iterable[float]] = ..., decided_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., rollout: _Optional[_Union[_common_pb2.RolloutArm, _Mapping]] = ..., model_propensity: _Optional[float] = ..., execution: _Optional[str] = ...) -> None: ...

class RecordDecisionResponse(_message.Message):
    __slots__ = ("id", "created")
    ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    id: str
    created: bool
    def __init__(self, id: _Optional[str] = ..., created: _Optional[bool] = ...) -> None: ...

class RecordDecisionsRequest(_message.Message):
    __slots__ = ("decisions",)
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    decisions: _containers.RepeatedCompositeFieldContainer[RecordDecisionRequest]
    def __init__(self, decisions: _Optional[_Iterable[_Union[RecordDecisionRequest, _Mapping]]] = ...) -> None: ...

class RecordDecisionResult(_message.Message):
    __slots__ = ("id", "created", "error_code", "error_message")
    ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    id: str
    created: bool
    error_code: str
    error_message: str
    def __init__(self, id: _Optional[str] = ..., created: _Optional[bool] = ..., error_code: _Optional[str] = ..., error_message: _Optional[str] = ...) -> None: ...

class RecordDecisionsResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[RecordDecisionResult]
    def __init__(self, results: _Optional[_Iterable[_Union[RecordDecisionResult, _Mapping]]] = ...) -> None: ...

class FindSimilarRequest(_message.Message):
    __slots__ = ("decision_type", "context_json", "embedding", "k")
    DECISION_TYPE_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_JSON_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_FIELD_NUMBER: _ClassVar[int]
    K_FIELD_NUMBER: _ClassVar[int]
    decision_type: str
    context_json: bytes
    embedding: _containers.RepeatedScalarFieldContainer[float]
    k: int
    def __init__(self, decision_type: _Optional[str] = ..., context_json: _Optional[bytes] = ..., embedding: _Optional[_Iterable[float]] = ..., k: _Optional[int] = ...) -> None: ...

class PrecedentQuery(_message.Message):
    __slots__ = ("tag", "search")
    TAG_FIELD_NUMBER: _ClassVar[int]
    SEARCH_FIELD_NUMBER: _ClassVar[int]
    tag: int
    search: FindSimilarRequest
    def __init__(self, tag: _Optional[int] = ..., search: _Optional[_Union[FindSimilarRequest, _Mapping]] = ...) -> None: ...

class PrecedentQueries(_message.Message):
    __slots__ = ("queries",)
    QUERIES_FIELD_NUMBER: _ClassVar[int]
    queries: _containers.RepeatedCompositeFieldContainer[PrecedentQuery]
    def __init__(self, queries: _Optional[_Iterable[_Union[PrecedentQuery, _Mapping]]] = ...) -> None: ...

class PrecedentAnswers(_message.Message):
    __slots__ = ("answers",)
    ANSWERS_FIELD_NUMBER: _ClassVar[int]
    answers: _containers.RepeatedCompositeFieldContainer[PrecedentAnswer]
    def __init__(self, answers: _Optional[_Iterable[_Union[PrecedentAnswer, _Mapping]]] = ...) -> None: ...

class PrecedentAnswer(_message.Message):
    __slots__ = ("tag", "found", "refused")
    TAG_FIELD_NUMBER: _ClassVar[int]
    FOUND_FIELD_NUMBER: _ClassVar[int]
    REFUSED_FIELD_NUMBER: _ClassVar[int]
    tag: int
    found: FindSimilarResponse
    refused: SearchRefusal
    def __init__(self, tag: _Optional[int] = ..., found: _Optional[_Union[FindSimilarResponse, _Mapping]] = ..., refused: _Optional[_Union[SearchRefusal, _Mapping]] = ...) -> None: ...

class SearchRefusal(_message.Message):
    __slots__ = ("status", "code", "message", "details_json")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    DETAILS_JSON_FIELD_NUMBER: _ClassVar[int]
    status: str
    code: str
    message: str
    details_json: bytes
    def __init__(self, status: _Optional[str] = ..., code: _Optional[str] = ..., message: _Optional[str] = ..., details_json: _Optional[bytes] = ...) -> None: ...

class SimilarSummary(_message.Message):
    __slots__ = ("successes", "failures", "success_rate")
    SUCCESSES_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_RATE_FIELD_NUMBER: _ClassVar[int]
    successes: int
    failures: int
    success_rate: float
    def __init__(self, successes: _Optional[int] = ..., failures: _Optional[int] = ..., success_rate: _Optional[float] = ...) -> None: ...

class FindSimilarResponse(_message.Message):
    __slots__ = ("items", "summary")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[Decision]
    summary: SimilarSummary
    def __init__(self, items: _Optional[_Iterable[_Union[Decision, _Mapping]]] = ..., summary: _Optional[_Union[SimilarSummary, _Mapping]] = ...) -> None: ...

class SetOutcomeRequest(_message.Message):
    __slots__ = ("id", "outcome", "reason", "judged_by")
    ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    JUDGED_BY_FIELD_NUMBER: _ClassVar[int]
    id: str
    outcome: str
    reason: str
    judged_by: str
    def __init__(self, id: _Optional[str] = ..., outcome: _Optional[str] = ..., reason: _Optional[str] = ..., judged_by: _Optional[str] = ...) -> None: ...

class ListDecisionsRequest(_message.Message):
    __slots__ = ("decision_type", "outcome", "agent_id", "page", "model", "decided_from", "decided_to", "subject_id", "rollout_id", "model_contains")
    DECISION_TYPE_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    DECIDED_FROM_FIELD_NUMBER: _ClassVar[int]
    DECIDED_TO_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    ROLLOUT_ID_FIELD_NUMBER: _ClassVar[int]
    MODEL_CONTAINS_FIELD_NUMBER: _ClassVar[int]
    decision_type: str
    outcome: str
    agent_id: str
    page: _common_pb2.PageRequest
    model: str
    decided_from: _timestamp_pb2.Timestamp
    decided_to: _timestamp_pb2.Timestamp
    subject_id: str
    rollout_id: str
    model_contains: str
    def __init__(self, decision_type: _Optional[str] = ..., outcome: _Optional[str] = ..., agent_id: _Optional[str] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ..., model: _Optional[str] = ..., decided_from: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., decided_to: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., subject_id: _Optional[str] = ..., rollout_id: _Optional[str] = ..., model_contains: _Optional[str] = ...) -> None: ...

class ListDecisionFacetsRequest(_message.Message):
    __slots__ = ("days",)
    DAYS_FIELD_NUMBER: _ClassVar[int]
    days: int
    def __init__(self, days: _Optional[int] = ...) -> None: ...

class DecisionFacets(_message.Message):
    __slots__ = ("window_days", "decision_types", "agent_ids", "models")
    WINDOW_DAYS_FIELD_NUMBER: _ClassVar[int]
    DECISION_TYPES_FIELD_NUMBER: _ClassVar[int]
    AGENT_IDS_FIELD_NUMBER: _ClassVar[int]
    MODELS_FIELD_NUMBER: _ClassVar[int]
    window_days: int
    decision_types: _containers.RepeatedScalarFieldContainer[str]
    agent_ids: _containers.RepeatedScalarFieldContainer[str]
    models: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, window_days: _Optional[int] = ..., decision_types: _Optional[_Iterable[str]] = ..., agent_ids: _Optional[_Iterable[str]] = ..., models: _Optional[_Iterable[str]] = ...) -> None: ...

class ListDecisionsResponse(_message.Message):
    __slots__ = ("items", "next_cursor")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[Decision]
    next_cursor: str
    def __init__(self, items: _Optional[_Iterable[_Union[Decision, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class GetDecisionRequest(_message.Message):
    __slots__ = ("id", "precedents")
    ID_FIELD_NUMBER: _ClassVar[int]
    PRECEDENTS_FIELD_NUMBER: _ClassVar[int]
    id: str
    precedents: int
    def __init__(self, id: _Optional[str] = ..., precedents: _Optional[int] = ...) -> None: ...

class GetDecisionContextRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class DecisionContext(_message.Message):
    __slots__ = ("decision_id", "context_json", "redacted", "erased_at")
    class RedactedEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_JSON_FIELD_NUMBER: _ClassVar[int]
    REDACTED_FIELD_NUMBER: _ClassVar[int]
    ERASED_AT_FIELD_NUMBER: _ClassVar[int]
    decision_id: str
    context_json: bytes
    redacted: _containers.ScalarMap[str, int]
    erased_at: _timestamp_pb2.Timestamp
    def __init__(self, decision_id: _Optional[str] = ..., context_json: _Optional[bytes] = ..., redacted: _Optional[_Mapping[str, int]] = ..., erased_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class OutcomeChange(_message.Message):
    __slots__ = ("old_outcome", "new_outcome", "reason", "judged_by", "changed_by", "changed_by_email", "judged_at")
    OLD_OUTCOME_FIELD_NUMBER: _ClassVar[int]
    NEW_OUTCOME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    JUDGED_BY_FIELD_NUMBER: _ClassVar[int]
    CHANGED_BY_FIELD_NUMBER: _ClassVar[int]
    CHANGED_BY_EMAIL_FIELD_NUMBER: _ClassVar[int]
    JUDGED_AT_FIELD_NUMBER: _ClassVar[int]
    old_outcome: str
    new_outcome: str
    reason: str
    judged_by: str
    changed_by: str
    changed_by_email: str
    judged_at: _timestamp_pb2.Timestamp
    def __init__(self, old_outcome: _Optional[str] = ..., new_outcome: _Optional[str] = ..., reason: _Optional[str] = ..., judged_by: _Optional[str] = ..., changed_by: _Optional[str] = ..., changed_by_email: _Optional[str] = ..., judged_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class DecisionDetail(_message.Message):
    __slots__ = ("decision", "history", "precedents", "summary")
    DECISION_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    PRECEDENTS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    decision: Decision
    history: _containers.RepeatedCompositeFieldContainer[OutcomeChange]
    precedents: _containers.RepeatedCompositeFieldContainer[Decision]
    summary: SimilarSummary
    def __init__(self, decision: _Optional[_Union[Decision, _Mapping]] = ..., history: _Optional[_Iterable[_Union[OutcomeChange, _Mapping]]] = ..., precedents: _Optional[_Iterable[_Union[Decision, _Mapping]]] = ..., summary: _Optional[_Union[SimilarSummary, _Mapping]] = ...) -> None: ...

class ListPendingRequest(_message.Message):
    __slots__ = ("decided_before", "after_cursor", "limit")
    DECIDED_BEFORE_FIELD_NUMBER: _ClassVar[int]
    AFTER_CURSOR_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    decided_before: _timestamp_pb2.Timestamp
    after_cursor: str
    limit: int
    def __init__(self, decided_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., after_cursor: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class PendingDecision(_message.Message):
    __slots__ = ("id", "decision_type", "subject_id", "decided_at", "model")
    ID_FIELD_NUMBER: _ClassVar[int]
    DECISION_TYPE_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    DECIDED_AT_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    id: str
    decision_type: str
    subject_id: str
    decided_at: _timestamp_pb2.Timestamp
    model: str
    def __init__(self, id: _Optional[str] = ..., decision_type: _Optional[str] = ..., subject_id: _Optional[str] = ..., decided_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., model: _Optional[str] = ...) -> None: ...

class ListPendingResponse(_message.Message):
    __slots__ = ("items", "next_cursor")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[PendingDecision]
    next_cursor: str
    def __init__(self, items: _Optional[_Iterable[_Union[PendingDecision, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class OutcomeVerdict(_message.Message):
    __slots__ = ("id", "outcome", "reason")
    ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    id: str
    outcome: str
    reason: str
    def __init__(self, id: _Optional[str] = ..., outcome: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class SetOutcomesRequest(_message.Message):
    __slots__ = ("verdicts", "judged_by")
    VERDICTS_FIELD_NUMBER: _ClassVar[int]
    JUDGED_BY_FIELD_NUMBER: _ClassVar[int]
    verdicts: _containers.RepeatedCompositeFieldContainer[OutcomeVerdict]
    judged_by: str
    def __init__(self, verdicts: _Optional[_Iterable[_Union[OutcomeVerdict, _Mapping]]] = ..., judged_by: _Optional[str] = ...) -> None: ...

class SetOutcomesResponse(_message.Message):
    __slots__ = ("judged_ids",)
    JUDGED_IDS_FIELD_NUMBER: _ClassVar[int]
    judged_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, judged_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class CountOutcomesRequest(_message.Message):
    __slots__ = ("decided_since", "decided_before")
    DECIDED_SINCE_FIELD_NUMBER: _ClassVar[int]
    DECIDED_BEFORE_FIELD_NUMBER: _ClassVar[int]
    decided_since: _timestamp_pb2.Timestamp
    decided_before: _timestamp_pb2.Timestamp
    def __init__(self, decided_since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., decided_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class OutcomeCount(_message.Message):
    __slots__ = ("decision_type", "outcome", "count", "model")
    DECISION_TYPE_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    decision_type: str
    outcome: str
    count: int
    model: str
    def __init__(self, decision_type: _Optional[str] = ..., outcome: _Optional[str] = ..., count: _Optional[int] = ..., model: _Optional[str] = ...) -> None: ...

class CountOutcomesResponse(_message.Message):
    __slots__ = ("items",)
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[OutcomeCount]
    def __init__(self, items: _Optional[_Iterable[_Union[OutcomeCount, _Mapping]]] = ...) -> None: ...

class Subject(_message.Message):
    __slots__ = ("id", "source", "plan_ref", "cursor")
    ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    PLAN_REF_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    id: str
    source: str
    plan_ref: str
    cursor: str
    def __init__(self, id: _Optional[str] = ..., source: _Optional[str] = ..., plan_ref: _Optional[str] = ..., cursor: _Optional[str] = ...) -> None: ...

class RegisterSubjectRequest(_message.Message):
    __slots__ = ("id", "source", "plan_ref")
    ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    PLAN_REF_FIELD_NUMBER: _ClassVar[int]
    id: str
    source: str
    plan_ref: str
    def __init__(self, id: _Optional[str] = ..., source: _Optional[str] = ..., plan_ref: _Optional[str] = ...) -> None: ...

class HumanDecision(_message.Message):
    __slots__ = ("id", "subject_id", "kind", "body", "author", "provider", "external_id", "written_at", "observed_at", "plan_ref", "step")
    ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_ID_FIELD_NUMBER: _ClassVar[int]
    WRITTEN_AT_FIELD_NUMBER: _ClassVar[int]
    OBSERVED_AT_FIELD_NUMBER: _ClassVar[int]
    PLAN_REF_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    id: str
    subject_id: str
    kind: str
    body: str
    author: str
    provider: str
    external_id: str
    written_at: _timestamp_pb2.Timestamp
    observed_at: _timestamp_pb2.Timestamp
    plan_ref: str
    step: str
    def __init__(self, id: _Optional[str] = ..., subject_id: _Optional[str] = ..., kind: _Optional[str] = ..., body: _Optional[str] = ..., author: _Optional[str] = ..., provider: _Optional[str] = ..., external_id: _Optional[str] = ..., written_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., observed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., plan_ref: _Optional[str] = ..., step: _Optional[str] = ...) -> None: ...

class RecordHumanInputRequest(_message.Message):
    __slots__ = ("provider", "external_id", "subject_id", "author", "at", "body")
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    provider: str
    external_id: str
    subject_id: str
    author: str
    at: _timestamp_pb2.Timestamp
    body: str
    def __init__(self, provider: _Optional[str] = ..., external_id: _Optional[str] = ..., subject_id: _Optional[str] = ..., author: _Optional[str] = ..., at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., body: _Optional[str] = ...) -> None: ...

class RecordHumanInputResponse(_message.Message):
    __slots__ = ("decision", "created")
    DECISION_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    decision: HumanDecision
    created: bool
    def __init__(self, decision: _Optional[_Union[HumanDecision, _Mapping]] = ..., created: _Optional[bool] = ...) -> None: ...

class LeaseSubjectRequest(_message.Message):
    __slots__ = ("subject_id",)
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    subject_id: str
    def __init__(self, subject_id: _Optional[str] = ...) -> None: ...

class LeaseSubjectResponse(_message.Message):
    __slots__ = ("subject_id", "human_decisions", "imported")
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    HUMAN_DECISIONS_FIELD_NUMBER: _ClassVar[int]
    IMPORTED_FIELD_NUMBER: _ClassVar[int]
    subject_id: str
    human_decisions: _containers.RepeatedCompositeFieldContainer[HumanDecision]
    imported: int
    def __init__(self, subject_id: _Optional[str] = ..., human_decisions: _Optional[_Iterable[_Union[HumanDecision, _Mapping]]] = ..., imported: _Optional[int] = ...) -> None: ...

class ListHumanDecisionsRequest(_message.Message):
    __slots__ = ("subject_id", "page")
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    subject_id: str
    page: _common_pb2.PageRequest
    def __init__(self, subject_id: _Optional[str] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListHumanDecisionsResponse(_message.Message):
    __slots__ = ("items", "next_cursor")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[HumanDecision]
    next_cursor: str
    def __init__(self, items: _Optional[_Iterable[_Union[HumanDecision, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class EraseSubjectRequest(_message.Message):
    __slots__ = ("subject_id", "confirm", "reason")
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    CONFIRM_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    subject_id: str
    confirm: str
    reason: str
    def __init__(self, subject_id: _Optional[str] = ..., confirm: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class ErasedCounts(_message.Message):
    __slots__ = ("decisions", "human_inputs", "facts")
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    HUMAN_INPUTS_FIELD_NUMBER: _ClassVar[int]
    FACTS_FIELD_NUMBER: _ClassVar[int]
    decisions: int
    human_inputs: int
    facts: int
    def __init__(self, decisions: _Optional[int] = ..., human_inputs: _Optional[int] = ..., facts: _Optional[int] = ...) -> None: ...

class EraseSubjectResponse(_message.Message):
    __slots__ = ("subject_id", "erased")
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    ERASED_FIELD_NUMBER: _ClassVar[int]
    subject_id: str
    erased: ErasedCounts
    def __init__(self, subject_id: _Optional[str] = ..., erased: _Optional[_Union[ErasedCounts, _Mapping]] = ...) -> None: ...

class CountAgentRefusalsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class AgentRefusals(_message.Message):
    __slots__ = ("decisions",)
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    decisions: int
    def __init__(self, decisions: _Optional[int] = ...) -> None: ...

class CountRolloutArmsRequest(_message.Message):
    __slots__ = ("rollout_ids",)
    ROLLOUT_IDS_FIELD_NUMBER: _ClassVar[int]
    rollout_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, rollout_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class ArmCount(_message.Message):
    __slots__ = ("rollout_id", "arm", "successes", "failures", "unknown", "pending")
    ROLLOUT_ID_FIELD_NUMBER: _ClassVar[int]
    ARM_FIELD_NUMBER: _ClassVar[int]
    SUCCESSES_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    rollout_id: str
    arm: str
    successes: int
    failures: int
    unknown: int
    pending: int
    def __init__(self, rollout_id: _Optional[str] = ..., arm: _Optional[str] = ..., successes: _Optional[int] = ..., failures: _Optional[int] = ..., unknown: _Optional[int] = ..., pending: _Optional[int] = ...) -> None: ...

class CountRolloutArmsResponse(_message.Message):
    __slots__ = ("items",)
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[ArmCount]
    def __init__(self, items: _Optional[_Iterable[_Union[ArmCount, _Mapping]]] = ...) -> None: ...

class WeighDecisionsRequest(_message.Message):
    __slots__ = ("decision_type", "model")
    DECISION_TYPE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    decision_type: str
    model: str
    def __init__(self, decision_type: _Optional[str] = ..., model: _Optional[str] = ...) -> None: ...

class DecisionWeights(_message.Message):
    __slots__ = ("decisions", "judged", "unknown", "pending", "logged_successes", "with_propensity", "matched", "sum_w", "sum_w_r", "sum_w2", "sum_w2_r", "sum_inverse_all")
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    JUDGED_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    LOGGED_SUCCESSES_FIELD_NUMBER: _ClassVar[int]
    WITH_PROPENSITY_FIELD_NUMBER: _ClassVar[int]
    MATCHED_FIELD_NUMBER: _ClassVar[int]
    SUM_W_FIELD_NUMBER: _ClassVar[int]
    SUM_W_R_FIELD_NUMBER: _ClassVar[int]
    SUM_W2_FIELD_NUMBER: _ClassVar[int]
    SUM_W2_R_FIELD_NUMBER: _ClassVar[int]
    SUM_INVERSE_ALL_FIELD_NUMBER: _ClassVar[int]
    decisions: int
    judged: int
    unknown: int
    pending: int
    logged_successes: int
    with_propensity: int
    matched: int
    sum_w: float
    sum_w_r: float
    sum_w2: float
    sum_w2_r: float
    sum_inverse_all: float
    def __init__(self, decisions: _Optional[int] = ..., judged: _Optional[int] = ..., unknown: _Optional[int] = ..., pending: _Optional[int] = ..., logged_successes: _Optional[int] = ..., with_propensity: _Optional[int] = ..., matched: _Optional[int] = ..., sum_w: _Optional[float] = ..., sum_w_r: _Optional[float] = ..., sum_w2: _Optional[float] = ..., sum_w2_r: _Optional[float] = ..., sum_inverse_all: _Optional[float] = ...) -> None: ...

class CountExecutionsRequest(_message.Message):
    __slots__ = ("agent_id", "decision_type")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    DECISION_TYPE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    decision_type: str
    def __init__(self, agent_id: _Optional[str] = ..., decision_type: _Optional[str] = ...) -> None: ...

class ExecutionCount(_message.Message):
    __slots__ = ("decision_type", "execution", "successes", "failures", "unknown", "pending")
    DECISION_TYPE_FIELD_NUMBER: _ClassVar[int]
    EXECUTION_FIELD_NUMBER: _ClassVar[int]
    SUCCESSES_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    decision_type: str
    execution: str
    successes: int
    failures: int
    unknown: int
    pending: int
    def __init__(self, decision_type: _Optional[str] = ..., execution: _Optional[str] = ..., successes: _Optional[int] = ..., failures: _Optional[int] = ..., unknown: _Optional[int] = ..., pending: _Optional[int] = ...) -> None: ...

class CountExecutionsResponse(_message.Message):
    __slots__ = ("items",)
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[ExecutionCount]
    def __init__(self, items: _Optional[_Iterable[_Union[ExecutionCount, _Mapping]]] = ...) -> None: ...

class CountJudgedWindowsRequest(_message.Message):
    __slots__ = ("window",)
    WINDOW_FIELD_NUMBER: _ClassVar[int]
    window: int
    def __init__(self, window: _Optional[int] = ...) -> None: ...

class JudgedWindow(_message.Message):
    __slots__ = ("agent_id", "decision_type", "latest_judged", "latest_successes", "previous_judged", "previous_successes", "latest_decided_at")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    DECISION_TYPE_FIELD_NUMBER: _ClassVar[int]
    LATEST_JUDGED_FIELD_NUMBER: _ClassVar[int]
    LATEST_SUCCESSES_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_JUDGED_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_SUCCESSES_FIELD_NUMBER: _ClassVar[int]
    LATEST_DECIDED_AT_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    decision_type: str
    latest_judged: int
    latest_successes: int
    previous_judged: int
    previous_successes: int
    latest_decided_at: _timestamp_pb2.Timestamp
    def __init__(self, agent_id: _Optional[str] = ..., decision_type: _Optional[str] = ..., latest_judged: _Optional[int] = ..., latest_successes: _Optional[int] = ..., previous_judged: _Optional[int] = ..., previous_successes: _Optional[int] = ..., latest_decided_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CountJudgedWindowsResponse(_message.Message):
    __slots__ = ("items",)
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[JudgedWindow]
    def __init__(self, items: _Optional[_Iterable[_Union[JudgedWindow, _Mapping]]] = ...) -> None: ...

class CountOutcomeSeriesRequest(_message.Message):
    __slots__ = ("days", "bucket_seconds", "decision_type", "start", "end")
    DAYS_FIELD_NUMBER: _ClassVar[int]
    BUCKET_SECONDS_FIELD_NUMBER: _ClassVar[int]
    DECISION_TYPE_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    days: int
    bucket_seconds: int
    decision_type: str
    start: _timestamp_pb2.Timestamp
    end: _timestamp_pb2.Timestamp
    def __init__(self, days: _Optional[int] = ..., bucket_seconds: _Optional[int] = ..., decision_type: _Optional[str] = ..., start: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class OutcomeBucket(_message.Message):
    __slots__ = ("start", "successes", "failures", "unknown", "pending")
    START_FIELD_NUMBER: _ClassVar[int]
    SUCCESSES_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    start: _timestamp_pb2.Timestamp
    successes: int
    failures: int
    unknown: int
    pending: int
    def __init__(self, start: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., successes: _Optional[int] = ..., failures: _Optional[int] = ..., unknown: _Optional[int] = ..., pending: _Optional[int] = ...) -> None: ...

class DecisionTypeSeries(_message.Message):
    __slots__ = ("decision_type", "buckets")
    DECISION_TYPE_FIELD_NUMBER: _ClassVar[int]
    BUCKETS_FIELD_NUMBER: _ClassVar[int]
    decision_type: str
    buckets: _containers.RepeatedCompositeFieldContainer[OutcomeBucket]
    def __init__(self, decision_type: _Optional[str] = ..., buckets: _Optional[_Iterable[_Union[OutcomeBucket, _Mapping]]] = ...) -> None: ...

class OutcomeSeries(_message.Message):
    __slots__ = ("window_days", "bucket_seconds", "start", "end", "types")
    WINDOW_DAYS_FIELD_NUMBER: _ClassVar[int]
    BUCKET_SECONDS_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    TYPES_FIELD_NUMBER: _ClassVar[int]
    window_days: int
    bucket_seconds: int
    start: _timestamp_pb2.Timestamp
    end: _timestamp_pb2.Timestamp
    types: _containers.RepeatedCompositeFieldContainer[DecisionTypeSeries]
    def __init__(self, window_days: _Optional[int] = ..., bucket_seconds: _Optional[int] = ..., start: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., types: _Optional[_Iterable[_Union[DecisionTypeSeries, _Mapping]]] = ...) -> None: ...
