import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from outrider.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetStatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PlaygroundStatus(_message.Message):
    __slots__ = ("configured", "reason", "default_model")
    CONFIGURED_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_MODEL_FIELD_NUMBER: _ClassVar[int]
    configured: bool
    reason: str
    default_model: str
    def __init__(self, configured: _Optional[bool] = ..., reason: _Optional[str] = ..., default_model: _Optional[str] = ...) -> None: ...

class RunRequest(_message.Message):
    __slots__ = ("agent_id", "skill_id", "prompt")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SKILL_ID_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    skill_id: str
    prompt: str
    def __init__(self, agent_id: _Optional[str] = ..., skill_id: _Optional[str] = ..., prompt: _Optional[str] = ...) -> None: ...

class TraceStep(_message.Message):
    __slots__ = ("turn", "tool", "input_json", "outcome", "result", "ms", "reason", "error", "proposal_json")
    TURN_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    INPUT_JSON_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    MS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    PROPOSAL_JSON_FIELD_NUMBER: _ClassVar[int]
    turn: int
    tool: str
    input_json: bytes
    outcome: str
    result: str
    ms: int
    reason: str
    error: str
    proposal_json: bytes
    def __init__(self, turn: _Optional[int] = ..., tool: _Optional[str] = ..., input_json: _Optional[bytes] = ..., outcome: _Optional[str] = ..., result: _Optional[str] = ..., ms: _Optional[int] = ..., reason: _Optional[str] = ..., error: _Optional[str] = ..., proposal_json: _Optional[bytes] = ...) -> None: ...

class RunTrace(_message.Message):
    __slots__ = ("id", "agent_id", "skill_id", "model", "turns", "input_tokens", "output_tokens", "total_ms", "final_text", "steps", "error", "stop_reason", "created_by", "created_at", "prompt", "step_count", "created_by_email", "redactions", "status")
    class RedactionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SKILL_ID_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    TURNS_FIELD_NUMBER: _ClassVar[int]
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_MS_FIELD_NUMBER: _ClassVar[int]
    FINAL_TEXT_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    STOP_REASON_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    STEP_COUNT_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_EMAIL_FIELD_NUMBER: _ClassVar[int]
    REDACTIONS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    id: str
    agent_id: str
    skill_id: str
    model: str
    turns: int
    input_tokens: int
    output_tokens: int
    total_ms: int
    final_text: str
    steps: _containers.RepeatedCompositeFieldContainer[TraceStep]
    error: str
    stop_reason: str
    created_by: str
    created_at: _timestamp_pb2.Timestamp
    prompt: str
    step_count: int
    created_by_email: str
    redactions: _containers.ScalarMap[str, int]
    status: str
    def __init__(self, id: _Optional[str] = ..., agent_id: _Optional[str] = ..., skill_id: _Optional[str] = ..., model: _Optional[str] = ..., turns: _Optional[int] = ..., input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., total_ms: _Optional[int] = ..., final_text: _Optional[str] = ..., steps: _Optional[_Iterable[_Union[TraceStep, _Mapping]]] = ..., error: _Optional[str] = ..., stop_reason: _Optional[str] = ..., created_by: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., prompt: _Optional[str] = ..., step_count: _Optional[int] = ..., created_by_email: _Optional[str] = ..., redactions: _Optional[_Mapping[str, int]] = ..., status: _Optional[str] = ...) -> None: ...

class RunStarted(_message.Message):
    __slots__ = ("id", "agent_id", "skill_id", "model")
    ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SKILL_ID_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    id: str
    agent_id: str
    skill_id: str
    model: str
    def __init__(self, id: _Optional[str] = ..., agent_id: _Optional[str] = ..., skill_id: _Optional[str] = ..., model: _Optional[str] = ...) -> None: ...

class RunEvent(_message.Message):
    __slots__ = ("step", "done", "started")
    STEP_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    STARTED_FIELD_NUMBER: _ClassVar[int]
    step: TraceStep
    done: RunTrace
    started: RunStarted
    def __init__(self, step: _Optional[_Union[TraceStep, _Mapping]] = ..., done: _Optional[_Union[RunTrace, _Mapping]] = ..., started: _Optional[_Union[RunStarted, _Mapping]] = ...) -> None: ...

class ListRunsRequest(_message.Message):
    __slots__ = ("page",)
    PAGE_FIELD_NUMBER: _ClassVar[int]
    page: _common_pb2.PageRequest
    def __init__(self, page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListRunsResponse(_message.Message):
    __slots__ = ("items", "next_cursor")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[RunTrace]
    next_cursor: str
    def __init__(self, items: _Optional[_Iterable[_Union[RunTrace, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class GetRunRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...
