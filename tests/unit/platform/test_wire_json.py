"""JSON objects cross the wire as UTF-8 JSON bytes and come back exactly:
an integer stays an integer, a fraction keeps every digit, a key keeps its
text. (google.protobuf.Struct turned every number into a double.)"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from outrider.wire import MalformedJson, json_bytes, json_object, json_value

# Any JSON value Python's json module can write: finite floats, integers of
# any size, text without lone surrogates.
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(blacklist_categories=("Cs",)))
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.dictionaries(st.text(alphabet=st.characters(blacklist_categories=("Cs",))), inner, max_size=5)
    ),
    max_leaves=40,
)


def same(a: object, b: object) -> bool:
    """Equal and of the same JSON type all the way down (1 and 1.0 differ)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return a == b


@given(json_values)
def test_every_json_value_round_trips_exactly(value: object) -> None:
    assert same(json_value(json_bytes(value)), value)


@given(st.dictionaries(st.text(alphabet=st.characters(blacklist_categories=("Cs",))), json_values, max_size=8))
def test_every_object_round_trips_as_an_object(value: dict) -> None:
    assert same(json_object(json_bytes(value)), value)


def test_the_reported_case_keeps_its_integer() -> None:
    back = json_object(json_bytes({"stall_minutes": 18, "ratio": 0.1, "big": 2**70}))
    assert back == {"stall_minutes": 18, "ratio": 0.1, "big": 2**70}
    assert isinstance(back["stall_minutes"], int) and isinstance(back["big"], int)


def test_empty_bytes_mean_not_sent() -> None:
    assert json_value(b"") is None and json_object(b"") is None


@pytest.mark.parametrize("data", [b"{", b"\xff\xfe", b"[1]", b"NaN", b'{"a": Infinity}', b"[" * 100_000])
def test_bytes_that_are_not_a_json_object_are_refused(data: bytes) -> None:
    with pytest.raises(MalformedJson):
        json_object(data)


@pytest.mark.parametrize("value", [{"x": math.nan}, {"x": math.inf}, {"x": "\ud800"}, {"x": object()}])
def test_values_json_cannot_carry_are_refused(value: dict) -> None:
    with pytest.raises(MalformedJson):
        json_bytes(value)
