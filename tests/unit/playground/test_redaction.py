import json
import re
from datetime import timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.playground.redaction import (
    DEFAULT_RESULT_LIMIT,
    EMAIL_MASK,
    PHONE_MASK,
    REDACTED,
    cap_result,
    redact,
    redact_text,
)

PROPERTY = settings(max_examples=75, deadline=None, database=None)

MARKER = re.compile(r"…\[truncated (\d+) bytes\]\Z")


# --- personal keys ---------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    [
        "name", "first_name", "customer_name", "Name", "CUSTOMER_NAME", "customerName", "FirstName",
        "phone", "mobile", "customer_phone", "customerPhone", "phone_number", "alt_mobile_no",
        "address", "pickup_address", "address_line1", "addressLine2", "drop-address",
        "email", "Email", "customer_email", "email_id",
        "note", "notes", "delivery_notes", "reason", "cancel_reason", "remarks", "comment", "comments",
        "otp", "delivery_otp", "pin", "delivery_pin", "aadhaar", "aadhaar_no", "username",
        "landmark", "delivery_instructions", "dob", "date_of_birth", "emergency_contact", "whatsapp",
        "phones", "alt_emails", "addresses", "customer_names",
    ],
)
def test_personal_keys_are_masked_whatever_their_value(key):
    for value in ["Asha Rao", 9876543210, {"first": "Asha"}, ["a", "b"], None, True]:
        assert redact({key: value}) == {key: REDACTED}


@pytest.mark.parametrize(
    "key",
    [
        "status", "shipping_fee", "rename_count", "reason_code", "note_count", "pincode", "pin_code",
        "booking_id", "zone", "named_slot", "amount",
    ],
)
def test_other_keys_are_not_masked_by_name(key):
    assert redact({key: "stalled"}) == {key: "stalled"}


def test_masking_reaches_nested_objects_and_lists():
    rows = {
        "items": [
            {"booking_id": "BK-1001", "customer": {"name": "Asha Rao", "phone": "98765 43210"}, "status": "stalled"},
            {"booking_id": "BK-1002", "customer": {"name": "Ravi K"}, "status": "assigned"},
        ],
        "next_cursor": None,
    }

    assert redact(rows) == {
        "items": [
            {"booking_id": "BK-1001", "customer": {"name": REDACTED, "phone": REDACTED}, "status": "stalled"},
            {"booking_id": "BK-1002", "customer": {"name": REDACTED}, "status": "assigned"},
        ],
        "next_cursor": None,
    }


def test_redact_returns_a_copy_and_leaves_the_input_alone():
    original = {"customer_name": "Asha", "stops": ("hub", "door")}

    redacted = redact(original)

    assert original == {"customer_name": "Asha", "stops": ("hub", "door")}
    assert redacted == {"customer_name": REDACTED, "stops": ["hub", "door"]}


def test_non_json_values_are_refused():
    with pytest.raises(TypeError, match="set"):
        redact({"tags": {"fragile"}})


# --- e-mails and phones inside text -----------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mail asha.rao@example.co.in today", f"mail {EMAIL_MASK} today"),
        ("<ASHA+ops@Example.COM>", f"<{EMAIL_MASK}>"),
        ("9876543210@sms.example.com", EMAIL_MASK),
        ("call 9876543210", f"call {PHONE_MASK}"),
        ("call 98765 43210 now", f"call {PHONE_MASK} now"),
        ("call 98765-43210.", f"call {PHONE_MASK}."),
        ("call +91 98765 43210", f"call {PHONE_MASK}"),
        ("call +91-98765-43210", f"call {PHONE_MASK}"),
        ("call +919876543210", f"call {PHONE_MASK}"),
        ("call 919876543210", f"call {PHONE_MASK}"),
        ("call 09876543210", f"call {PHONE_MASK}"),
        ("call 0 98765 43210", f"call {PHONE_MASK}"),
        ("(6123456789)", f"({PHONE_MASK})"),
        ("us +14155550100 uk +44 20 7946 0958", f"us {PHONE_MASK} uk {PHONE_MASK}"),
        ("a: 9876543210, b: 7012345678", f"a: {PHONE_MASK}, b: {PHONE_MASK}"),
        ("booking 9876543210", f"booking {PHONE_MASK}"),
    ],
)
def test_emails_and_phones_in_text_are_masked(text, expected):
    assert redact_text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "2026-09-29",
        "2026-09-29T20:57:00+05:30",
        "2026-09-29T20:57:00.123456+05:30",
        "2026-09-29 20:57:00",
        "29/09/2026",
        "BK-1234567890",
        "BK-9876543210",
        "ORD_9876543210",
        "order#A9876543210",
        "123e4567-e89b-12d3-a456-426614174000",
        "b9876543-2109-4876-9432-109876543210",
        "09919063-135e-ec44-7d92-234bfe4d580a",
        "91987654-3210-4abc-9def-0123456789ab",
        "9876543210abc",
        "9876543210-ext",
        "98765432101",
        "5876543210",
        "12345",
        "+0530",
        "+91 12345",
        "₹ 1,499.00",
        "1759159020",
        "1759159020000",
        "distance 9.876543210 km",
        "user@localhost",
    ],
)
def test_dates_ids_and_ordinary_numbers_are_not_masked(text):
    assert redact_text(text) == text


