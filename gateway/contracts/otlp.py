"""OTLP/HTTP traces (POST /v1/traces): the shapes OTLP itself specifies.

These bodies are OTLP's, not Outrider's: field names are the protobuf JSON
mapping's (lowerCamelCase), 64-bit integers are decimal strings, and every
refusal is a google.rpc.Status rather than the error envelope, because an
exporter reads the answer as its protocol defines it. The models document
the JSON encoding; the protobuf encoding carries the same messages.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from gateway.contracts.common import Reply


class OtlpTracesRequest(BaseModel):
    """An OTLP/JSON ExportTraceServiceRequest (opentelemetry-proto
    `collector/trace/v1`), trace and span ids in hex. Fields this version does
    not read are ignored, as OTLP requires of a receiver."""

    model_config = ConfigDict(extra="ignore")

    # Optional, as every proto3 field is: an export with no spans is `{}`, and
    # proto3's JSON mapping reads null as the field's default.
    resourceSpans: list[dict[str, Any]] | None = Field(
        default=None, description="ResourceSpans: a resource, its scopes and their spans"
    )


class OtlpPartialSuccess(Reply):
    rejectedSpans: str = Field(
        pattern=r"^[0-9]+$", description="spans refused, as a decimal string (proto3 JSON's int64)"
    )
    errorMessage: str = Field(description="how many were refused and the first reasons, each naming the attribute")


class OtlpExportResponse(Reply):
    """An ExportTraceServiceResponse."""

    partialSuccess: OtlpPartialSuccess | None = Field(
        default=None, description="present only when some spans were refused; the others were accepted"
    )


class OtlpStatus(Reply):
    """A google.rpc.Status: OTLP/HTTP's body for every refusal."""

    code: int = Field(description="a google.rpc.Code: 3 invalid argument, 14 unavailable, 16 unauthenticated")
    message: str
    details: list[dict[str, Any]] | None = None
