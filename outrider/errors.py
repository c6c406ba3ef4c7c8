"""What the SDK raises when Outrider refuses it: one base, `OutriderError`,
and a class per family of refusal an engine handles apart.

A refusing context sends its machine-readable code and details in the
call's trailing metadata (`outrider-error-code`, `outrider-error-details`);
`refusal()` reads them into the class of that family, so an engine tells a
misconfigured human-input source from a database that is down without
parsing the message. A call the transport refused (nothing answered) has no
code of Outrider's: its code is then the gRPC status name.

The families mirror the servers' own table (services/common/grpc_server.py):
one gRPC status each. A class that names one code (DecisionIdReused,
DatabaseUnavailable, ...) is a subclass of its family, so catching the
family still catches it.

Here rather than in outrider.client: a refused NATS credential is an
OutriderError too, and outrider.nats_access, which raises it, is shared
with the services, which must not import the engine client.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import grpc

from outrider.rpc import refusal_metadata


class OutriderError(Exception):
    """Outrider refused, or the SDK found it cannot go on.

    `code` is Outrider's machine-readable code (UPPER_SNAKE, e.g.
    HUMAN_SOURCES_MISCONFIGURED), or the gRPC status name when the server
    sent none; `message` is written for a person; `details` is the JSON
    object the server sent ({} when none); `status` is the refused call's
    gRPC status, None when no gRPC call was refused. `str()` is the message.
    """

    default_status: ClassVar[grpc.StatusCode | None] = None

    def __init__(
        self,
        code: str,
        message: str,
        *,
        details: Mapping[str, Any] | None = None,
        status: grpc.StatusCode | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details: dict[str, Any] = dict(details or {})
        self.status = status if status is not None else self.default_status


class InvalidArgument(OutriderError):
    """The request breaks a rule; `details["fields"]` names each field at
    fault with the reason. Sent again unchanged, it is refused again."""

    default_status = grpc.StatusCode.INVALID_ARGUMENT


class NotFound(OutriderError):
    """What the request names does not exist (e.g. SUBJECT_NOT_FOUND, DECISION_NOT_FOUND)."""

    default_status = grpc.StatusCode.NOT_FOUND


class AlreadyExists(OutriderError):
    default_status = grpc.StatusCode.ALREADY_EXISTS


class Conflict(OutriderError):
    """The request is well formed but the current state refuses it."""

    default_status = grpc.StatusCode.FAILED_PRECONDITION


class DecisionIdReused(Conflict):
    """DECISION_ID_REUSED: the id is already recorded for a different
    decision. A retry of the same decision is accepted, never this."""


class PermissionDenied(OutriderError):
    """The credential is valid but may not make this call."""

    default_status = grpc.StatusCode.PERMISSION_DENIED


class Unauthenticated(OutriderError):
    """No credential, or one Outrider does not accept (the engine key)."""

    default_status = grpc.StatusCode.UNAUTHENTICATED


class RateLimited(OutriderError):
    """Too many calls at once (RATE_LIMITED, or a context at its cap of
    concurrent calls); try again after a pause."""

    default_status = grpc.StatusCode.RESOURCE_EXHAUSTED


class Unavailable(OutriderError):
    """Outrider, or something the call needs, did not answer (in time);
    the same call may succeed shortly."""

    default_status = grpc.StatusCode.UNAVAILABLE


class DatabaseUnavailable(Unavailable):
    """DATABASE_UNAVAILABLE: the context answered, its database did not."""


class LeaseRefused(OutriderError):
    """The subject may not be acted on yet: every refusal of
    `SubjectGate.lease` is one (it fails closed), whatever its family.

    Its subclasses say why where an engine acts on the reason; any other
    refusal (an unregistered subject, a refused key) is a LeaseRefused with
    its `status` and `code`.
    """

    def __init__(
        self,
        subject_id: str,
        code: str,
        reason: str,
        *,
        details: Mapping[str, Any] | None = None,
        status: grpc.StatusCode | None = None,
    ) -> None:
        super().__init__(code, reason, details=details, status=status)
        self.subject_id = subject_id

    @property
    def reason(self) -> str:
        """The message, under the name LeaseRefused has always given it."""
        return self.message

    def __str__(self) -> str:
        return f"lease of {self.subject_id} refused ({self.code}): {self.message}"


class LeaseUnavailable(LeaseRefused, Unavailable):
    """The lease could not be answered now: the subject's human-input source
    timed out or is down (HUMAN_SOURCE_TIMEOUT, HUMAN_SOURCE_UNAVAILABLE), or
    the decisions context or its database did not answer. Lease again shortly."""


class HumanSourcesMisconfigured(LeaseUnavailable):
    """HUMAN_SOURCES_MISCONFIGURED: Outrider cannot read its human-input
    sources setting (OUTRIDER_HUMAN_SOURCES), so no subject with a source can
    be leased until an operator fixes it. (A decisions context normally
    refuses to start with such a setting; this is the refusal if one runs.)"""


class HumanSourceConflict(LeaseRefused, Conflict):
    """The subject's human-input source answered something Outrider cannot
    record as it stands (HUMAN_SOURCE_MALFORMED, HUMAN_SOURCE_MISMATCH,
    HUMAN_INPUT_INVALID, HUMAN_INPUT_OWNED_ELSEWHERE): a person must look;
    `details` names the source and the input."""


# A refused call's family by its gRPC status. A context that did not answer
# in time is as unavailable as one that refused the connection. Any other
# status (INTERNAL, UNIMPLEMENTED, ...) is an OutriderError of no family.
FAMILY_OF_STATUS: Mapping[grpc.StatusCode, type[OutriderError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgument,
    grpc.StatusCode.NOT_FOUND: NotFound,
    grpc.StatusCode.ALREADY_EXISTS: AlreadyExists,
    grpc.StatusCode.FAILED_PRECONDITION: Conflict,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDenied,
    grpc.StatusCode.UNAUTHENTICATED: Unauthenticated,
    grpc.StatusCode.RESOURCE_EXHAUSTED: RateLimited,
    grpc.StatusCode.UNAVAILABLE: Unavailable,
    grpc.StatusCode.DEADLINE_EXCEEDED: Unavailable,
}

# The codes with a class of their own, whatever call was refused.
CLASS_OF_CODE: Mapping[str, type[OutriderError]] = {
    "DECISION_ID_REUSED": DecisionIdReused,
    "DATABASE_UNAVAILABLE": DatabaseUnavailable,
}

# A refused lease's class by its code, then by its family.
LEASE_REFUSAL_OF_CODE: Mapping[str, type[LeaseRefused]] = {
    "HUMAN_SOURCES_MISCONFIGURED": HumanSourcesMisconfigured,
    "HUMAN_SOURCE_MALFORMED": HumanSourceConflict,
    "HUMAN_SOURCE_MISMATCH": HumanSourceConflict,
    "HUMAN_INPUT_INVALID": HumanSourceConflict,
    "HUMAN_INPUT_OWNED_ELSEWHERE": HumanSourceConflict,
}


def refusal(error: grpc.aio.AioRpcError) -> OutriderError:
    """The typed error of a refused call: the class of its code, else of its
    status's family; the code, details and message the server sent, or the
    status name and the transport's text when it sent none."""
    sent_code, details = refusal_metadata(error)
    status = error.code()
    kind = CLASS_OF_CODE.get(sent_code or "") or FAMILY_OF_STATUS.get(status, OutriderError)
    return kind(sent_code or status.name, error.details() or "", details=details, status=status)


def lease_refusal(subject_id: str, error: grpc.aio.AioRpcError) -> LeaseRefused:
    """A refused LeaseSubject call as the LeaseRefused an engine catches."""
    refused = refusal(error)
    kind = LEASE_REFUSAL_OF_CODE.get(refused.code) or (
        LeaseUnavailable if isinstance(refused, Unavailable) else LeaseRefused
    )
    return kind(subject_id, refused.code, refused.message, details=refused.details, status=refused.status)
