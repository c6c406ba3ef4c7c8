"""Redaction proven on generated data: personal values planted at random
places in arbitrary JSON never come out, and the harmless values planted
beside them do, unchanged."""

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.common.redaction.redactor import Redactor, redact, redact_text
from tests.unit.playground.planted import PERSONAL, judge, planted_document, strings_in

# Nested JSON of up to 15 leaves, each text able to hold a planted value,
# now and then overruns hypothesis's entropy budget: such a draw is dropped
# and another made, so the check that fails the run on it is switched off.
PROPERTY = settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.data_too_large])

# What a planted value looks like inside arbitrary text: a space on each side.
surrounding = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)


@PROPERTY
@given(st.randoms(use_true_random=False))
def test_no_planted_personal_value_survives_and_the_harmless_ones_beside_it_do(rng):
    planted = planted_document(rng, size=rng.randrange(1, 16))

    verdict = judge(planted, redact(planted.document))

    assert verdict.leaked == []
    # Whole values and field names exactly; words inside the same sentence as
    # a personal value are measured below, over a large sample.
    assert [harm for harm in verdict.harmed if harm[0] != "word"] == []


@PROPERTY
@given(surrounding, st.randoms(use_true_random=False), surrounding)
def test_no_personal_value_survives_whatever_text_surrounds_it(before, rng, after):
    value = rng.choice([make for make in PERSONAL if make(random.Random(0)).loose])(rng)

    output = redact_text(f"{before} {value.written} {after}")

    # The surrounding text is arbitrary and may hold a probe of its own.
    assert value.leaked(output) == list(value.leaked(f"{before} {after}"))


@PROPERTY
@given(st.emails(), surrounding)
def test_any_valid_email_address_is_replaced(address, after):
    assert address not in redact_text(f"write to {address} {after}")
    # A quote opening the local part ('0@a.ao) may stay outside the placeholder.
    assert redact({"contact_info": address})["contact_info"] in ("<email#1>", "'<email#1>")


json_leaves = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=30)
)
json_values = st.recursive(
    json_leaves,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=15,
)


@PROPERTY
@given(st.one_of(json_values, st.randoms(use_true_random=False).map(lambda rng: planted_document(rng).document)))
def test_redacting_twice_changes_nothing_more(value):
    redactor = Redactor()
    once = redactor.value(value)
    report = redactor.report()

    assert redactor.value(once) == once
    assert redactor.report() == report
    assert redact(once) == once


def test_accuracy_over_a_large_sample():
    """The figures the closing note quotes: leaks (goal 0) and harmless values
    wrongly redacted (goal under 1%), over a fixed seeded sample."""
    rng = random.Random(19)
    verdicts = None
    for _ in range(1500):
        planted = planted_document(rng, size=rng.randrange(4, 16))
        verdicts = judge(planted, redact(planted.document), verdicts)

    print(
        f"planted {verdicts.planted}, leaked {len(verdicts.leaked)}; "
        f"harmless {verdicts.harmless}, wrongly redacted {len(verdicts.harmed)}"
    )
    assert verdicts.planted > 9000 and verdicts.harmless > 15000
    assert verdicts.leaked == []
    assert len(verdicts.harmed) / verdicts.harmless < 0.01
    # Every kind was tried many times.
    assert min(verdicts.planted_by_kind.values()) > 200


def test_strings_in_reads_keys_strings_and_numbers():
    assert list(strings_in({"a": [1, 2.5, "x", None, True], "b": {"c": "d"}})) == ["a", "1", "2.5", "x", "b", "c", "d"]
