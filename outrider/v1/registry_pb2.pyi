import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from outrider.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Agent(_message.Message):
    __slots__ = ("id", "name", "runtime", "purpose", "status", "has_autonomy_gate", "autonomous", "model", "skill_count", "tool_count", "wake_on", "class_ref", "status_note", "writes_to", "autonomy_guard")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    RUNTIME_FIELD_NUMBER: _ClassVar[int]
    PURPOSE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    HAS_AUTONOMY_GATE_FIELD_NUMBER: _ClassVar[int]
    AUTONOMOUS_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    SKILL_COUNT_FIELD_NUMBER: _ClassVar[int]
    TOOL_COUNT_FIELD_NUMBER: _ClassVar[int]
    WAKE_ON_FIELD_NUMBER: _ClassVar[int]
    CLASS_REF_FIELD_NUMBER: _ClassVar[int]
    STATUS_NOTE_FIELD_NUMBER: _ClassVar[int]
    WRITES_TO_FIELD_NUMBER: _ClassVar[int]
    AUTONOMY_GUARD_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    runtime: str
    purpose: str
    status: str
    has_autonomy_gate: bool
    autonomous: bool
    model: str
    skill_count: int
    tool_count: int
    wake_on: str
    class_ref: str
    status_note: str
    writes_to: str
    autonomy_guard: bool
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., runtime: _Optional[str] = ..., purpose: _Optional[str] = ..., status: _Optional[str] = ..., has_autonomy_gate: _Optional[bool] = ..., autonomous: _Optional[bool] = ..., model: _Optional[str] = ..., skill_count: _Optional[int] = ..., tool_count: _Optional[int] = ..., wake_on: _Optional[str] = ..., class_ref: _Optional[str] = ..., status_note: _Optional[str] = ..., writes_to: _Optional[str] = ..., autonomy_guard: _Optional[bool] = ...) -> None: ...

class Tool(_message.Message):
    __slots__ = ("name", "description", "kind", "target", "input_schema_json", "requires_confirmation", "implemented_at", "executor", "owner_agents", "requires_confirmation_by_agent", "base_url_key", "http_path")
    class RequiresConfirmationByAgentEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: bool
        def __init__(self, key: _Optional[str] = ..., value: _Optional[bool] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    INPUT_SCHEMA_JSON_FIELD_NUMBER: _ClassVar[int]
    REQUIRES_CONFIRMATION_FIELD_NUMBER: _ClassVar[int]
    IMPLEMENTED_AT_FIELD_NUMBER: _ClassVar[int]
    EXECUTOR_FIELD_NUMBER: _ClassVar[int]
    OWNER_AGENTS_FIELD_NUMBER: _ClassVar[int]
    REQUIRES_CONFIRMATION_BY_AGENT_FIELD_NUMBER: _ClassVar[int]
    BASE_URL_KEY_FIELD_NUMBER: _ClassVar[int]
    HTTP_PATH_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    kind: str
    target: str
    input_schema_json: bytes
    requires_confirmation: bool
    implemented_at: str
    executor: str
    owner_agents: _containers.RepeatedScalarFieldContainer[str]
    requires_confirmation_by_agent: _containers.ScalarMap[str, bool]
    base_url_key: str
    http_path: str
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., kind: _Optional[str] = ..., target: _Optional[str] = ..., input_schema_json: _Optional[bytes] = ..., requires_confirmation: _Optional[bool] = ..., implemented_at: _Optional[str] = ..., executor: _Optional[str] = ..., owner_agents: _Optional[_Iterable[str]] = ..., requires_confirmation_by_agent: _Optional[_Mapping[str, bool]] = ..., base_url_key: _Optional[str] = ..., http_path: _Optional[str] = ...) -> None: ...

class ThresholdSpec(_message.Message):
    __slots__ = ("type", "min", "max", "step", "default", "description")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    MIN_FIELD_NUMBER: _ClassVar[int]
    MAX_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    type: str
    min: float
    max: float
    step: float
    default: float
    description: str
    def __init__(self, type: _Optional[str] = ..., min: _Optional[float] = ..., max: _Optional[float] = ..., step: _Optional[float] = ..., default: _Optional[float] = ..., description: _Optional[str] = ...) -> None: ...

