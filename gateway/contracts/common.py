"""Shapes every route shares: the error envelope, pages, and the field types
requests are built from.

Each type here states in the OpenAPI document exactly what the gateway then
enforces, so a client generated from the document sends what is accepted.
Strings are strict (a number is not coerced into text) and must be text
Postgres and gRPC can carry: no NUL and no lone surrogate. Numbers, text and
instants are checked by the guards every gRPC decoder calls too
(services.common.guards), so REST and gRPC refuse the same input with the
same reason.
"""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime
from typing import Annotated, Any, Generic, TypeVar

from fastapi import Query
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    WithJsonSchema,
)
from pydantic_core import PydanticCustomError

from services.common import guards, windows
from services.common.errors import FieldError

INT32_MAX = 2**31 - 1
PAGE_LIMIT_MAX = 200

# Python's str.strip() takes these too, though a JSON Schema \\s does not.
_EDGE = r"[^\s\x00\x1c-\x1f\x85]"
# Non-empty, no white space at either end (an id with a trailing space is a
# different id that looks the same), no NUL.
TRIMMED = rf"^{_EDGE}(?:[^\x00]*{_EDGE})?$"

# Text the rest of the platform can hold: gRPC strings are UTF-8, so a lone
# surrogate ("\ud800", legal in JSON) cannot cross; Postgres text holds no NUL.
# (A URL's %-escapes cannot spell a lone surrogate, so query and path text
# needs only the NUL rule.)
CARRIABLE = r"^[^\x00]*$"
# At least one character that is not white space, and no NUL.
FILLED = r"^[^\x00]*[^\x00\s][^\x00]*$"


def _refused(kind: str, reason: str) -> PydanticCustomError:
    # A custom error carries the reason as written; a ValueError would read
    # "Value error, …" in every field's message.
    return PydanticCustomError(kind, reason)


def _as_pydantic(refusal: FieldError, kind: str) -> PydanticCustomError:
    # The guard's reason alone: pydantic's location already names the field.
    return _refused(kind, refusal.problem)


def _carriable(value: str) -> str:
    try:
        return guards.text("value", value, max_length=len(value))
    except FieldError as refusal:
        raise _as_pydantic(refusal, "text") from None


def text(
    *,
    min_length: int = 0,
    max_length: int | None = None,
    pattern: str | None = None,
    description: str | None = None,
    examples: list[str] | None = None,
) -> Any:
    """A strict string with the given bounds, carriable end to end."""
    return Annotated[
        str,
        Field(
            strict=True,
            min_length=min_length or None,
            max_length=max_length,
            pattern=pattern or CARRIABLE,
            description=description,
            examples=examples,
        ),
        AfterValidator(_carriable),
    ]


def _bounded(value: datetime) -> datetime:
    # DESIGN §3's bounds for every instant from outside; a field that must
    # not lie in the future is held to that by its context, for REST and
    # gRPC alike. The value keeps the offset it was written with.
    try:
        guards.instant("value", value, now=datetime.now(UTC))
    except FieldError as refusal:
        raise _as_pydantic(refusal, "instant") from None
    return value


_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})?")


def _rfc3339(value: Any) -> Any:
    # RFC 3339 text only: pydantic would otherwise read 1700000000, or the
    # query string "0.5", as seconds since 1970, and the document promises
    # a date-time.
    if not isinstance(value, str) or not _RFC3339.fullmatch(value):
        raise _refused("datetime_type", "must be an RFC 3339 date-time, e.g. 2026-09-29T20:57:00+05:30")
    return value


# An instant with an explicit offset, as RFC 3339 text both ways.
Instant = Annotated[
    datetime,
    BeforeValidator(_rfc3339),
    AfterValidator(_bounded),
    PlainSerializer(lambda value: value.isoformat(), return_type=str),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]


# The span a figure is read over: the last N days, or a range of the
# operator's own of up to as many; the context refuses the two together.
WindowDays = Annotated[
    int | None,
    Query(
        ge=windows.MIN_DAYS,
        le=windows.MAX_DAYS,
        description=f"window in days (default {windows.DEFAULT_DAYS}); not with from/to",
    ),
]
WindowFrom = Annotated[
    Instant | None, Query(alias="from", description="a range instead of days, from (RFC 3339 with offset)")
]
WindowTo = Annotated[
    Instant | None, Query(alias="to", description="the range's end, before (RFC 3339 with offset); unset means now")
]


def _json_number(value: Any) -> int | float:
    try:
        return guards.number("value", value)
    except FieldError as refusal:
        raise _as_pydantic(refusal, "number") from None


# A JSON number kept as written: 3 stays an integer and 2.5 a fraction (a
# float field would turn 3 into 3.0, and an integer rule would refuse it).
Number = Annotated[
    int | float,
    PlainValidator(_json_number),
    WithJsonSchema(
        {
            "type": "number",
            "description": f"a finite number; an integer between {guards.INT64_MIN} and {guards.INT64_MAX}",
        }
    ),
]


def json_int(*, ge: int | None = None, le: int | None = None) -> Any:
    """A JSON integer within bounds (int64 unless narrower), stated in the document as enforced.

    JSON has one number type: 3.0 is the integer 3 to any JSON Schema
    validator, so it is accepted as 3; "3" and true are not integers.
    """
    low = guards.INT64_MIN if ge is None else ge
    high = guards.INT64_MAX if le is None else le

    def read(value: Any) -> int:
        try:
            return guards.integer("value", value, minimum=low, maximum=high)
        except FieldError as refusal:
            raise _as_pydantic(refusal, "int_type") from None

    return Annotated[int, PlainValidator(read), WithJsonSchema({"type": "integer", "minimum": low, "maximum": high})]


