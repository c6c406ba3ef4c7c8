import math

import pytest

from services.decisions.embedding import Embedder, StructuredContextEmbedder, _flatten, _slot_and_sign, _squash

STALLED = {
    "booking": {"status": "stalled", "zone": "north", "cod": True},
    "rider": {"minutes_stalled": 25, "distance_km": 3.2, "battery": 41},
    "candidates": [{"distance_km": 1.2, "vehicle": "bike"}],
}
STALLED_AGAIN = {
    "booking": {"status": "stalled", "zone": "north", "cod": True},
    "rider": {"minutes_stalled": 28, "distance_km": 3.0, "battery": 38},
    "candidates": [{"distance_km": 1.4, "vehicle": "bike"}],
}
DELIVERED = {
    "booking": {"status": "delivered", "zone": "south", "cod": False},
    "rider": {"minutes_stalled": 0, "distance_km": 14.5, "battery": 92},
    "candidates": [{"distance_km": 9.0, "vehicle": "van"}],
}


def cosine(a, b):
    return math.fsum(x * y for x, y in zip(a, b, strict=True)) / (
        math.sqrt(math.fsum(x * x for x in a)) * math.sqrt(math.fsum(y * y for y in b))
    )


def norm(vector):
    return math.sqrt(math.fsum(x * x for x in vector))


def test_built_in_embedder_satisfies_the_protocol():
    embedder: Embedder = StructuredContextEmbedder(384)

    assert embedder.dimension == 384
    assert len(embedder.embed(STALLED)) == 384


@pytest.mark.parametrize("dimension", [384, 1536])
def test_dimension_is_respected(dimension):
    vector = StructuredContextEmbedder(dimension).embed(STALLED)

    assert len(vector) == dimension
    assert all(isinstance(x, float) for x in vector)


@pytest.mark.parametrize("dimension", [384, 1536])
@pytest.mark.parametrize("context", [STALLED, DELIVERED, {}, {"only": None}, {"n": -7.5}, {"flag": False}])
def test_every_vector_has_unit_norm(dimension, context):
    assert norm(StructuredContextEmbedder(dimension).embed(context)) == pytest.approx(1.0, abs=1e-12)


def test_same_context_gives_the_same_vector_every_time():
    first = StructuredContextEmbedder(384).embed(STALLED)

    assert StructuredContextEmbedder(384).embed(STALLED) == first
    assert StructuredContextEmbedder(384).embed(dict(STALLED)) == first


def test_vectors_are_pinned_so_other_processes_agree():
    # Python's hash() changes per process; these values only hold if the
    # slots come from a stable digest.
    embedder = StructuredContextEmbedder(8)

    assert embedder.embed({"status": "assigned"}) == [0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0]
    assert embedder.embed({"minutes": 25}) == pytest.approx(
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.49262012111428977, -0.8702444577665189, 0.0]
    )


@pytest.mark.parametrize("dimension", [384, 1536])
def test_similar_contexts_are_closer_than_different_ones(dimension):
    embedder = StructuredContextEmbedder(dimension)
    stalled = embedder.embed(STALLED)

    near = cosine(stalled, embedder.embed(STALLED_AGAIN))
    far = cosine(stalled, embedder.embed(DELIVERED))

    assert near > 0.95
    assert near > far + 0.5


def test_nearby_numbers_are_closer_than_distant_ones():
    embedder = StructuredContextEmbedder(384)
    ten = embedder.embed({"minutes": 10})

    assert cosine(ten, embedder.embed({"minutes": 12})) > cosine(ten, embedder.embed({"minutes": 100}))
    assert cosine(ten, embedder.embed({"minutes": 100})) > cosine(ten, embedder.embed({"minutes": 10_000}))


def test_sign_of_a_number_matters():
    embedder = StructuredContextEmbedder(384)

    assert cosine(embedder.embed({"delta": 50}), embedder.embed({"delta": -50})) < 0


def test_key_order_is_irrelevant_at_every_level():
    reordered = {
        "candidates": [{"vehicle": "bike", "distance_km": 1.2}],
        "rider": {"battery": 41, "distance_km": 3.2, "minutes_stalled": 25},
        "booking": {"cod": True, "zone": "north", "status": "stalled"},
    }
    embedder = StructuredContextEmbedder(384)

    assert embedder.embed(reordered) == embedder.embed(STALLED)


def test_list_positions_matter():
    embedder = StructuredContextEmbedder(384)

    assert embedder.embed({"stops": ["hub", "door"]}) != embedder.embed({"stops": ["door", "hub"]})


