"""Booking facts: parsing one `facts.booking` event and merging many into the
per-subject state the judge reads.

Events arrive out of order and more than once (redelivery is the broker's
promise, not an accident), so the merge keeps, for each field separately, the
value of its newest observation together with that observation's `at`. Taking
the newest per field, rather than letting the last event to arrive win, is what
makes the result independent of arrival order; keeping fields separate, rather
than replacing the whole record, is what lets a late event carry one fact
without erasing the others.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

from services.common import guards
from services.common.errors import FieldError
from services.outcomes.rules.judging import BookingFacts

FACT_FIELDS = ("status", "assigned_at", "delivered_at", "sla_due_at", "cancelled")
# A facts event names one subject and a handful of fields; far past this it
# is not an event but a producer sending the wrong thing.
MAX_EVENT_BYTES = 16 * 1024
# A subject id is a key, not a document; past this it is a producer bug, and
# near Postgres's btree limit it would fail the insert instead of parsing.
MAX_SUBJECT_ID = 200
_TIMESTAMP_FIELDS = frozenset({"assigned_at", "delivered_at", "sla_due_at"})

# RFC 3339 date-time. `datetime.fromisoformat` alone also takes dates without a
# time, week dates and compact forms, which producers of this event never mean.
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?P<offset>[Zz]|[+-]\d{2}:\d{2})?")


class MalformedFacts(FieldError):
    """A facts payload that cannot be used; `field` names the culprit."""

    default_code = "MALFORMED_FACTS"


def _utc(name: str, value: datetime) -> datetime:
    if value.tzinfo is None or value.utcoffset() is None:
        raise MalformedFacts(name, "timestamp has no UTC offset")
    # One representation per instant: 10:00+00:00 and 11:00+01:00 are the same
    # observation, and must merge to the same stored bytes whichever came first.
    return value.astimezone(UTC)


def parse_timestamp(name: str, raw: Any, *, now: datetime | None = None) -> datetime:
    """An RFC 3339 timestamp with an offset, as an aware UTC datetime, within
    DESIGN §3's bounds (2000-01-01 to 366 days after `now`, this clock unless given)."""
    if not isinstance(raw, str):
        raise MalformedFacts(name, f"expected an RFC 3339 timestamp string, got {type(raw).__name__}")
    match = _RFC3339.fullmatch(raw.strip())
    if match is None:
        raise MalformedFacts(name, f"{raw!r} is not an RFC 3339 timestamp")
    if match.group("offset") is None:
        # A naive time is refused rather than assumed UTC: a guessed zone
        # shifts every SLA comparison by the difference, silently.
        raise MalformedFacts(name, f"{raw!r} has no UTC offset")
    try:
        parsed = datetime.fromisoformat(raw.strip().upper())
    except ValueError as error:
        raise MalformedFacts(name, f"{raw!r} is not a valid date-time") from error
    # Bounded before it is shifted to UTC: year 1 at +14:00 lies before the
    # calendar's first instant, where the shift overflows.
    return guards.instant(name, parsed, now=now or datetime.now(UTC), error=MalformedFacts)


T = TypeVar("T", str, bool, datetime)


@dataclass(frozen=True, slots=True)
class Observation(Generic[T]):
    """One field's value as seen at one instant."""

    value: T
    at: datetime

    def supersedes(self, other: Observation[T] | None) -> bool:
        # Newest wins. When two observations share an instant the larger value
        # wins: arbitrary, but fixed, so that arrival order never decides. For
        # `cancelled` it means a cancellation beats a same-instant denial,
        # which is the cautious reading.
        return other is None or (self.at, self.value) > (other.at, other.value)


@dataclass(frozen=True, slots=True)
class BookingFactsEvent:
    """One validated `facts.booking` event; `None` means the event is silent
    about that field."""

    subject_id: str
    at: datetime
    status: str | None = None
    assigned_at: datetime | None = None
    delivered_at: datetime | None = None
    sla_due_at: datetime | None = None
    cancelled: bool | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "at", _utc("at", self.at))
        for name in _TIMESTAMP_FIELDS:
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, _utc(name, value))

    def observations(self) -> dict[str, Observation[Any]]:
        """The fields this event speaks about, each stamped with its `at`."""
        return {name: Observation(value, self.at) for name in FACT_FIELDS if (value := getattr(self, name)) is not None}


def _subject_id(raw: Any) -> str:
    # Booking ids are integers in some deployments and strings in others; both
    # name the same subject, so both are accepted and kept as text.
    if isinstance(raw, int) and not isinstance(raw, bool):
        return str(raw)
    if isinstance(raw, str) and raw.strip():
        return raw.strip()
    raise MalformedFacts("subject_id", "expected a non-empty string or an integer")