class Skill(_message.Message):
    __slots__ = ("id", "agent_id", "title", "category", "description", "sample_prompt", "source", "enabled", "thresholds", "thresholds_schema", "version", "tool_names", "disabled_reason", "updated_by", "updated_at")
    class ThresholdsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    class ThresholdsSchemaEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: ThresholdSpec
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[ThresholdSpec, _Mapping]] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_PROMPT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    THRESHOLDS_FIELD_NUMBER: _ClassVar[int]
    THRESHOLDS_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAMES_FIELD_NUMBER: _ClassVar[int]
    DISABLED_REASON_FIELD_NUMBER: _ClassVar[int]
    UPDATED_BY_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    agent_id: str
    title: str
    category: str
    description: str
    sample_prompt: str
    source: str
    enabled: bool
    thresholds: _containers.ScalarMap[str, float]
    thresholds_schema: _containers.MessageMap[str, ThresholdSpec]
    version: int
    tool_names: _containers.RepeatedScalarFieldContainer[str]
    disabled_reason: str
    updated_by: str
    updated_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., agent_id: _Optional[str] = ..., title: _Optional[str] = ..., category: _Optional[str] = ..., description: _Optional[str] = ..., sample_prompt: _Optional[str] = ..., source: _Optional[str] = ..., enabled: _Optional[bool] = ..., thresholds: _Optional[_Mapping[str, float]] = ..., thresholds_schema: _Optional[_Mapping[str, ThresholdSpec]] = ..., version: _Optional[int] = ..., tool_names: _Optional[_Iterable[str]] = ..., disabled_reason: _Optional[str] = ..., updated_by: _Optional[str] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListAgentsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListAgentsResponse(_message.Message):
    __slots__ = ("items",)
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[Agent]
    def __init__(self, items: _Optional[_Iterable[_Union[Agent, _Mapping]]] = ...) -> None: ...

class GetAgentRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class Surface(_message.Message):
    __slots__ = ("id", "name", "path", "description", "agent_ids")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    AGENT_IDS_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    path: str
    description: str
    agent_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., path: _Optional[str] = ..., description: _Optional[str] = ..., agent_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class AgentDetail(_message.Message):
    __slots__ = ("agent", "skills", "tools", "surfaces")
    AGENT_FIELD_NUMBER: _ClassVar[int]
    SKILLS_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    SURFACES_FIELD_NUMBER: _ClassVar[int]
    agent: Agent
    skills: _containers.RepeatedCompositeFieldContainer[Skill]
    tools: _containers.RepeatedCompositeFieldContainer[Tool]
    surfaces: _containers.RepeatedCompositeFieldContainer[Surface]
    def __init__(self, agent: _Optional[_Union[Agent, _Mapping]] = ..., skills: _Optional[_Iterable[_Union[Skill, _Mapping]]] = ..., tools: _Optional[_Iterable[_Union[Tool, _Mapping]]] = ..., surfaces: _Optional[_Iterable[_Union[Surface, _Mapping]]] = ...) -> None: ...

class UpdateAgentRequest(_message.Message):
    __slots__ = ("id", "autonomous", "model", "autonomy_guard", "confirm", "unknown_fields")
    ID_FIELD_NUMBER: _ClassVar[int]
    AUTONOMOUS_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    AUTONOMY_GUARD_FIELD_NUMBER: _ClassVar[int]
    CONFIRM_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELDS_FIELD_NUMBER: _ClassVar[int]
    id: str
    autonomous: bool
    model: str
    autonomy_guard: bool
    confirm: str
    unknown_fields: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, id: _Optional[str] = ..., autonomous: _Optional[bool] = ..., model: _Optional[str] = ..., autonomy_guard: _Optional[bool] = ..., confirm: _Optional[str] = ..., unknown_fields: _Optional[_Iterable[str]] = ...) -> None: ...

class ListSkillsRequest(_message.Message):
    __slots__ = ("agent_id",)
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    def __init__(self, agent_id: _Optional[str] = ...) -> None: ...

class ListSkillsResponse(_message.Message):
    __slots__ = ("items",)
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[Skill]
    def __init__(self, items: _Optional[_Iterable[_Union[Skill, _Mapping]]] = ...) -> None: ...

