from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class PageRequest(_message.Message):
    __slots__ = ("cursor", "limit")
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    cursor: str
    limit: int
    def __init__(self, cursor: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class GetRetentionRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class TableRetention(_message.Message):
    __slots__ = ("table", "keep_seconds", "deleted")
    TABLE_FIELD_NUMBER: _ClassVar[int]
    KEEP_SECONDS_FIELD_NUMBER: _ClassVar[int]
    DELETED_FIELD_NUMBER: _ClassVar[int]
    table: str
    keep_seconds: int
    deleted: int
    def __init__(self, table: _Optional[str] = ..., keep_seconds: _Optional[int] = ..., deleted: _Optional[int] = ...) -> None: ...

class RetentionReport(_message.Message):
    __slots__ = ("tables", "failed_passes")
    TABLES_FIELD_NUMBER: _ClassVar[int]
    FAILED_PASSES_FIELD_NUMBER: _ClassVar[int]
    tables: _containers.RepeatedCompositeFieldContainer[TableRetention]
    failed_passes: int
    def __init__(self, tables: _Optional[_Iterable[_Union[TableRetention, _Mapping]]] = ..., failed_passes: _Optional[int] = ...) -> None: ...

class RolloutArm(_message.Message):
    __slots__ = ("id", "arm")
    ID_FIELD_NUMBER: _ClassVar[int]
    ARM_FIELD_NUMBER: _ClassVar[int]
    id: str
    arm: str
    def __init__(self, id: _Optional[str] = ..., arm: _Optional[str] = ...) -> None: ...