def test_strings_are_scanned_under_every_key():
    assert redact({"status_text": "rider 9876543210 stuck", "summary": ["ops@example.com"]}) == {
        "status_text": f"rider {PHONE_MASK} stuck",
        "summary": [EMAIL_MASK],
    }


def test_numbers_are_not_scanned_as_phones():
    assert redact({"amount_paise": 9876543210}) == {"amount_paise": 9876543210}


# --- coordinates -------------------------------------------------------------


def test_coordinate_keys_are_rounded_to_two_places():
    assert redact({"lat": 12.971599, "lng": 77.594566, "Latitude": -33.868820, "pickupLon": 151.209296}) == {
        "lat": 12.97,
        "lng": 77.59,
        "Latitude": -33.87,
        "pickupLon": 151.21,
    }


def test_pairs_under_location_keys_are_rounded():
    assert redact(
        {
            "location": [12.971599, 77.594566],
            "drop_coordinates": [[77.594566, 12.971599], [77.601234, 12.978765]],
        }
    ) == {
        "location": [12.97, 77.59],
        "drop_coordinates": [[77.59, 12.97], [77.6, 12.98]],
    }


def test_location_object_rounds_its_numbers_but_keeps_its_timestamps():
    assert redact(
        {"location": {"lat": 12.971599, "lon": 77.594566, "accuracy_m": 4.5, "at": "2026-09-29T20:57:00.123456+05:30"}}
    ) == {"location": {"lat": 12.97, "lon": 77.59, "accuracy_m": 4.5, "at": "2026-09-29T20:57:00.123456+05:30"}}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("12.971599,77.594566", "12.97,77.59"),
        ("12.971599, 77.594566", "12.97, 77.59"),
        (" -33.868820 151.209296 ", " -33.87 151.21 "),
        ("12.9", "12.9"),
        ("near the market", "near the market"),
    ],
)
def test_coordinates_written_as_text_are_rounded(text, expected):
    assert redact({"location": text}) == {"location": expected}


def test_whole_coordinates_and_numbers_outside_location_stay_as_they_are():
    assert redact({"lat": 12, "distance_km": 3.14159, "stop": {"eta_min": 7.25}}) == {
        "lat": 12,
        "distance_km": 3.14159,
        "stop": {"eta_min": 7.25},
    }


def test_personal_key_inside_location_is_still_masked():
    assert redact({"location": {"address": "14 MG Road", "lat": 12.971599}}) == {
        "location": {"address": REDACTED, "lat": 12.97}
    }


# --- properties -----------------------------------------------------------------


@st.composite
def indian_mobiles(draw):
    prefix = draw(st.sampled_from(["", "+91", "+91 ", "+91-", "91", "91 ", "0", "0 "]))
    digits = [draw(st.sampled_from("6789"))] + draw(st.lists(st.sampled_from("0123456789"), min_size=9, max_size=9))
    separators = draw(st.lists(st.sampled_from(["", "", "", " ", "-"]), min_size=9, max_size=9))
    return prefix + digits[0] + "".join(sep + digit for sep, digit in zip(separators, digits[1:], strict=True))


@st.composite
def e164_numbers(draw):
    rest = draw(st.lists(st.sampled_from("0123456789"), min_size=7, max_size=14))
    separators = draw(st.lists(st.sampled_from(["", "", " ", "-"]), min_size=len(rest), max_size=len(rest)))
    first = draw(st.sampled_from("123456789"))
    return "+" + first + "".join(sep + digit for sep, digit in zip(separators, rest, strict=True))


secrets = st.one_of(st.emails(), indian_mobiles(), e164_numbers())
filler = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
plain_keys = st.sampled_from(["data", "items", "summary", "text", "payload", "rows", "status", "detail", "message"])


@st.composite
def texts_with_a_secret(draw):
    secret = draw(secrets)
    return f"{draw(filler)} {secret} {draw(filler)}", secret


def structures(leaves):
    return st.recursive(
        leaves,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(plain_keys, children, max_size=4),
        ),
        max_leaves=12,
    )


def strings_in(value):
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)
    elif isinstance(value, str):
        yield value