class CreateSkillRequest(_message.Message):
    __slots__ = ("id", "agent_id", "title", "category", "description", "sample_prompt", "tool_names", "enabled", "thresholds_schema_json", "thresholds_json", "unknown_fields")
    ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_PROMPT_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAMES_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    THRESHOLDS_SCHEMA_JSON_FIELD_NUMBER: _ClassVar[int]
    THRESHOLDS_JSON_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELDS_FIELD_NUMBER: _ClassVar[int]
    id: str
    agent_id: str
    title: str
    category: str
    description: str
    sample_prompt: str
    tool_names: _containers.RepeatedScalarFieldContainer[str]
    enabled: bool
    thresholds_schema_json: bytes
    thresholds_json: bytes
    unknown_fields: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, id: _Optional[str] = ..., agent_id: _Optional[str] = ..., title: _Optional[str] = ..., category: _Optional[str] = ..., description: _Optional[str] = ..., sample_prompt: _Optional[str] = ..., tool_names: _Optional[_Iterable[str]] = ..., enabled: _Optional[bool] = ..., thresholds_schema_json: _Optional[bytes] = ..., thresholds_json: _Optional[bytes] = ..., unknown_fields: _Optional[_Iterable[str]] = ...) -> None: ...

class UpdateSkillRequest(_message.Message):
    __slots__ = ("id", "enabled", "expected_version", "thresholds_json", "unknown_fields")
    ID_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    THRESHOLDS_JSON_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELDS_FIELD_NUMBER: _ClassVar[int]
    id: str
    enabled: bool
    expected_version: int
    thresholds_json: bytes
    unknown_fields: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, id: _Optional[str] = ..., enabled: _Optional[bool] = ..., expected_version: _Optional[int] = ..., thresholds_json: _Optional[bytes] = ..., unknown_fields: _Optional[_Iterable[str]] = ...) -> None: ...

class ListToolsRequest(_message.Message):
    __slots__ = ("kind",)
    KIND_FIELD_NUMBER: _ClassVar[int]
    kind: str
    def __init__(self, kind: _Optional[str] = ...) -> None: ...

class ListToolsResponse(_message.Message):
    __slots__ = ("items",)
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[Tool]
    def __init__(self, items: _Optional[_Iterable[_Union[Tool, _Mapping]]] = ...) -> None: ...

