"""Domain errors and the one table that turns them into gRPC status.

Servicers raise these; the error interceptor maps them. The gateway has the
mirror table from gRPC status to HTTP. A domain rule never knows about either
transport.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import grpc

# Trailing metadata keys that carry the machine-readable part of an error.
CODE_KEY = "outrider-error-code"
DETAILS_KEY = "outrider-error-details"


class DomainError(Exception):
    status: ClassVar[grpc.StatusCode] = grpc.StatusCode.INTERNAL
    default_code: ClassVar[str] = "INTERNAL"

    def __init__(self, message: str, *, code: str | None = None, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.details = details or {}


class InvalidArgument(DomainError):
    status = grpc.StatusCode.INVALID_ARGUMENT
    default_code = "INVALID_ARGUMENT"

    def __init__(self, message: str, *, field: str | None = None, code: str | None = None,
                 details: dict[str, Any] | None = None) -> None:
        merged = dict(details or {})
        if field:
            merged.setdefault("field", field)
        super().__init__(message, code=code, details=merged)


class NotFound(DomainError):
    status = grpc.StatusCode.NOT_FOUND
    default_code = "NOT_FOUND"


class AlreadyExists(DomainError):
    status = grpc.StatusCode.ALREADY_EXISTS
    default_code = "ALREADY_EXISTS"


class Conflict(DomainError):
    status = grpc.StatusCode.FAILED_PRECONDITION
    default_code = "CONFLICT"


class PermissionDenied(DomainError):
    status = grpc.StatusCode.PERMISSION_DENIED
    default_code = "FORBIDDEN"


class RateLimited(DomainError):
    status = grpc.StatusCode.RESOURCE_EXHAUSTED
    default_code = "RATE_LIMITED"


class Unavailable(DomainError):
    status = grpc.StatusCode.UNAVAILABLE
    default_code = "UNAVAILABLE"


def error_metadata(error: DomainError) -> tuple[tuple[str, str], ...]:
    return ((CODE_KEY, error.code), (DETAILS_KEY, json.dumps(error.details, default=str)))
