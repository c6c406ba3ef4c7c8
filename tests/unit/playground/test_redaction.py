import json
import re

import pytest

from services.common.redaction.patterns import luhn_valid, verhoeff_valid
from services.common.redaction.redactor import RedactionRules, Redactor, key_words, redact, redact_text
from services.playground.redaction import DEFAULT_RESULT_LIMIT, cap_result
from tests.unit.playground.planted import luhn_check_digit, verhoeff_check_digit

MARKER = re.compile(r"…\[truncated (\d+) bytes\]\Z")

# 11 digits and their Verhoeff check digit: a well-formed Aadhaar number.
AADHAAR = "23634523547" + verhoeff_check_digit("23634523547")
CARD = "4111111111111111"


# --- key rules -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "kind"),
    [
        ("name", "person"),
        ("customer_name", "person"),
        ("riderName", "person"),
        ("rider_name", "person"),
        ("RIDER-NAME", "person"),
        ("Customer Name", "person"),
        ("fullname", "person"),
        ("first_name", "person"),
        ("rider", "person"),
        ("customer", "person"),
        ("driver", "person"),
        ("recipient", "person"),
        ("sender", "person"),
        ("contact", "person"),
        ("emergency_contact", "person"),
        ("assigned_to", "person"),
        ("assignedTo", "person"),
        ("consignee", "person"),
        ("riders", "person"),
        ("phone", "phone"),
        ("mobile", "phone"),
        ("customer_phone", "phone"),
        ("alt_mobile_no", "phone"),
        ("whatsapp", "phone"),
        ("phone_number", "phone"),
        ("email", "email"),
        ("customer_email", "email"),
        ("e_mail", "email"),
        ("address", "address"),
        ("drop_address", "address"),
        ("addressLine1", "address"),
        ("street", "address"),
        ("landmark", "address"),
        ("pincode", "address"),
        ("pin_code", "address"),
        ("zip", "address"),
        ("aadhaar_no", "aadhaar"),
        ("pan", "pan"),
        ("upi_id", "upi"),
        ("ifsc", "ifsc"),
        ("vehicle_number", "vehicle"),
        ("registration_no", "vehicle"),
        ("card_number", "card"),
        ("notes", "note"),
        ("delivery_instructions", "note"),
        ("remarks", "note"),
        ("otp", "secret"),
        ("delivery_pin", "secret"),
        ("dob", "dob"),
        ("date_of_birth", "dob"),
    ],
)
def test_a_personal_key_has_its_value_replaced_by_its_kind(key, kind):
    assert redact({key: "Asha Rao"}) == {key: f"<{kind}#1>"}


@pytest.mark.parametrize(
    "key",
    [
        "status",
        "rider_id",
        "customer_id",
        "riderId",
        "customer_tier",
        "rider_status",
        "zone",
        "zone_name",
        "hub_name",
        "reason",
        "reason_code",
        "note_count",
        "vehicle",
        "promised_by",
        "shipping_fee",
        "rename_count",
        "booking_id",
        "amount",
        "named_slot",
        "assigned_at",
    ],
)
def test_other_keys_keep_their_values(key):
    assert redact({key: "stalled"}) == {key: "stalled"}


def test_key_words_are_normalised_across_spellings():
    assert key_words("riderName") == key_words("rider_name") == key_words("RIDER-NAME") == ("rider", "name")
    assert key_words("addressLine1") == ("address", "line")
    assert key_words("XMLName") == ("xml", "name")


def test_a_personal_key_replaces_a_nested_object_whole():
    redacted = redact({"customer": {"name": "Asha Rao", "id": 7, "tier": "gold"}, "booking_id": 1001})

    assert redacted == {"customer": "<person#1>", "booking_id": 1001}


def test_a_list_under_a_personal_key_keeps_its_length_and_tells_its_members_apart():
    redacted = redact({"riders": ["Ravi K", "Asha Rao", "Ravi K"]})

    assert redacted == {"riders": ["<person#1>", "<person#2>", "<person#1>"]}