@PROPERTY
@given(structures(texts_with_a_secret()))
def test_no_planted_email_or_phone_survives_anywhere(planted):
    def text_of(node):
        if isinstance(node, tuple):
            return node[0]
        if isinstance(node, list):
            return [text_of(item) for item in node]
        return {key: text_of(item) for key, item in node.items()}

    def secrets_of(node):
        if isinstance(node, tuple):
            yield node[1]
        elif isinstance(node, list):
            for item in node:
                yield from secrets_of(item)
        else:
            for item in node.values():
                yield from secrets_of(item)

    redacted_strings = list(strings_in(redact(text_of(planted))))

    for secret in secrets_of(planted):
        assert not any(secret in s for s in redacted_strings), secret


@PROPERTY
@given(st.text(max_size=40), secrets, st.text(max_size=40))
def test_no_secret_survives_redact_text_whatever_surrounds_it(before, secret, after):
    assert secret not in redact_text(f"{before} {secret} {after}")


json_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=30),
    secrets,
    st.sampled_from(["12.971599,77.594566", "2026-09-29T20:57:00+05:30", "BK-9876543210"]),
)
any_keys = st.one_of(
    plain_keys,
    st.sampled_from(["customer_name", "phone", "lat", "lng", "location", "coordinates", "notes", "reason_code"]),
    st.text(max_size=10),
)
json_values = st.recursive(
    json_leaves,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(any_keys, children, max_size=4)),
    max_leaves=15,
)


@PROPERTY
@given(json_values)
def test_redaction_is_idempotent(value):
    once = redact(value)

    assert redact(once) == once


utc_offsets = st.builds(
    timezone,
    st.timedeltas(min_value=timedelta(hours=-14), max_value=timedelta(hours=14)).map(
        lambda t: timedelta(minutes=round(t.total_seconds() / 60))
    ),
)
harmless_leaves = st.one_of(
    st.integers(),
    st.floats(allow_nan=False),
    st.dates().map(lambda d: d.isoformat()),
    st.datetimes(timezones=utc_offsets).map(lambda d: d.isoformat()),
    st.integers(min_value=0, max_value=10**12 - 1).map(lambda n: f"BK-{n:010d}"),
    st.uuids().map(str),
)
harmless_keys = st.sampled_from(["amount", "count", "distance_km", "eta_min", "created_at", "booking_id", "status"])


@PROPERTY
@given(
    st.recursive(
        harmless_leaves,
        lambda children: st.one_of(
            st.lists(children, max_size=4), st.dictionaries(harmless_keys, children, max_size=4)
        ),
        max_leaves=12,
    )
)
def test_non_personal_numbers_dates_and_ids_are_unchanged(value):
    assert redact(value) == value


# --- capping ----------------------------------------------------------------------


def test_small_result_is_plain_json_with_text_as_written():
    value = {"hub": "Bengaluru — Koramangala", "count": 3}

    assert cap_result(value) == json.dumps(value, ensure_ascii=False)


def test_result_at_exactly_the_limit_is_not_cut():
    value = "x" * 98

    assert cap_result(value, limit=100) == json.dumps(value)


def test_long_result_is_cut_with_a_marker_counting_dropped_bytes():
    value = {"rows": ["r" * 100] * 400}
    full = json.dumps(value).encode("utf-8")

    capped = cap_result(value)

    assert len(capped.encode("utf-8")) <= DEFAULT_RESULT_LIMIT == 16 * 1024
    kept = MARKER.split(capped)[0]
    assert full.startswith(kept.encode("utf-8"))
    assert int(MARKER.search(capped).group(1)) == len(full) - len(kept.encode("utf-8"))


def test_cut_never_splits_a_multibyte_character():
    # "₹" is three bytes; a cut landing inside one must back off to its start.
    value = "₹" * 200

    for limit in range(60, 90):
        capped = cap_result(value, limit=limit)
        kept = MARKER.split(capped)[0]
        assert kept == '"' + "₹" * (len(kept) - 1)
        assert len(capped.encode("utf-8")) <= limit


def test_limit_too_small_for_the_marker_is_refused():
    with pytest.raises(ValueError, match="too small"):
        cap_result("x" * 100, limit=10)


@PROPERTY
@given(json_values, st.integers(min_value=40, max_value=600))
def test_capped_result_never_exceeds_the_limit_and_is_an_honest_prefix(value, limit):
    full = json.dumps(value, ensure_ascii=False)

    capped = cap_result(value, limit=limit)

    assert len(capped.encode("utf-8")) <= limit
    if len(full.encode("utf-8")) <= limit:
        assert capped == full
    else:
        match = MARKER.search(capped)
        assert match is not None
        kept = capped[: match.start()]
        assert full.startswith(kept)
        assert int(match.group(1)) == len(full.encode("utf-8")) - len(kept.encode("utf-8"))


def test_redacted_result_can_be_capped_with_its_masks_intact():
    assert cap_result(redact({"customer_phone": "9876543210", "note": "x"})) == json.dumps(
        {"customer_phone": REDACTED, "note": REDACTED}
    )
