"""Domain errors: what went wrong, in the domain's terms, with no transport.

Rules and stores raise these; one table in `services/common/grpc_server.py`
turns them into gRPC status, and the gateway's mirror table turns status
into HTTP. A rule never knows about either transport, and a servicer never
catches a rule's error only to raise another one.

Every error that blames the caller's input names the fields at fault in
`details["fields"]` ({field path: reason}): one shape for every 422, so a
console can put each reason next to its input.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar


class DomainError(Exception):
    default_code: ClassVar[str] = "INTERNAL"

    def __init__(self, message: str, *, code: str | None = None, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.details: dict[str, Any] = dict(details or {})


class InvalidArgument(DomainError, ValueError):
    """The caller sent something no rule accepts; `fields` says what and why.

    Also a ValueError, so parsing code written against plain ValueErrors
    keeps catching it.
    """

    default_code = "INVALID_ARGUMENT"

    def __init__(
        self,
        message: str,
        *,
        field: str | None = None,
        fields: Mapping[str, str] | None = None,
        code: str | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        named = {**(details or {}).get("fields", {}), **(fields or {})}
        if field and field not in named:
            named[field] = message
        super().__init__(message, code=code, details={**(details or {}), "fields": named})
        self.fields = named


class FieldError(InvalidArgument):
    """One field breaks one rule: `field` names it, `problem` says how."""

    def __init__(
        self,
        field: str,
        problem: str,
        *,
        code: str | None = None,
        details: Mapping[str, Any] | None = None,
        message: str | None = None,
    ) -> None:
        super().__init__(message or f"{field}: {problem}", fields={field: problem}, code=code, details=details)
        self.field = field
        self.problem = problem


class NotFound(DomainError):
    default_code = "NOT_FOUND"


class AlreadyExists(DomainError):
    default_code = "ALREADY_EXISTS"


class Conflict(DomainError):
    """The request is well formed but the current state refuses it (retry after a reload)."""

    default_code = "CONFLICT"


class PermissionDenied(DomainError):
    default_code = "FORBIDDEN"


class Unauthenticated(DomainError):
    default_code = "UNAUTHENTICATED"


class RateLimited(DomainError):
    default_code = "RATE_LIMITED"


class Unavailable(DomainError):
    """Something this call needs (a database, a source, another context) is not answering."""

    default_code = "UNAVAILABLE"


class UpstreamUnavailable(Unavailable):
    """Another context did not answer; `context` names it, never its address."""

    default_code = "UPSTREAM_UNAVAILABLE"

    def __init__(self, context: str) -> None:
        super().__init__(f"the {context} service is unavailable; try again shortly", details={"context": context})
        self.context = context