@pytest.mark.parametrize("value", [None, True, False, "", [], {}])
def test_an_absent_value_under_a_personal_key_stays_absent(value):
    assert redact({"customer_phone": value}) == {"customer_phone": value}


def test_keys_that_are_personal_values_are_replaced_and_their_records_walked():
    redacted = redact({"stats": {"ramesh.k@example.com": {"trips": 4}, "9876543210": {"trips": 2}}})

    assert redacted == {"stats": {"<email#1>": {"trips": 4}, "<phone#1>": {"trips": 2}}}


def test_two_keys_that_become_one_placeholder_keep_both_values():
    redacted = redact({"9876543210": {"trips": 4}, "+91 98765 43210": {"trips": 2}})

    assert redacted == {"<phone#1>": {"trips": 4}, "<phone#1> (2)": {"trips": 2}}


# --- numbers -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("number", "expected"),
    [
        (9876543210, "<phone#1>"),
        (919876543210, "<phone#1>"),
        (int(AADHAAR), "<aadhaar#1>"),
        (int(CARD), "<card#1>"),
        (9876543210.0, "<phone#1>"),
    ],
)
def test_numbers_are_checked_like_text(number, expected):
    assert redact({"alt": number}) == {"alt": expected}


@pytest.mark.parametrize("number", [1001, 42, 1499.5, 0.82, 1759159020, 1759159020000, -9876543210, 5876543210])
def test_ordinary_numbers_stay_numbers(number):
    assert redact({"value": number}) == {"value": number}


# --- text patterns ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mail asha.rao@example.co.in today", "mail <email#1> today"),
        ("<ASHA+ops@Example.COM>", "<<email#1>>"),
        ("9876543210@sms.example.com", "<email#1>"),
        ("pay ramesh.k@okaxis or 9876543210@ybl.", "pay <upi#1> or <upi#2>."),
        ("call 9876543210", "call <phone#1>"),
        ("call 98765 43210 now", "call <phone#1> now"),
        ("call 98765-43210.", "call <phone#1>."),
        ("call 987 654 3210", "call <phone#1>"),
        ("call +91 98765 43210", "call <phone#1>"),
        ("call +91-98765-43210", "call <phone#1>"),
        ("call (+91) 9876543210", "call <phone#1>"),
        ("call 919876543210", "call <phone#1>"),
        ("call 09876543210", "call <phone#1>"),
        ("call 0 98765 43210", "call <phone#1>"),
        ("office 080-2345 6789", "office <phone#1>"),
        ("office (080) 23456789", "office <phone#1>"),
        ("office 0124 234 5678", "office <phone#1>"),
        ("office +91 80 2345 6789", "office <phone#1>"),
        ("us +14155550100 uk +44 20 7946 0958", "us <phone#1> uk <phone#2>"),
        ("us +1 (415) 555-0100, fr +33 1 23 45 67 89", "us <phone#1>, fr <phone#2>"),
        ("+44 20 7946 0958 12 min", "<phone#1> 12 min"),
        (f"aadhaar {AADHAAR[:4]} {AADHAAR[4:8]} {AADHAAR[8:]}", "aadhaar <aadhaar#1>"),
        (f"aadhaar {AADHAAR}", "aadhaar <aadhaar#1>"),
        ("PAN ABCPE1234F", "PAN <pan#1>"),
        ("ifsc SBIN0001234", "ifsc <ifsc#1>"),
        ("bike KA 01 AB 1234, van DL3CAB1234, KA-05-MX-9876", "bike <vehicle#1>, van <vehicle#2>, <vehicle#3>"),
        ("bh 22 BH 1234 AA", "bh <vehicle#1>"),
        ("card 4111 1111 1111 1111", "card <card#1>"),
        ("amex 3782-822463-10005", "amex <card#1>"),
        ("from 192.168.1.20 and 2001:db8::1.", "from <ip#1> and <ip#2>."),
        ("drop at 14 Residency Road, Bengaluru", "drop at <address#1>, Bengaluru"),
        ("123, 12th Main, Indiranagar", "<address#1>, Indiranagar"),
        ("Flat 3B, Prestige Shantiniketan", "<address#1>, Prestige Shantiniketan"),
    ],
)
def test_personal_values_in_text_are_replaced(text, expected):
    assert redact_text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "2026-09-29",
        "2026-09-29T20:57:00+05:30",
        "2026-09-29T20:57:00.123456+05:30",
        "2026-09-29 20:57:00",
        "29/09/2026",
        "BK-1042",
        "BK-9876543210",
        "ORD_9876543210",
        "order#A9876543210",
        "ORD-2026-000123",
        "OR-10-1234",
        "BLR-HUB-04",
        "123e4567-e89b-12d3-a456-426614174000",
        "dd4b0100-026b-494d-a6ef-7805e933ce48",
        "91987654-3210-4abc-9def-0123456789ab",
        "9876543210abc",
        "98765432101",
        "5876543210",
        f"{AADHAAR[:-1]}{(int(AADHAAR[-1]) + 1) % 10}",
        "4111 1111 1111 1112",
        "1759159020000",
        "+0530",
        "+91 12345",
        "₹ 1,499.00",
        "distance 9.876543210 km",
        "ETA 12 min",
        "20:57:00",
        "aa:bb:cc:dd:ee:ff",
        "v1.2.3",
        "2 bookings in HSR Layout Sector 2",
        "Koramangala 4th Block",
        "Anna Nagar",
        "Vijay Nagar and Gandhi Road",
        "EV scooter, in_transit, prepaid",
        "similarity 0.8734, confidence 0.82",
    ],
)
def test_ids_dates_zones_and_ordinary_numbers_are_left_alone(text):
    assert redact_text(text) == text