def test_nesting_is_the_same_as_a_dotted_key():
    embedder = StructuredContextEmbedder(384)

    assert embedder.embed({"booking": {"status": "stalled"}}) == embedder.embed({"booking.status": "stalled"})


def test_a_key_spelled_twice_still_embeds_the_same_whatever_the_order():
    embedder = StructuredContextEmbedder(384)

    assert embedder.embed({"a.b": "x", "a": {"b": 2}}) == embedder.embed({"a": {"b": 2}, "a.b": "x"})


def test_boolean_is_a_category_not_the_number_one():
    embedder = StructuredContextEmbedder(384)

    assert embedder.embed({"cod": True}) != embedder.embed({"cod": 1})
    assert embedder.embed({"cod": True}) != embedder.embed({"cod": False})


def test_integer_and_equal_float_are_the_same_measure():
    # Values arriving through protobuf Struct are always floats.
    embedder = StructuredContextEmbedder(384)

    assert embedder.embed({"minutes": 25}) == embedder.embed({"minutes": 25.0})


def test_none_adds_nothing():
    embedder = StructuredContextEmbedder(384)

    assert embedder.embed({"status": "stalled", "note": None}) == embedder.embed({"status": "stalled"})


@pytest.mark.parametrize("empty", [{}, {"a": None}, {"a": {}}, {"a": []}, {"a": {"b": [None]}}])
def test_context_without_facts_gets_the_fixed_uniform_unit_vector(empty):
    vector = StructuredContextEmbedder(384).embed(empty)

    assert vector == [1.0 / math.sqrt(384)] * 384


def test_uniform_vector_matches_no_real_context_strongly():
    embedder = StructuredContextEmbedder(1536)

    assert abs(cosine(embedder.embed({}), embedder.embed(STALLED))) < 0.5


@pytest.mark.parametrize("dimension", [0, 1, -3])
def test_dimension_below_two_is_refused(dimension):
    with pytest.raises(ValueError, match="at least 2"):
        StructuredContextEmbedder(dimension)


@pytest.mark.parametrize("dimension", [True, 384.0, "384"])
def test_dimension_must_be_an_integer(dimension):
    with pytest.raises(TypeError):
        StructuredContextEmbedder(dimension)


@pytest.mark.parametrize("number", [math.nan, math.inf, 10**400])
def test_non_finite_number_is_refused_with_its_key(number):
    with pytest.raises(ValueError, match=r"rider\.eta"):
        StructuredContextEmbedder(384).embed({"rider": {"eta": number}})


def test_non_json_value_is_refused_with_its_key():
    with pytest.raises(TypeError, match="at 'when'"):
        StructuredContextEmbedder(384).embed({"when": object()})


def dense_embedding(dimension, context):
    """The embedding computed over every slot, as the docstring describes it."""
    vector = [0.0] * dimension
    for key, value in sorted(_flatten(context, ""), key=lambda f: (f[0], type(f[1]).__name__, str(f[1]))):
        if isinstance(value, bool | str):
            word = ("true" if value else "false") if isinstance(value, bool) else value
            slot, sign = _slot_and_sign(f"c:{key}={word}", dimension)
            vector[slot] += sign
        else:
            first, first_sign = _slot_and_sign(f"n:{key}", dimension)
            offset, second_sign = _slot_and_sign(f"n2:{key}", dimension - 1)
            angle = (math.pi / 2) * _squash(float(value))
            vector[first] += first_sign * math.cos(angle)
            vector[(first + 1 + offset) % dimension] += second_sign * math.sin(angle)
    length = math.sqrt(math.fsum(x * x for x in vector))
    if length == 0.0:
        return [1.0 / math.sqrt(dimension)] * dimension
    return [x / length for x in vector]


@pytest.mark.parametrize("dimension", [2, 384, 1536])
@pytest.mark.parametrize(
    "context",
    [
        STALLED,
        STALLED_AGAIN,
        DELIVERED,
        {},
        {"only": None},
        {"n": -7.5},
        {"a.b": 1, "a": {"b": 2}},
        {"x": 0.0, "y": 1e300, "flag": True},
    ],
)
def test_touching_only_the_slots_facts_reach_gives_the_dense_vector_to_the_last_bit(dimension, context):
    # Stored vectors must not move when the embedder gets faster: a decision
    # recorded before and one recorded after, with the same facts, are the
    # same point.
    assert StructuredContextEmbedder(dimension).embed(context) == dense_embedding(dimension, context)
