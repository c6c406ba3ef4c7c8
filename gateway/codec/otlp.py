"""OTLP/HTTP bodies to the messages the telemetry stream carries, and OTLP's answers back.

An export request arrives as protobuf or JSON, gzip or not; it is inflated
within the body cap, decoded and checked span by span. Every answer is
OTLP's own, in the request's encoding: an ExportTraceServiceResponse, or a
google.rpc.Status for a refusal.
"""

from __future__ import annotations

import zlib

from gateway.errors import ApiError
from services.common.callers import AgentScope
from services.common.redaction.preview import preview
from services.telemetry.otlp import codec as otlp_codec

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
# google.rpc.Code of each refusal's HTTP status.
_RPC_CODES = {400: 3, 401: 16, 413: 3, 415: 3, 503: 14}
_RPC_UNKNOWN = 2


def gunzip(body: bytes, cap: int) -> bytes:
    """A gzip body inflated to at most `cap` bytes: a small body must not
    inflate into gigabytes in the gateway's memory."""
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        inflated = inflater.decompress(body, cap + 1)
    except zlib.error as error:
        raise ApiError(400, "UNDECODABLE", f"the body is not valid gzip: {error}") from None
    if len(inflated) > cap:
        raise ApiError(413, "TOO_LARGE", f"the body inflates past the limit of {cap} bytes")
    if not inflater.eof:
        raise ApiError(400, "UNDECODABLE", "the gzip body is truncated")
    return inflated


def admit(body: bytes, json_encoded: bool, scope: AgentScope) -> otlp_codec.Admission:
    """The export request's spans, each admitted or refused (`scope`: the
    agents the exporting engine's key may act for); a 400 when the body does
    not decode."""
    try:
        request = otlp_codec.decode_request(body, json_encoded=json_encoded)
    except otlp_codec.UndecodableTraces as error:
        raise ApiError(400, "UNDECODABLE", preview(str(error), 500)) from None
    return otlp_codec.admit(request, scope)


def export_body(admission: otlp_codec.Admission, json_encoded: bool) -> bytes:
    return otlp_codec.export_response(admission, json_encoded=json_encoded)


def status_body(status: int, message: str, json_encoded: bool) -> bytes:
    """A refusal as a google.rpc.Status."""
    return otlp_codec.status(_RPC_CODES.get(status, _RPC_UNKNOWN), message, json_encoded=json_encoded)