def test_order_ids_that_fail_the_aadhaar_checksum_are_not_eaten():
    order_id = AADHAAR[:-1] + str((int(AADHAAR[-1]) + 1) % 10)

    assert redact({"order_id": int(order_id), "ref": order_id}) == {"order_id": int(order_id), "ref": order_id}


# --- names ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ring twice, ask for Ananya", "ring twice, ask for <person#1>"),
        ("Ananya Rao called", "<person#1> called"),
        ("ANANYA RAO called; ananya rao again", "<person#1> called; <person#1> again"),
        ("Ananya's parcel", "<person#1>'s parcel"),
        ("rider D'Souza", "rider <person#1>"),
        ("Mr. Tanmay Bhide called", "Mr. <person#1> called"),
        ("SHRI DINKAR POL, BLR-HUB-09", "SHRI <person#1>, BLR-HUB-09"),
        ("Shri Dinkar Pol DEL-HUB-09", "Shri <person#1> DEL-HUB-09"),
        ("Rao Anna Nagar", "<person#1> Anna Nagar"),
        ("James Smith and Maria Garcia", "<person#1> and <person#2>"),
    ],
)
def test_names_in_text_are_replaced(text, expected):
    assert redact_text(text) == expected


# --- coordinates ---------------------------------------------------------------------------


def test_coordinate_keys_are_rounded_to_the_zone():
    redacted = redact({"lat": 12.971599, "lng": 77.594566, "Latitude": -33.868820, "pickupLon": 151.209296})

    assert redacted == {"lat": 12.97, "lng": 77.59, "Latitude": -33.87, "pickupLon": 151.21}


def test_pairs_under_location_keys_and_exact_pairs_anywhere_are_rounded():
    assert redact(
        {
            "location": [12.971599, 77.594566],
            "drop_coordinates": [[77.594566, 12.971599], [77.601234, 12.978765]],
            "at": [12.971599, 77.594566],
            "scores": [0.5, 0.25],
        }
    ) == {
        "location": [12.97, 77.59],
        "drop_coordinates": [[77.59, 12.97], [77.6, 12.98]],
        "at": [12.97, 77.59],
        "scores": [0.5, 0.25],
    }


