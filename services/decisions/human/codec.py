"""Subjects and human decisions to and from protobuf: the only module of the
human-decision half that sees wire types.

Parsing refuses bad input here, naming the field, before anything is read
or written.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from outrider.v1 import decisions_pb2
from outrider.wire import timestamp
from services.common import guards, paging
from services.common.errors import InvalidArgument
from services.decisions.human.reconcile import Lease
from services.decisions.human.rules import MAX_BODY_CHARS, HumanDecisionListing, HumanInput, PageKey, Subject
from services.decisions.human.store import HumanDecisionRow, SubjectRow

# How far a pushed input's written time may run ahead of this clock. A
# written time in the future would sort after everything said later and
# stand as the newest intent until then.
CLOCK_SKEW = timedelta(seconds=60)


# The longest id or reference: the REST contract's cap on the same fields.
MAX_REFERENCE_CHARS = 256


def _required(value: str, field: str) -> str:
    if not value.strip():
        raise InvalidArgument(f"{field} is required", field=field)
    if value != value.strip():
        raise InvalidArgument(f"{field} must not start or end with whitespace", field=field)
    # gRPC reaches here without the REST contract's checks; a NUL would
    # fail the insert as an internal error instead of a refusal.
    return guards.text(field, value, max_length=MAX_REFERENCE_CHARS)


def _subject_id(value: str) -> str:
    return _required(value, "subject_id")


def _source(value: str, field: str) -> str:
    _required(value, field)
    provider, colon, rest = value.partition(":")
    if not colon or not provider or not rest:
        raise InvalidArgument(f"{field} must look like provider:instance/project, got {value!r}", field=field)
    return value


def subject_from_proto(request: decisions_pb2.RegisterSubjectRequest) -> Subject:
    return Subject(
        id=_required(request.id, "id"),
        source=_source(request.source, "source") if request.source else None,
        plan_ref=_required(request.plan_ref, "plan_ref") if request.plan_ref else None,
    )


def input_from_proto(request: decisions_pb2.RecordHumanInputRequest, *, now: datetime) -> HumanInput:
    provider = _source(request.provider, "provider")
    external_id = _required(request.external_id, "external_id")
    subject = _subject_id(request.subject_id)
    if not request.HasField("at"):
        raise InvalidArgument("at (when the person wrote it) is required", field="at")
    written_at = guards.epoch_instant("at", request.at.seconds, request.at.nanos, now=now, future=CLOCK_SKEW)
    if not request.body.strip():
        # An empty utterance decides nothing; the pull path skips it too.
        raise InvalidArgument("body is empty: an empty input decides nothing", field="body")
    if len(request.body) > MAX_BODY_CHARS or "\x00" in request.body:
        raise InvalidArgument(f"body must be at most {MAX_BODY_CHARS:,} characters, without NUL", field="body")
    return HumanInput(
        provider=provider,
        external_id=external_id,
        subject_id=subject,
        author=request.author.strip(),
        written_at=written_at,
        body=request.body,
    )


def lease_from_proto(request: decisions_pb2.LeaseSubjectRequest) -> str:
    """The subject to lease."""
    return _subject_id(request.subject_id)


def listing_from_proto(request: decisions_pb2.ListHumanDecisionsRequest) -> HumanDecisionListing:
    subject = _subject_id(request.subject_id)
    after = paging.decode_cursor(request.page.cursor, PageKey.from_parts)
    return HumanDecisionListing(subject_id=subject, after=after, limit=paging.page_limit(request.page.limit))


def subject_to_proto(row: SubjectRow) -> decisions_pb2.Subject:
    return decisions_pb2.Subject(id=row.id, source=row.source or "", plan_ref=row.plan_ref or "", cursor=row.cursor)


def decision_to_proto(row: HumanDecisionRow) -> decisions_pb2.HumanDecision:
    return decisions_pb2.HumanDecision(
        id=row.id,
        subject_id=row.subject_id,
        kind=row.kind.value,
        body=row.body,
        author=row.author,
        provider=row.provider,
        external_id=row.external_id,
        written_at=timestamp(row.written_at),
        observed_at=timestamp(row.observed_at),
        plan_ref=row.plan_ref or "",
        step=row.step or "",
    )


def recorded_to_proto(row: HumanDecisionRow, created: bool) -> decisions_pb2.RecordHumanInputResponse:
    return decisions_pb2.RecordHumanInputResponse(decision=decision_to_proto(row), created=created)


def lease_to_proto(lease: Lease) -> decisions_pb2.LeaseSubjectResponse:
    return decisions_pb2.LeaseSubjectResponse(
        subject_id=lease.subject_id,
        human_decisions=[decision_to_proto(row) for row in lease.decisions],
        imported=lease.imported,
    )


def page_to_proto(
    rows: Sequence[HumanDecisionRow], next_key: PageKey | None
) -> decisions_pb2.ListHumanDecisionsResponse:
    return decisions_pb2.ListHumanDecisionsResponse(
        items=[decision_to_proto(row) for row in rows],
        next_cursor=paging.encode_cursor(next_key.written_at, next_key.seq) if next_key else "",
    )
