"""A value written to walk around a pattern is read as a person reads it:
folded, invisible characters dropped, digits of any script, any separators,
a spelled-out "@", look-alike letters. The placeholder then replaces exactly
what was written, nothing before it and nothing after."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.common.redaction.normalised import normalise
from services.common.redaction.redactor import Redactor, redact, redact_text
from services.common.redaction.skeleton import skeleton
from tests.unit.playground.planted import (
    OBFUSCATIONS,
    PERSONAL,
    judge,
    obfuscated,
    planted_document,
    verhoeff_check_digit,
)

AADHAAR = "23634523547" + verhoeff_check_digit("23634523547")
NBSP, ZWSP, ZWJ, SOFT_HYPHEN = "\u00a0", "\u200b", "\u200d", "\u00ad"
FULL_WIDTH_AT = "\uff20"
CYRILLIC_EM, CYRILLIC_IE, GREEK_ALPHA = "\u041c", "\u0435", "\u03b1"


def full_width(text: str) -> str:
    return "".join(chr(ord(char) + 0xFEE0) if "!" <= char <= "~" else char for char in text)


def devanagari(text: str) -> str:
    return "".join(chr(0x0966 + int(char)) if char.isdigit() else char for char in text)


# --- each obfuscation, for each kind -------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Aadhaar, checksum-valid, with no-break spaces, dots, thin spaces, one digit at a time.
        (f"uid {AADHAAR[:4]}{NBSP}{AADHAAR[4:8]}{NBSP}{AADHAAR[8:]}.", "uid <aadhaar#1>."),
        (f"uid {AADHAAR[:4]}.{AADHAAR[4:8]}.{AADHAAR[8:]}", "uid <aadhaar#1>"),
        (f"uid {AADHAAR[:4]}\u2009{AADHAAR[4:8]}\u2009{AADHAAR[8:]}", "uid <aadhaar#1>"),
        (f"uid {' '.join(AADHAAR)}", "uid <aadhaar#1>"),
        (f"uid {devanagari(AADHAAR)}", "uid <aadhaar#1>"),
        # Phones: zero-width spaces, full-width, Devanagari, dots, spaced, separator runs.
        (f"call 98450{ZWSP}12345 now", "call <phone#1> now"),
        (f"call 9{ZWJ}8450{SOFT_HYPHEN}12345 now", "call <phone#1> now"),
        (f"call {full_width('9845012345')} now", "call <phone#1> now"),
        (f"call {full_width('+91 98450 12345')} now", "call <phone#1> now"),
        (f"call {devanagari('98450 12345')} now", "call <phone#1> now"),
        ("call \u09ef\u09ee\u09ea\u09eb\u09e6\u09e7\u09e8\u09e9\u09ea\u09eb now", "call <phone#1> now"),
        ("call 98450.12345 now", "call <phone#1> now"),
        ("call 98450 - 12345 now", "call <phone#1> now"),
        ("call 98450  12345 now", "call <phone#1> now"),
        (f"call +91{NBSP}98450{NBSP}12345", "call <phone#1>"),
        ("call 9 8 4 5 0 1 2 3 4 5 now", "call <phone#1> now"),
        ("call 9.8.4.5.0.1.2.3.4.5 now", "call <phone#1> now"),
        ("call +9 1 9 8 4 5 0 1 2 3 4 5 now", "call <phone#1> now"),
        ("call 0 8 0 2 3 4 5 6 7 8 9 now", "call <phone#1> now"),
        ("office 080.2345.6789", "office <phone#1>"),
        # Cards the same way.
        (f"card 4111{NBSP}1111{NBSP}1111{NBSP}1111", "card <card#1>"),
        ("card 4111.1111.1111.1111", "card <card#1>"),
        (f"card {full_width('4111111111111111')}", "card <card#1>"),
        # E-mail with a full-width at sign, [at], (at), spelled dots, " at " with a dotted domain.
        (f"mail meera.iyer{FULL_WIDTH_AT}example.com today", "mail <email#1> today"),
        ("mail meera.iyer[at]example.com today", "mail <email#1> today"),
        ("mail meera.iyer (at) example.com today", "mail <email#1> today"),
        ("mail meera.iyer {AT} example.com today", "mail <email#1> today"),
        ("mail meera.iyer [at] example [dot] com today", "mail <email#1> today"),
        ("mail meera dot iyer at gmail dot com today", "mail <email#1> today"),
        ("mail meera.iyer at example.com today", "mail <email#1> today"),
        ("mail meera.iyer @ example.com today", "mail <email#1> today"),
        (f"mail {full_width('meera.iyer@example.com')} today", "mail <email#1> today"),
        ("pay ramesh.k [at] okaxis", "pay <upi#1>"),
        # Names with one look-alike letter, an accent, a zero-width space, full-width letters.
        (f"ask {CYRILLIC_EM}eera about it", "ask <person#1> about it"),
        (f"ask M{CYRILLIC_IE}era about it", "ask <person#1> about it"),
        (f"ask Kavy{GREEK_ALPHA} about it", "ask <person#1> about it"),
        ("ask \u043ceera about it", "ask <person#1> about it"),
        ("ask Me\u0301era about it", "ask <person#1> about it"),
        (f"ask Me{ZWSP}era about it", "ask <person#1> about it"),
        (f"ask {full_width('Meera')} about it", "ask <person#1> about it"),
        (f"ask {CYRILLIC_EM}r. Tanmay Bhide", f"ask {CYRILLIC_EM}r. <person#1>"),
        # Identifiers in full-width letters or split by an invisible character.
        (f"PAN {full_width('ABCPE1234F')}", "PAN <pan#1>"),
        (f"ifsc SBIN{ZWSP}0001234", "ifsc <ifsc#1>"),
        (f"bike {full_width('KA 01 AB 1234')}", "bike <vehicle#1>"),
    ],
)
def test_an_obfuscated_value_is_replaced_where_it_was_written(text, expected):
    assert redact_text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "distance 9.876543210 km",
        "rider waited at gate 4",
        "reached at hub. Then left",
        "arrived at 10.30 today",
        "meet @ the hub",
        "\u0410\u043d\u043d\u0430 \u041a\u0430\u0440\u0435\u043d\u0438\u043d\u0430 ordered twice",
        "2026-09-29 20:57:00",
        "score 0.98450 12345 rows",
        "ETA\u00a012\u00a0min",
        "v1.2.3 2026-09-29",
    ],
)
def test_ordinary_text_written_the_same_ways_is_left_alone(text):
    assert redact_text(text) == text


def test_one_value_in_every_writing_is_one_placeholder():
    redactor = Redactor()

    written = ["9845012345", f"98450{ZWSP}12345", full_width("98450 12345"), devanagari("9845012345"), "98450.12345"]

    assert {redactor.text(text) for text in written} == {"<phone#1>"}
    assert redactor.text(f"{CYRILLIC_EM}eera Rao") == redactor.text("MEERA RAO") == "<person#1>"


def test_a_personal_key_written_with_a_look_alike_letter_still_names_its_field():
    assert redact({"customer_\u0440hone": "see below", "\u0435mail": "x"}) == {
        "customer_\u0440hone": "<phone#1>",
        "\u0435mail": "<email#1>",
    }


def test_escapes_as_a_repr_or_a_log_writes_them_are_read_as_their_characters():
    assert redact_text("KeyError: '98450\\u200b12345'") == "KeyError: '<phone#1>'"
    assert redact_text("b'98450\\xe2\\x80\\x8b12345'") == "b'<phone#1>'"
    assert redact_text(f"got '{AADHAAR[:4]}\\xa0{AADHAAR[4:8]}\\xa0{AADHAAR[8:]}'") == "got '<aadhaar#1>'"
    assert redact_text("mail meera.iyer\\uff20example.com") == "mail <email#1>"


# --- offsets ----------------------------------------------------------------------------


def test_the_placeholder_covers_exactly_the_original_span():
    # Invisible characters outside the value stay where they were; inside it they go with it.
    assert redact_text(f"call {ZWSP}98450{ZWSP}12345{ZWSP} now") == f"call {ZWSP}<phone#1>{ZWSP} now"
    # One character read as two (a ligature) before the value moves nothing.
    assert redact_text("\ufb01le 9845012345 ok") == "\ufb01le <phone#1> ok"
    # An accent belongs to its letter: replacing the name takes the accent along.
    assert redact_text("to Me\u0301era\u0301, now") == "to <person#1>, now"
    # An escape at the value's edge is part of the value.
    assert redact_text("x \\u0039845012345 y") == "x <phone#1> y"


def test_normalising_maps_each_read_character_back_to_what_was_written():
    text = f"a{ZWSP}\uff11\u0967\ufb01 \\u0033x"
    read = normalise(text)

    assert read.text == "a11fi 3x"
    assert [text[slice(*read.original(i, i + 1))] for i in range(len(read.text))] == [
        "a",
        "\uff11",
        "\u0967",
        "\ufb01",
        "\ufb01",
        " ",
        "\\u0033",
        "x",
    ]
    assert read.original(0, 2) == (0, 3)


def test_plain_ascii_is_its_own_normal_form():
    read = normalise("call 98450 12345 at the hub")

    assert read.text == "call 98450 12345 at the hub" and read.starts is None


def test_a_spelled_address_maps_its_at_and_dots_to_what_was_written():
    text = "m: meera [at] example (dot) com!"
    read = normalise(text)

    assert read.text == "m: meera@example.com!"
    at = read.text.index("@")
    assert text[slice(*read.original(at, at + 1))] == " [at] "
    assert text[slice(*read.original(3, len(read.text) - 1))] == "meera [at] example (dot) com"


def test_the_skeleton_folds_look_alikes_onto_latin_and_leaves_latin_alone():
    assert skeleton("\u0415XCEPTION_\u0410GENT") == "EXCEPTION_AGENT"
    assert skeleton("\u03a1\u0391\u039d") == "PAN"
    assert skeleton("\uff2d\uff45\uff45\uff52\uff41") == "Meera"
    assert skeleton("EXCEPTION_AGENT") == "EXCEPTION_AGENT"
    # Letters of other scripts that look like no Latin letter stay as they are.
    assert skeleton("\u0434\u0436") == "\u0434\u0436"


# --- generated -------------------------------------------------------------------------

PROPERTY = settings(max_examples=200, deadline=None, database=None)
surrounding = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)


@PROPERTY
@given(surrounding, st.randoms(use_true_random=False), surrounding)
def test_no_obfuscated_value_survives_whatever_text_surrounds_it(before, rng, after):
    value = obfuscated(rng, rng.choice([make for make in PERSONAL if make(random.Random(0)).loose])(rng))

    output = redact_text(f"{before} {value.written} {after}")

    assert value.leaked(output) == list(value.leaked(f"{before} {after}"))


@PROPERTY
@given(st.randoms(use_true_random=False))
def test_obfuscated_documents_leak_nothing_and_keep_their_harmless_values(rng):
    planted = planted_document(rng, size=rng.randrange(1, 16), obfuscate=True)

    verdict = judge(planted, redact(planted.document))

    assert verdict.leaked == []
    assert [harm for harm in verdict.harmed if harm[0] != "word"] == []


@PROPERTY
@given(st.sampled_from(sorted(OBFUSCATIONS)), st.randoms(use_true_random=False))
def test_every_kind_has_its_obfuscations_caught_alone(kind, rng):
    makers = [make for make in PERSONAL if make(random.Random(0)).kind == kind and make(random.Random(0)).loose]
    value = obfuscated(rng, rng.choice(makers)(rng))

    assert value.leaked(redact_text(value.written)) == []


def test_obfuscated_accuracy_over_a_large_sample():
    """0 leaked, and no more harmless values harmed than the plain sample."""
    rng = random.Random(23)
    verdicts = None
    for _ in range(1500):
        planted = planted_document(rng, size=rng.randrange(4, 16), obfuscate=True)
        verdicts = judge(planted, redact(planted.document), verdicts)

    assert verdicts.planted > 9000 and verdicts.harmless > 15000
    assert verdicts.leaked == []
    assert len(verdicts.harmed) / verdicts.harmless < 0.0005
    assert min(verdicts.planted_by_kind.values()) > 200