def test_a_location_object_rounds_its_numbers_but_keeps_its_timestamps():
    assert redact(
        {"location": {"lat": 12.971599, "lon": 77.594566, "accuracy_m": 4.5, "at": "2026-09-29T20:57:00.123456+05:30"}}
    ) == {"location": {"lat": 12.97, "lon": 77.59, "accuracy_m": 4.5, "at": "2026-09-29T20:57:00.123456+05:30"}}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("rider at 12.971599,77.594566 since 5 min", "rider at 12.97,77.59 since 5 min"),
        ("rider at 12.971599, 77.594566.", "rider at 12.97, 77.59."),
        ("https://maps.example/@12.971599,77.594566,17z", "https://maps.example/@12.97,77.59,17z"),
        ("lat: 12.971599 lng: 77.594566", "lat: 12.97 lng: 77.59"),
        ("lat=1.2903", "lat=1.29"),
        ('{"lat": "12.971599"}', '{"lat": "12.97"}'),
        ("score 0.1602 at 34.770828, 81.607186", "score 0.1602 at 34.77, 81.61"),
        ("12.9, 77.5", "12.9, 77.5"),
    ],
)
def test_coordinates_in_text_are_rounded(text, expected):
    assert redact_text(text) == expected


def test_a_decimal_string_under_a_location_key_is_rounded():
    redacted = redact({"location": "12.971599,77.594566", "lat": "12.971599"})

    assert redacted == {"location": "12.97,77.59", "lat": "12.97"}


def test_whole_coordinates_and_precise_numbers_elsewhere_stay_as_they_are():
    assert redact({"lat": 12, "distance_km": 3.14159, "stop": {"eta_min": 7.25}, "similarity": 0.8734}) == {
        "lat": 12,
        "distance_km": 3.14159,
        "stop": {"eta_min": 7.25},
        "similarity": 0.8734,
    }


def test_a_personal_key_inside_a_location_is_still_replaced():
    assert redact({"location": {"address": "14 MG Road", "lat": 12.971599}}) == {
        "location": {"address": "<address#1>", "lat": 12.97}
    }


# --- placeholders and the report --------------------------------------------------------


def test_one_value_is_one_placeholder_across_a_run_whatever_its_spelling():
    redactor = Redactor()

    prompt = redactor.text("Customer on +91 98450 12345 asks about Ananya Rao")
    result = redactor.value(
        {"customer_phone": "09845012345", "customer_name": "ananya  rao", "alt": 9845012345, "other": "98450 54321"}
    )

    assert prompt == "Customer on <phone#1> asks about <person#1>"
    assert result == {
        "customer_phone": "<phone#1>",
        "customer_name": "<person#1>",
        "alt": "<phone#1>",
        "other": "<phone#2>",
    }


def test_each_run_numbers_from_one():
    assert redact_text("9845054321") == redact_text("9845012345") == "<phone#1>"


def test_the_report_counts_every_replacement_by_kind():
    redactor = Redactor()

    redactor.value(
        {
            "customer_name": "Asha",
            "phone": "9845012345",
            "text": "call 9845012345 or asha@example.in",
            "lat": 12.971599,
            "lng": 77.594566,
            "status": "waiting",
        }
    )

    assert redactor.report() == {"coordinate": 2, "email": 1, "person": 1, "phone": 2}


def test_repeated_texts_are_counted_each_time():
    redactor = Redactor()

    redactor.value([{"customer_phone": "9845012345"}] * 3)

    assert redactor.report() == {"phone": 3}


def test_redacting_twice_changes_nothing_more_and_counts_nothing_more():
    redactor = Redactor()
    value = {
        "customer": {"name": "Asha"},
        "text": "call 9845012345 at 12.971599,77.594566",
        "lat": 12.971599,
        "9845054321": "BK-1042",
        "notes": "Mr. Tanmay Bhide",
    }
    once = redactor.value(value)
    report = redactor.report()

    assert redactor.value(once) == once
    assert redactor.report() == report
    assert redact(once) == once


