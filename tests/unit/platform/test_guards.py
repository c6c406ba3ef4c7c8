"""Each guard answers a value or a refusal naming the field, whatever it is given.

Hostile values by class (huge integers, NaN and infinities, instants at the
calendar's ends shifted by any offset, NUL and lone surrogates, format and
bidi characters, look-alike letters, overlong text, forged claims): a guard
never lets another exception escape, and never lets such a value through.
"""

from __future__ import annotations

import math
import unicodedata
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from services.common import guards
from services.common.errors import FieldError

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
HUGE = st.one_of(st.integers(), st.integers(min_value=2**63), st.integers(max_value=-(2**63) - 1))
OFFSETS = st.builds(
    lambda minutes: timezone(timedelta(minutes=minutes)), st.integers(min_value=-(24 * 60 - 1), max_value=24 * 60 - 1)
)
ANY_INSTANT = st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59), timezones=OFFSETS)
# Every code point a guard could meet, lone surrogates included.
ANY_CHAR = st.characters(min_codepoint=0, max_codepoint=0x10FFFF)
FORMAT_AND_BIDI = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u202e", "\u202d", "\u2066", "\u2069", "\u061c"]


def _answer(call, refusal_type: type[Exception] = FieldError) -> tuple[object, Exception | None]:
    """What a guard answers: its value, or the refusal it raised; any other exception escapes the test."""
    try:
        return call(), None
    except refusal_type as refusal:
        return None, refusal


def _refused(call, field: str) -> FieldError:
    with pytest.raises(FieldError) as refusal:
        call()
    assert refusal.value.field == field
    assert refusal.value.fields == {field: refusal.value.problem}
    return refusal.value


# ─── Numbers ───────────────────────────────────────────────────────────────


@given(HUGE)
@example(10**4000)
@example(-(10**4000))
def test_an_integer_is_accepted_exactly_within_int64_and_refused_by_name_outside(value: int) -> None:
    if guards.INT64_MIN <= value <= guards.INT64_MAX:
        assert guards.integer("n", value) == value
        assert guards.number("n", value) == value
    else:
        problem = _refused(lambda: guards.integer("n", value), "n").problem
        assert len(problem) < 100, "a refusal never prints the value back"
        _refused(lambda: guards.number("thresholds.late.max", value), "thresholds.late.max")


@given(st.floats())
@example(math.nan)
@example(math.inf)
@example(-math.inf)
def test_a_float_is_accepted_when_finite_and_refused_by_name_when_not(value: float) -> None:
    if math.isfinite(value):
        assert guards.number("confidence", value) == value
    else:
        _refused(lambda: guards.number("confidence", value), "confidence")
        _refused(lambda: guards.integer("k", value), "k")


@pytest.mark.parametrize("value", [True, False, "3", None, [3], {"n": 3}])
def test_what_is_not_a_number_is_refused_as_one(value: object) -> None:
    _refused(lambda: guards.number("n", value), "n")
    _refused(lambda: guards.integer("n", value), "n")


def test_a_field_s_own_range_is_held() -> None:
    assert guards.integer("k", 3.0, minimum=1, maximum=100) == 3
    _refused(lambda: guards.integer("k", 101, minimum=1, maximum=100), "k")
    _refused(lambda: guards.integer("k", 1e300, minimum=1, maximum=100), "k")
    _refused(lambda: guards.integer("k", 2.5), "k")


def test_numbers_inside_a_document_are_named_by_their_path() -> None:
    guards.numbers_in("thresholds", {"late": {"min": 1, "max": 2.5}, "on": True, "note": "x"})
    refusal = _refused(
        lambda: guards.numbers_in("thresholds_schema", {"late": {"max": 10**4000}}), "thresholds_schema.late.max"
    )
    assert "between" in refusal.problem
    _refused(lambda: guards.numbers_in("steps", [1, [2, math.nan]]), "steps[1][1]")


# ─── Instants ──────────────────────────────────────────────────────────────


@given(ANY_INSTANT)
@example(datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=14))))
@example(datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone(timedelta(hours=-14))))
@example(datetime(1999, 12, 31, 23, 59, 59, tzinfo=UTC))
def test_an_instant_is_accepted_within_the_bounds_and_refused_by_name_outside(value: datetime) -> None:
    inside = guards.EARLIEST <= value <= NOW + guards.AHEAD
    if inside:
        accepted = guards.instant("decided_at", value, now=NOW)
        assert accepted == value and accepted.utcoffset() == timedelta(0)
    else:
        _refused(lambda: guards.instant("decided_at", value, now=NOW), "decided_at")


