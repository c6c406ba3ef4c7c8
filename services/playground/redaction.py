"""Personal data removed from tool results before they reach the model.

The playground runs real read tools against live data and sends what they
return to a third-party model. A name or phone number sent there cannot be
recalled, while a value hidden by mistake costs the model one detail. Every
choice below leans toward masking for that reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, TypeAlias

JsonValue: TypeAlias = None | bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"]

REDACTED = "[redacted]"
EMAIL_MASK = "[email]"
PHONE_MASK = "[phone]"

DEFAULT_RESULT_LIMIT = 16 * 1024

# Keys are split into words (camelCase and snake_case alike) and matched on
# whole words, never substrings: "pin" must not catch "shipping", nor "name"
# "rename_count".
#
# Contact words mark a key as personal wherever they appear, since
# "phone_verified" or "email_sent_to" are about the person's contact details.
_CONTACT_WORDS = frozenset(
    {"phone", "phones", "mobile", "mobiles", "email", "emails", "address", "addresses", "aadhaar", "otp", "whatsapp"}
)
# These mark a key only as its last word: "customer_name" and "cancel_reason"
# hold what people typed or are called, while "reason_code" is an enum and
# "note_count" a number. The cost is that "hub_name" is masked too.
_TRAILING_WORDS = frozenset(
    {
        "name", "names", "username", "contact", "note", "notes", "reason", "remark", "remarks",
        "comment", "comments", "instruction", "instructions", "landmark", "pin", "dob", "birth",
    }
)
_LATITUDE_LONGITUDE = frozenset({"lat", "lng", "lon", "latitude", "longitude"})
_LOCATION_WORDS = frozenset({"location", "coordinates", "coords"})

# Two decimal places is about a kilometre: enough for "which part of town",
# not enough to find a door.
_COORDINATE_PLACES = 2

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")

# The lookbehind lets a match start only where a run of address characters
# starts. Without it every position inside a long word is tried again, which
# turns a 16 KB result into seconds of backtracking.
_EMAIL = re.compile(
    r"(?<![\w.!#$%&'*+/=?^`{|}~-])[\w.!#$%&'*+/=?^`{|}~-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z0-9-]{2,}",
    re.IGNORECASE,
)

# A phone stands apart. Glued to a letter, a digit or a plus, or joined by a
# dash to an id on either side, it is part of that id: this is what keeps
# "BK-9876543210" and a UUID such as "91987654-3210-4abc-..." intact, while
# the digits in "2026-09-29T20:57:00+05:30" are short runs split by dashes
# and colons and never add up to a number. A bare ten-digit run starting
# 6-9 is masked even if it is an order number: the two cannot be told apart,
# and a hidden order number is the cheaper mistake.
_PHONE = re.compile(
    r"(?<![\w+-])"
    r"(?:"
    # E.164: a plus, then 8 to 15 digits, spaces or dashes allowed between.
    r"\+\d(?:[ -]?\d){7,14}"
    r"|"
    # Indian mobile: optional 91 or 0 trunk prefix, ten digits from 6-9.
    r"(?:(?:91|0)[ -]?)?[6-9](?:[ -]?\d){9}"
    r")"
    r"(?!-?\w)"
)

# Coordinates also arrive as text ("12.971599,77.594566"). Only a string that
# is nothing but decimals is treated so; a timestamp under a location key
# ("20:57:00.123456") must come through untouched.
_DECIMALS_ONLY = re.compile(r"\s*-?\d+\.\d+(?:[,;\s]+-?\d+\.\d+)*\s*")
_DECIMAL = re.compile(r"-?\d+\.\d+")

_MARKER = "…[truncated {} bytes]"


def redact(value: Any) -> JsonValue:
    """A copy of JSON-like data with personal data masked.

    Keys are kept as they are; only values change. Applying it twice
    changes nothing more.
    """
    return _redact(value, in_location=False)


def redact_text(text: str) -> str:
    """Mask every e-mail address and phone number inside free text.

    E-mails go first, because an address such as 9876543210@example.com
    contains a phone-shaped run that would otherwise leave the domain behind.
    """
    return _PHONE.sub(PHONE_MASK, _EMAIL.sub(EMAIL_MASK, text))


def cap_result(value: Any, limit: int = DEFAULT_RESULT_LIMIT) -> str:
    """Serialise a tool result to JSON, at most `limit` UTF-8 bytes long.

    A longer result is cut on a character boundary and ends with a visible
    marker saying how much was dropped; the cut text is deliberately no
    longer valid JSON, so nobody mistakes it for the whole result. Redact
    before capping: a cut through an e-mail address leaves a fragment the
    patterns no longer recognise.
    """
    text = json.dumps(value, ensure_ascii=False)
    encoded = text.encode("utf-8")
    if len(encoded) <= limit:
        return text
    # The marker must fit inside the limit too. Its width depends on the
    # number of bytes dropped, which can be no more than the whole length,
    # so that is the width reserved.
    reserved = len(_MARKER.format(len(encoded)).encode("utf-8"))
    if limit < reserved:
        raise ValueError(f"limit {limit} is too small to hold the truncation marker")
    kept = encoded[: limit - reserved].decode("utf-8", errors="ignore")
    dropped = len(encoded) - len(kept.encode("utf-8"))
    return kept + _MARKER.format(dropped)


def _redact(value: Any, *, in_location: bool) -> JsonValue:
    if isinstance(value, Mapping):
        return {key: _redact_entry(str(key), item, in_location=in_location) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_redact(item, in_location=in_location) for item in value]
    if isinstance(value, str):
        # Rounding first means the text the patterns see is the text that is
        # returned, so a second pass finds nothing new.
        return redact_text(_round_coordinate_text(value) if in_location else value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return _round_coordinate(value) if in_location else value
    raise TypeError(f"cannot redact a {type(value).__name__}; expected JSON-like data")


def _redact_entry(key: str, value: Any, *, in_location: bool) -> JsonValue:
    words = _key_words(key)
    if not words:
        return _redact(value, in_location=in_location)
    if _CONTACT_WORDS.intersection(words) or words[-1] in _TRAILING_WORDS:
        return REDACTED
    located = in_location or words[-1] in _LATITUDE_LONGITUDE or words[-1] in _LOCATION_WORDS
    return _redact(value, in_location=located)


def _key_words(key: str) -> list[str]:
    snake = _CAMEL_BOUNDARY.sub("_", key).lower()
    return [word for word in _NOT_ALNUM.split(snake) if word]


def _round_coordinate(number: int | float) -> int | float:
    # Whole numbers carry no hidden precision; only fractions are rounded.
    return round(number, _COORDINATE_PLACES) if isinstance(number, float) else number


def _round_coordinate_text(text: str) -> str:
    if not _DECIMALS_ONLY.fullmatch(text):
        return text
    return _DECIMAL.sub(lambda m: _format_coordinate(m.group()), text)


def _format_coordinate(decimal: str) -> str:
    # Already short enough: left as written, so rounding never adds digits.
    if len(decimal.partition(".")[2]) <= _COORDINATE_PLACES:
        return decimal
    return f"{float(decimal):.{_COORDINATE_PLACES}f}"