def parse_booking_event(payload: Any, *, now: datetime | None = None) -> BookingFactsEvent:
    """Validate one decoded `facts.booking` payload.

    Keys this version does not know are ignored rather than refused: a producer
    that adds a field must not get every one of its events terminated. Absent
    and null both mean "no news about this field": a producer that writes
    every key must not erase facts another event reported.
    """
    if not isinstance(payload, Mapping):
        raise MalformedFacts("payload", f"expected an object, got {type(payload).__name__}")
    if "subject_id" not in payload:
        raise MalformedFacts("subject_id", "is required")
    if "at" not in payload:
        raise MalformedFacts("at", "is required")
    subject_id = _subject_id(payload["subject_id"])
    at = parse_timestamp("at", payload["at"], now=now)

    values: dict[str, Any] = {}
    status = payload.get("status")
    if status is not None:
        if not isinstance(status, str) or not status.strip():
            raise MalformedFacts("status", "expected a non-empty string")
        values["status"] = status.strip()
    for name in sorted(_TIMESTAMP_FIELDS):
        if payload.get(name) is not None:
            values[name] = parse_timestamp(name, payload[name], now=now)
    cancelled = payload.get("cancelled")
    if cancelled is not None:
        if not isinstance(cancelled, bool):
            raise MalformedFacts("cancelled", "expected true or false")
        values["cancelled"] = cancelled
    if not values:
        # An event that says nothing is almost always a producer bug (every
        # key misspelt, say); accepting it would hide the bug forever.
        raise MalformedFacts("payload", f"carries none of {', '.join(FACT_FIELDS)}")
    return BookingFactsEvent(subject_id=subject_id, at=at, **values)


def decode_booking_event(raw: bytes | str) -> BookingFactsEvent:
    """Decode and validate one `facts.booking` message body."""
    if len(raw) > MAX_EVENT_BYTES:
        raise MalformedFacts("payload", f"is {len(raw):,} bytes; a facts event is at most {MAX_EVENT_BYTES:,}")
    try:
        payload = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise MalformedFacts("payload", f"not valid JSON: {error}") from error
    return parse_booking_event(payload)


def check_storable(event: BookingFactsEvent) -> BookingFactsEvent:
    """Refuse what parses but cannot be stored, naming the field.

    Postgres text holds neither a NUL character nor half a surrogate pair
    (which JSON's \\u escapes can spell). An event carrying one would fail
    its transaction on every delivery, so it is malformed here rather than
    poison that is redelivered forever.
    """
    guards.text("subject_id", event.subject_id, max_length=MAX_SUBJECT_ID, error=MalformedFacts)
    if event.status is not None:
        # No cap of its own: the whole event is at most MAX_EVENT_BYTES.
        guards.text("status", event.status, max_length=MAX_EVENT_BYTES, error=MalformedFacts)
    return event


@dataclass(frozen=True, slots=True)
class SubjectFacts:
    """Everything observed about one subject, newest observation per field."""

    subject_id: str
    status: Observation[str] | None = None
    assigned_at: Observation[datetime] | None = None
    delivered_at: Observation[datetime] | None = None
    sla_due_at: Observation[datetime] | None = None
    cancelled: Observation[bool] | None = None

    def merge(self, event: BookingFactsEvent) -> SubjectFacts:
        """This state with `event` folded in. Commutative and idempotent."""
        if event.subject_id != self.subject_id:
            raise ValueError(f"event for subject {event.subject_id!r} merged into facts of {self.subject_id!r}")
        # Keyed by field name, so the values reach `replace` as keywords.
        newer: dict[str, Any] = {
            name: observation
            for name, observation in event.observations().items()
            if observation.supersedes(getattr(self, name))
        }
        return replace(self, **newer) if newer else self

    def to_booking_facts(self) -> BookingFacts:
        """The values alone, as the judge reads them."""
        values = {}
        for name in FACT_FIELDS:
            observation = getattr(self, name)
            values[name] = None if observation is None else observation.value
        return BookingFacts(**values)

    def to_json(self) -> dict[str, dict[str, Any]]:
        """`{field: {"value": ..., "at": ...}}` with RFC 3339 timestamps, for storage."""
        document: dict[str, dict[str, Any]] = {}
        for name in FACT_FIELDS:
            observation = getattr(self, name)
            if observation is None:
                continue
            value = observation.value
            document[name] = {
                "value": value.isoformat() if isinstance(value, datetime) else value,
                "at": observation.at.isoformat(),
            }
        return document

    @classmethod
    def from_json(cls, subject_id: str, document: Mapping[str, Any]) -> SubjectFacts:
        """Read back what `to_json` wrote; anything else is refused, naming the field."""
        if not isinstance(document, Mapping):
            raise MalformedFacts("facts", "expected an object")
        unknown = sorted(set(document) - set(FACT_FIELDS))
        if unknown:
            raise MalformedFacts(unknown[0], "is not a booking fact")
        observed: dict[str, Observation[Any]] = {}
        for name, entry in document.items():
            if not isinstance(entry, Mapping) or set(entry) != {"value", "at"}:
                raise MalformedFacts(name, 'expected {"value": ..., "at": ...}')
            if entry["value"] is None:
                raise MalformedFacts(name, "value is null")
            # Re-validating through the event parser keeps one definition of a
            # well-formed value for both the wire and the store.
            try:
                event = parse_booking_event({"subject_id": subject_id, "at": entry["at"], name: entry["value"]})
            except MalformedFacts as error:
                where = name if error.field == name else f"{name}.{error.field}"
                raise MalformedFacts(where, error.problem) from error
            observed[name] = event.observations()[name]
        return cls(subject_id=_subject_id(subject_id), **observed)


def merge_all(state: SubjectFacts, events: Iterable[BookingFactsEvent]) -> SubjectFacts:
    """Fold `events` into `state`, in any order."""
    for event in events:
        state = state.merge(event)
    return state


__all__ = [
    "FACT_FIELDS",
    "MAX_EVENT_BYTES",
    "MAX_SUBJECT_ID",
    "BookingFactsEvent",
    "MalformedFacts",
    "Observation",
    "SubjectFacts",
    "check_storable",
    "decode_booking_event",
    "merge_all",
    "parse_booking_event",
    "parse_timestamp",
]