@given(ANY_INSTANT, st.sampled_from([timedelta(0), timedelta(seconds=60), timedelta(minutes=2)]))
def test_a_time_that_has_happened_is_refused_in_the_future(value: datetime, skew: timedelta) -> None:
    if guards.EARLIEST <= value <= NOW + skew:
        assert guards.instant("at", value, now=NOW, future=skew) == value
    else:
        _refused(lambda: guards.instant("at", value, now=NOW, future=skew), "at")


def test_a_naive_instant_is_refused() -> None:
    assert _refused(lambda: guards.instant("at", datetime(2026, 1, 1), now=NOW), "at").problem == (
        "must carry a UTC offset"
    )


@given(st.integers(), st.integers(min_value=0, max_value=999_999_999))
@example(2**63 - 1, 0)
@example(-(2**63), 0)
@example(-62_135_596_800 - 86_400, 0)
def test_seconds_since_1970_of_any_size_are_bounded_before_a_datetime_is_built(seconds: int, nanos: int) -> None:
    value, refusal = _answer(lambda: guards.epoch_instant("start_time_unix_nano", seconds, nanos, now=NOW))
    if refusal is None:
        assert guards.EARLIEST <= value <= NOW + guards.AHEAD
    else:
        assert refusal.field == "start_time_unix_nano"
        assert not guards.EARLIEST.timestamp() <= seconds <= (NOW + guards.AHEAD).timestamp()


# ─── Text ──────────────────────────────────────────────────────────────────


@given(st.text(ANY_CHAR, max_size=40))
@example("a\x00b")
@example("\ud800")
@example("x" * 41)
def test_text_is_accepted_when_carriable_and_short_enough(value: str) -> None:
    carriable = "\x00" not in value and not any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if carriable and len(value) <= 40:
        assert guards.text("reason", value, max_length=40) == value
    else:
        _refused(lambda: guards.text("reason", value, max_length=40), "reason")


def _json_documents() -> st.SearchStrategy[object]:
    scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(ANY_CHAR, max_size=10))
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(st.text(ANY_CHAR, max_size=5), inner, max_size=3)
        ),
        max_leaves=10,
    )


def _uncarriable(value: str) -> bool:
    return "\x00" in value or any(0xD800 <= ord(c) <= 0xDFFF for c in value)