def test_placeholders_in_text_are_never_matched_again():
    assert redact_text("<phone#12> and <person#3> at <card#7>") == "<phone#12> and <person#3> at <card#7>"


def test_redact_returns_a_copy_and_leaves_the_input_alone():
    original = {"customer_name": "Asha", "stops": ("hub", "door")}

    redacted = redact(original)

    assert original == {"customer_name": "Asha", "stops": ("hub", "door")}
    assert redacted == {"customer_name": "<person#1>", "stops": ["hub", "door"]}


def test_non_json_values_are_refused():
    with pytest.raises(TypeError, match="set"):
        redact({"tags": {"fragile"}})


# --- configured rules --------------------------------------------------------------------


def test_extra_key_words_replace_their_fields_under_their_own_kind():
    rules = RedactionRules.build(extra_keys=["guardian", "next_of_kin"])

    redacted = redact({"guardian_details": {"x": 1}, "rider_next_of_kin": "Asha", "kin_count": 2}, rules)

    assert redacted == {"guardian_details": "<guardian#1>", "rider_next_of_kin": "<next_of_kin#1>", "kin_count": 2}


def test_extra_patterns_run_before_the_built_in_ones():
    rules = RedactionRules.build(extra_patterns={"employee": r"EMP-\d{5}", "ticket": r"\bTK\d{6}\b"})

    redacted = redact({"text": "EMP-98765 raised TK123456 for 9845012345", "id": 1042}, rules)

    assert redacted == {"text": "<employee#1> raised <ticket#1> for <phone#1>", "id": 1042}


def test_an_extra_pattern_also_checks_short_numbers():
    rules = RedactionRules.build(extra_patterns={"staff": r"\A7\d{3}\Z"})

    assert redact({"staff_no": 7123, "count": 8123}, rules) == {"staff_no": "<staff#1>", "count": 8123}


@pytest.mark.parametrize(
    ("keys", "patterns", "message"),
    [
        (["--"], {}, "has no words"),
        ([], {"Bad Kind": "x"}, "lower-case"),
        ([], {"ticket": "(unclosed"}, "does not compile"),
    ],
)
def test_bad_extra_rules_are_refused(keys, patterns, message):
    with pytest.raises(ValueError, match=message):
        RedactionRules.build(extra_keys=keys, extra_patterns=patterns)


def test_the_built_in_rules_are_the_default():
    assert redact({"customer_name": "Asha"}, RedactionRules.build()) == redact({"customer_name": "Asha"})


# --- checksums ----------------------------------------------------------------------------


def test_verhoeff_accepts_its_check_digit_and_nothing_else():
    # The textbook example: 236 has check digit 3.
    assert verhoeff_valid("2363")
    assert [d for d in "0123456789" if verhoeff_valid("236" + d)] == ["3"]
    assert verhoeff_valid(AADHAAR)


def test_luhn_accepts_its_check_digit_and_nothing_else():
    assert luhn_valid(CARD)
    assert [d for d in "0123456789" if luhn_valid("411111111111111" + d)] == [luhn_check_digit("411111111111111")]


# --- capping ------------------------------------------------------------------------------


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


def test_redacted_result_can_be_capped_with_its_placeholders_intact():
    assert cap_result(redact({"customer_phone": "9876543210", "note": "x"})) == json.dumps(
        {"customer_phone": "<phone#1>", "note": "<note#1>"}
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("KeyError: 'ananya.rao@example.in'", "KeyError: '<email#1>'"),
        ("o'brien@example.com", "<email#1>"),
        ("'@example.com", "<email#1>"),
    ],
)
def test_a_quote_around_an_address_stays_outside_its_placeholder(text, expected):
    assert redact_text(text) == expected