JsonInt = json_int()


def integer_or_text(*, max_length: int, text_pattern: str) -> Any:
    """An id some producers send as a number and others as text; kept as text.

    One validator rather than a union, so a refusal names the field alone.
    """
    compiled = re.compile(text_pattern)

    def read(value: Any) -> str:
        if isinstance(value, int) and not isinstance(value, bool):
            if not 0 <= value < 2**63:
                raise _refused("id_range", "must be between 0 and 2^63 − 1 when a number")
            return str(value)
        if not isinstance(value, str):
            raise _refused("id_type", "must be text or a whole number")
        _carriable(value)
        if not 1 <= len(value) <= max_length or not compiled.search(value):
            raise _refused("id_text", f"must be 1 to {max_length} characters with one that is not white space")
        return value

    return Annotated[
        str,
        PlainValidator(read),
        WithJsonSchema(
            {
                "anyOf": [
                    {"type": "integer", "minimum": 0, "maximum": 2**63 - 1},
                    {"type": "string", "minLength": 1, "maxLength": max_length, "pattern": text_pattern},
                ]
            }
        ),
    ]


def keyed(key_pattern: str, value: Any, *, description: str | None = None) -> Any:
    """An object whose keys all match `key_pattern`; the document says no other key is allowed."""
    return Annotated[
        dict[Annotated[str, Field(pattern=key_pattern)], value],
        Field(description=description, json_schema_extra={"additionalProperties": False}),
    ]


# Deeper than any real context, shallow enough that no reader recurses out.
JSON_DEPTH_MAX = 32


def _storable(value: Any, depth: int = 0, max_depth: int = JSON_DEPTH_MAX) -> None:
    if depth > max_depth:
        raise _refused("depth", f"nests deeper than {max_depth} levels")
    if isinstance(value, str):
        _carriable(value)
    elif isinstance(value, float) and not math.isfinite(value):
        raise _refused("number", "holds a number that is not finite (NaN or Infinity is not JSON)")
    elif isinstance(value, dict):
        for key, item in value.items():
            _carriable(key)
            _storable(item, depth + 1, max_depth)
    elif isinstance(value, list):
        for item in value:
            _storable(item, depth + 1, max_depth)


def json_object(*, max_bytes: int | None = None, max_depth: int = JSON_DEPTH_MAX) -> Any:
    """Any JSON object the platform can store and give back exactly, within bounds."""

    def storable(value: dict[str, Any]) -> dict[str, Any]:
        _storable(value, max_depth=max_depth)
        if max_bytes is not None:
            size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())
            if size > max_bytes:
                raise _refused("size", f"must be at most {max_bytes:,} bytes of JSON, got {size:,}")
        return value

    limits = f"; at most {max_bytes:,} bytes as compact JSON" if max_bytes else ""
    return Annotated[
        dict[str, Any],
        Field(
            description=f"any JSON object, nesting at most {max_depth} levels{limits};"
            " numbers come back exactly as sent"
        ),
        AfterValidator(storable),
    ]


class Contract(BaseModel):
    """A request body: unknown fields are refused, so a typo is never ignored."""

    model_config = ConfigDict(extra="forbid")


class Reply(BaseModel):
    """A response body."""

    model_config = ConfigDict(extra="forbid")


Item = TypeVar("Item")


class Page(Reply, Generic[Item]):
    items: list[Item]
    next_cursor: str | None = Field(description="pass as ?cursor= for the next page; null on the last page")


class ErrorBody(Reply):
    code: str = Field(pattern=r"^[A-Z][A-Z0-9_]*$", examples=["AGENT_NOT_FOUND"])
    message: str
    details: dict[str, Any] = Field(description="machine-readable particulars; see each code")


class ErrorEnvelope(Reply):
    error: ErrorBody


class FieldProblems(Reply):
    """The fields at fault; a rule with particulars (a length and its limit) adds them beside."""

    model_config = ConfigDict(extra="allow")

    fields: dict[str, str] = Field(
        description="each field at fault, by its path in the request (`decision.confidence`, `turns[2].role`,"
        " a query parameter's name), with the reason",
        examples=[{"decision.confidence": "must be between 0 and 1"}],
    )


class ValidationErrorBody(Reply):
    code: str = Field(pattern=r"^[A-Z][A-Z0-9_]*$", examples=["INVALID_ARGUMENT"])
    message: str
    details: FieldProblems


class ValidationErrorEnvelope(Reply):
    error: ValidationErrorBody


def errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The documented error answers of a route, in the one envelope."""
    described = {
        401: "no or bad credentials",
        403: "the credentials may not do this",
        404: "the thing named does not exist",
        409: "the current state refuses the change (stale version, already judged, …)",
        413: "the body is over the size limit",
        422: "the request breaks a rule; `details.fields` names each field at fault",
        429: "rate limited; `details.retry_after_s` says when to try again",
        503: "a service this route needs is unavailable; `details.context` names it",
    }
    return {
        status: {
            "model": ValidationErrorEnvelope if status == 422 else ErrorEnvelope,
            "description": described[status],
        }
        for status in statuses
    }


STAFF_ERRORS = errors(401, 403, 422, 503)
WRITER_ERRORS = errors(401, 403, 404, 409, 422, 503)
ENGINE_ERRORS = errors(401, 422, 503)