def _strings_of(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [*value, *(text for item in value.values() for text in _strings_of(item))]
    if isinstance(value, list):
        return [text for item in value for text in _strings_of(item)]
    return []


@given(_json_documents())
def test_text_inside_a_document_is_refused_by_its_path_when_postgres_cannot_hold_it(document: object) -> None:
    if not any(_uncarriable(text) for text in _strings_of(document)):
        guards.texts_in("context", document)
        return
    with pytest.raises(FieldError) as refusal:
        guards.texts_in("context", document)
    assert refusal.value.field.startswith("context")
    assert not _uncarriable(refusal.value.field), "a refusal never quotes what it refused"


def test_a_document_s_bad_text_is_named_by_the_object_holding_it() -> None:
    _refused(lambda: guards.texts_in("context", {"facts": ["ok", "\ud800"]}), "context.facts[1]")
    _refused(lambda: guards.texts_in("context", {"note": {"a\x00": 1}}), "context.note")


# ─── Identifiers ───────────────────────────────────────────────────────────


@given(st.sampled_from(FORMAT_AND_BIDI), st.integers(min_value=0, max_value=15))
def test_an_id_with_a_format_or_bidi_character_anywhere_is_refused(hidden: str, at: int) -> None:
    value = "EXCEPTION_AGENT"[:at] + hidden + "EXCEPTION_AGENT"[at:]
    problem = _refused(lambda: guards.identifier("agent_id", value, max_length=256), "agent_id").problem
    assert f"U+{ord(hidden):04X}" in problem


@given(st.text(ANY_CHAR, min_size=1, max_size=30))
def test_whatever_an_id_holds_the_guard_answers_a_normalised_id_or_a_refusal(value: str) -> None:
    answer, refusal = _answer(lambda: guards.identifier("agent_id", value, max_length=30))
    if refusal is not None:
        assert refusal.field == "agent_id"
    else:
        assert answer == unicodedata.normalize("NFKC", answer)
        assert all(unicodedata.category(c) not in {"Cc", "Cf", "Cs", "Co", "Cn"} for c in answer)
        assert 1 <= len(answer) <= 30


@pytest.mark.parametrize(
    "value",
    [
        "EXCEPTI\u041eN_AGENT",
        "\u0415XCEPTION_AGENT",
        "EXCEPTION_\u0410GENT",
        "exception_\u0430gent",
        "agent_\u03bf1",
        "\u0415\u0425\u0421\u0415\u0420\u0422\u0406\u041e\u041d_\u0410\u0412\u0421",
    ],
    ids=["Cyrillic O", "Cyrillic E", "Cyrillic A", "Cyrillic a", "Greek omicron", "all Cyrillic"],
)
def test_a_letter_that_only_looks_like_ascii_beside_ascii_is_refused(value: str) -> None:
    problem = _refused(lambda: guards.identifier("agent_id", value, max_length=256), "agent_id").problem
    assert "looks like" in problem


def test_compatibility_forms_fold_into_the_id_they_spell() -> None:
    assert guards.identifier(
        "agent_id", "\uff25\uff38\uff23\uff25\uff30\uff34\uff29\uff2f\uff2e_AGENT", max_length=64
    ) == ("EXCEPTION_AGENT")


@pytest.mark.parametrize("value", ["डिलीवरी_एजेंट", "配送エージェント", "агент_доставки", "café-agent"])
def test_an_id_in_one_script_of_its_own_is_accepted(value: str) -> None:
    assert guards.identifier("agent_id", value, max_length=64) == unicodedata.normalize("NFKC", value)


def test_a_look_alike_of_a_known_id_is_refused_naming_it() -> None:
    known = {"EXCEPTION_AGENT", "DISPATCH_AGENT"}
    assert guards.lookalike("agent_id", "EXCEPTION_AGENT", known) == "EXCEPTION_AGENT"
    assert guards.lookalike("agent_id", "NEW_AGENT", known) == "NEW_AGENT"
    for twin in ("EXCEPTI0N_AGENT", "EXCEPTlON_AGENT", "D1SPATCH_AGENT"):
        problem = _refused(lambda twin=twin: guards.lookalike("agent_id", twin, known), "agent_id").problem
        assert "AGENT" in problem and "looks like" in problem
    assert guards.skeleton("EXCEPTI\u041eN_AGENT") == guards.skeleton("EXCEPTION_AGENT")


# ─── Claims ────────────────────────────────────────────────────────────────

TTL = timedelta(hours=720)
GOOD = {"sub": "u-1", "email": "ops@example.com", "role": 1, "tenant_id": 0, "iat": 1_790_000_000, "exp": 1_790_003_600}
AT = 1_790_000_100.0


def _claim_refused(payload: dict[str, object], claim: str) -> guards.ClaimRefused:
    with pytest.raises(guards.ClaimRefused) as refusal:
        guards.claims(payload, now=AT, max_ttl=TTL)
    assert refusal.value.claim == claim and refusal.value.details == {"claim": claim}
    return refusal.value


def test_good_claims_are_read() -> None:
    held = guards.claims(GOOD, now=AT, max_ttl=TTL)
    assert (held.sub, held.email, held.role, held.tenant_id) == ("u-1", "ops@example.com", 1, 0)


@pytest.mark.parametrize(
    ("change", "claim"),
    [
        ({"exp": None}, "exp"),
        ({"iat": None}, "iat"),
        ({"exp": "1790003600"}, "exp"),
        ({"iat": "1790000000"}, "iat"),
        ({"exp": 10**30}, "exp"),
        ({"exp": True}, "exp"),
        ({"exp": math.inf}, "exp"),
        ({"exp": 1_790_000_000 + 721 * 3600}, "exp"),
        ({"exp": 1_790_000_050}, "exp"),
        ({"sub": "x" * 257}, "sub"),
        ({"sub": "u\x00"}, "sub"),
        ({"sub": "\ud800"}, "sub"),
        ({"sub": ""}, "sub"),
        ({"sub": 7}, "sub"),
        ({"email": "a" * 15_000 + "@example.com"}, "email"),
        ({"email": "ops\u202e@example.com"}, "email"),
        ({"email": "ops@example.com\n"}, "email"),
        ({"role": "1"}, "role"),
        ({"tenant_id": 2**70}, "tenant_id"),
    ],
)
def test_a_claim_outside_the_rule_is_refused_by_name(change: dict[str, object], claim: str) -> None:
    payload = {key: value for key, value in {**GOOD, **change}.items() if value is not None}
    _claim_refused(payload, claim)


def test_an_expired_token_says_so() -> None:
    assert _claim_refused({**GOOD, "exp": AT - 1}, "exp").code == "TOKEN_EXPIRED"


@given(st.dictionaries(st.sampled_from(["sub", "email", "role", "tenant_id", "iat", "exp"]), st.from_type(object)))
def test_any_payload_is_read_or_refused_naming_a_claim(payload: dict[str, object]) -> None:
    _, refusal = _answer(lambda: guards.claims(payload, now=AT, max_ttl=TTL), guards.ClaimRefused)
    assert refusal is None or refusal.claim in {"sub", "email", "role", "tenant_id", "iat", "exp"}