class AuditRow(_message.Message):
    __slots__ = ("id", "entity", "entity_id", "field", "old_json", "new_json", "changed_by", "changed_by_email", "changed_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    ENTITY_FIELD_NUMBER: _ClassVar[int]
    ENTITY_ID_FIELD_NUMBER: _ClassVar[int]
    FIELD_FIELD_NUMBER: _ClassVar[int]
    OLD_JSON_FIELD_NUMBER: _ClassVar[int]
    NEW_JSON_FIELD_NUMBER: _ClassVar[int]
    CHANGED_BY_FIELD_NUMBER: _ClassVar[int]
    CHANGED_BY_EMAIL_FIELD_NUMBER: _ClassVar[int]
    CHANGED_AT_FIELD_NUMBER: _ClassVar[int]
    id: int
    entity: str
    entity_id: str
    field: str
    old_json: bytes
    new_json: bytes
    changed_by: str
    changed_by_email: str
    changed_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[int] = ..., entity: _Optional[str] = ..., entity_id: _Optional[str] = ..., field: _Optional[str] = ..., old_json: _Optional[bytes] = ..., new_json: _Optional[bytes] = ..., changed_by: _Optional[str] = ..., changed_by_email: _Optional[str] = ..., changed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListAuditRequest(_message.Message):
    __slots__ = ("entity", "entity_id", "page", "actor", "changed_from", "changed_to")
    ENTITY_FIELD_NUMBER: _ClassVar[int]
    ENTITY_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    CHANGED_FROM_FIELD_NUMBER: _ClassVar[int]
    CHANGED_TO_FIELD_NUMBER: _ClassVar[int]
    entity: str
    entity_id: str
    page: _common_pb2.PageRequest
    actor: str
    changed_from: _timestamp_pb2.Timestamp
    changed_to: _timestamp_pb2.Timestamp
    def __init__(self, entity: _Optional[str] = ..., entity_id: _Optional[str] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ..., actor: _Optional[str] = ..., changed_from: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., changed_to: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListAuditResponse(_message.Message):
    __slots__ = ("items", "next_cursor")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[AuditRow]
    next_cursor: str
    def __init__(self, items: _Optional[_Iterable[_Union[AuditRow, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class AppendAuditRequest(_message.Message):
    __slots__ = ("request_id", "entity", "entity_id", "field", "old_json", "new_json")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ENTITY_FIELD_NUMBER: _ClassVar[int]
    ENTITY_ID_FIELD_NUMBER: _ClassVar[int]
    FIELD_FIELD_NUMBER: _ClassVar[int]
    OLD_JSON_FIELD_NUMBER: _ClassVar[int]
    NEW_JSON_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    entity: str
    entity_id: str
    field: str
    old_json: bytes
    new_json: bytes
    def __init__(self, request_id: _Optional[str] = ..., entity: _Optional[str] = ..., entity_id: _Optional[str] = ..., field: _Optional[str] = ..., old_json: _Optional[bytes] = ..., new_json: _Optional[bytes] = ...) -> None: ...

class Snapshot(_message.Message):
    __slots__ = ("etag", "document")
    ETAG_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_FIELD_NUMBER: _ClassVar[int]
    etag: str
    document: bytes
    def __init__(self, etag: _Optional[str] = ..., document: _Optional[bytes] = ...) -> None: ...

class GetSnapshotRequest(_message.Message):
    __slots__ = ("if_none_match",)
    IF_NONE_MATCH_FIELD_NUMBER: _ClassVar[int]
    if_none_match: str
    def __init__(self, if_none_match: _Optional[str] = ...) -> None: ...

class GetSnapshotResponse(_message.Message):
    __slots__ = ("not_modified", "snapshot")
    NOT_MODIFIED_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    not_modified: bool
    snapshot: Snapshot
    def __init__(self, not_modified: _Optional[bool] = ..., snapshot: _Optional[_Union[Snapshot, _Mapping]] = ...) -> None: ...

class WatchSnapshotRequest(_message.Message):
    __slots__ = ("if_none_match",)
    IF_NONE_MATCH_FIELD_NUMBER: _ClassVar[int]
    if_none_match: str
    def __init__(self, if_none_match: _Optional[str] = ...) -> None: ...

class RolloutGuard(_message.Message):
    __slots__ = ("max_drop", "confidence", "min_judged")
    MAX_DROP_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    MIN_JUDGED_FIELD_NUMBER: _ClassVar[int]
    max_drop: float
    confidence: float
    min_judged: int
    def __init__(self, max_drop: _Optional[float] = ..., confidence: _Optional[float] = ..., min_judged: _Optional[int] = ...) -> None: ...

class ArmEvidence(_message.Message):
    __slots__ = ("judged", "successes", "failures", "unknown", "pending", "mean", "low", "high")
    JUDGED_FIELD_NUMBER: _ClassVar[int]
    SUCCESSES_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    MEAN_FIELD_NUMBER: _ClassVar[int]
    LOW_FIELD_NUMBER: _ClassVar[int]
    HIGH_FIELD_NUMBER: _ClassVar[int]
    judged: float
    successes: float
    failures: float
    unknown: int
    pending: int
    mean: float
    low: float
    high: float
    def __init__(self, judged: _Optional[float] = ..., successes: _Optional[float] = ..., failures: _Optional[float] = ..., unknown: _Optional[int] = ..., pending: _Optional[int] = ..., mean: _Optional[float] = ..., low: _Optional[float] = ..., high: _Optional[float] = ...) -> None: ...

class RolloutEvent(_message.Message):
    __slots__ = ("event", "percent", "at", "by", "p_harm", "reason")
    EVENT_FIELD_NUMBER: _ClassVar[int]
    PERCENT_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    BY_FIELD_NUMBER: _ClassVar[int]
    P_HARM_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    event: str
    percent: int
    at: _timestamp_pb2.Timestamp
    by: str
    p_harm: float
    reason: str
    def __init__(self, event: _Optional[str] = ..., percent: _Optional[int] = ..., at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., by: _Optional[str] = ..., p_harm: _Optional[float] = ..., reason: _Optional[str] = ...) -> None: ...

class Rollout(_message.Message):
    __slots__ = ("id", "agent_id", "decision_type", "change_json", "baseline_json", "steps", "step", "percent", "state", "guard", "control", "candidate", "p_harm", "reason", "created_by", "created_at", "updated_at", "history")
    ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    DECISION_TYPE_FIELD_NUMBER: _ClassVar[int]
    CHANGE_JSON_FIELD_NUMBER: _ClassVar[int]
    BASELINE_JSON_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    PERCENT_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    GUARD_FIELD_NUMBER: _ClassVar[int]
    CONTROL_FIELD_NUMBER: _ClassVar[int]
    CANDIDATE_FIELD_NUMBER: _ClassVar[int]
    P_HARM_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    id: str
    agent_id: str
    decision_type: str
    change_json: bytes
    baseline_json: bytes
    steps: _containers.RepeatedScalarFieldContainer[int]
    step: int
    percent: int
    state: str
    guard: RolloutGuard
    control: ArmEvidence
    candidate: ArmEvidence
    p_harm: float
    reason: str
    created_by: str
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    history: _containers.RepeatedCompositeFieldContainer[RolloutEvent]
    def __init__(self, id: _Optional[str] = ..., agent_id: _Optional[str] = ..., decision_type: _Optional[str] = ..., change_json: _Optional[bytes] = ..., baseline_json: _Optional[bytes] = ..., steps: _Optional[_Iterable[int]] = ..., step: _Optional[int] = ..., percent: _Optional[int] = ..., state: _Optional[str] = ..., guard: _Optional[_Union[RolloutGuard, _Mapping]] = ..., control: _Optional[_Union[ArmEvidence, _Mapping]] = ..., candidate: _Optional[_Union[ArmEvidence, _Mapping]] = ..., p_harm: _Optional[float] = ..., reason: _Optional[str] = ..., created_by: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., history: _Optional[_Iterable[_Union[RolloutEvent, _Mapping]]] = ...) -> None: ...

class CreateRolloutRequest(_message.Message):
    __slots__ = ("agent_id", "decision_type", "change_json", "steps", "guard_json", "unknown_fields")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    DECISION_TYPE_FIELD_NUMBER: _ClassVar[int]
    CHANGE_JSON_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    GUARD_JSON_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELDS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    decision_type: str
    change_json: bytes
    steps: _containers.RepeatedScalarFieldContainer[int]
    guard_json: bytes
    unknown_fields: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, agent_id: _Optional[str] = ..., decision_type: _Optional[str] = ..., change_json: _Optional[bytes] = ..., steps: _Optional[_Iterable[int]] = ..., guard_json: _Optional[bytes] = ..., unknown_fields: _Optional[_Iterable[str]] = ...) -> None: ...

class ListRolloutsRequest(_message.Message):
    __slots__ = ("agent_id", "state", "page")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    state: str
    page: _common_pb2.PageRequest
    def __init__(self, agent_id: _Optional[str] = ..., state: _Optional[str] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListRolloutsResponse(_message.Message):
    __slots__ = ("items", "next_cursor")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[Rollout]
    next_cursor: str
    def __init__(self, items: _Optional[_Iterable[_Union[Rollout, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class GetRolloutRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class RolloutActionRequest(_message.Message):
    __slots__ = ("id", "reason")
    ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    id: str
    reason: str
    def __init__(self, id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class JudgeRolloutRequest(_message.Message):
    __slots__ = ("id", "verdict", "step", "control", "candidate", "p_harm", "reason")
    ID_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    CONTROL_FIELD_NUMBER: _ClassVar[int]
    CANDIDATE_FIELD_NUMBER: _ClassVar[int]
    P_HARM_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    id: str
    verdict: str
    step: int
    control: ArmEvidence
    candidate: ArmEvidence
    p_harm: float
    reason: str
    def __init__(self, id: _Optional[str] = ..., verdict: _Optional[str] = ..., step: _Optional[int] = ..., control: _Optional[_Union[ArmEvidence, _Mapping]] = ..., candidate: _Optional[_Union[ArmEvidence, _Mapping]] = ..., p_harm: _Optional[float] = ..., reason: _Optional[str] = ...) -> None: ...
