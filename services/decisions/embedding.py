"""Turning a decision's context into a vector that similarity search can use.

Engines may send their own embedding. When they do not, the built-in
embedder derives one from the structured context itself, deterministically,
so the same facts always land on the same vector and precedent found today
is found again tomorrow, on any host, after any restart.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

# Signed log compresses values that span orders of magnitude (minutes
# stalled, distances, rupees); dividing by this before tanh keeps everyday
# values in tanh's responsive range, so 10 and 12 stay close while 10 and
# 1000 end up far apart.
_NUMERIC_SPREAD = 4.0


class Embedder(Protocol):
    @property
    def dimension(self) -> int: ...

    def embed(self, context: Mapping[str, Any]) -> list[float]: ...


@dataclass(frozen=True, slots=True)
class StructuredContextEmbedder:
    """Feature hashing over a flattened context.

    Nested objects become dotted keys ("booking.status"); list items keep
    their position ("candidates.0.distance_km"), because engines send
    candidates nearest first and the first one is the one that matters.

    - Text and booleans are categorical: "key=value" is hashed to one slot
      with a hashed sign, so features that collide in a slot cancel out on
      average instead of piling up.
    - Numbers are measures: the key picks two slots and the squashed value
      sets an angle between them. Every fact then adds the same weight,
      whatever its magnitude, and nearby values point in nearby directions.
    - None is skipped: an absent fact says nothing.

    Hashing uses BLAKE2b, never the built-in hash(), which is salted per
    process and would scatter the same context differently on every start.
    """

    dimension: int

    def __post_init__(self) -> None:
        if isinstance(self.dimension, bool) or not isinstance(self.dimension, int):
            raise TypeError("dimension must be an integer")
        # Numeric facts need two distinct slots.
        if self.dimension < 2:
            raise ValueError(f"dimension must be at least 2, got {self.dimension}")

    def embed(self, context: Mapping[str, Any]) -> list[float]:
        # Only the slots a fact touches are summed and scaled: a context has
        # tens of facts and the vector hundreds of slots, and walking every
        # slot in Python was most of the cost of recording a decision. The
        # result is the dense computation's to the last bit (untouched
        # slots add exactly nothing to the norm and stay 0.0).
        slots: dict[int, float] = {}
        # Sorted, so the order keys arrived in cannot change the sum in the
        # last bits of a float. The value breaks ties for the rare context
        # that spells the same dotted key twice ({"a.b": 1, "a": {"b": 2}}).
        facts = sorted(_flatten(context, ""), key=lambda f: (f[0], type(f[1]).__name__, str(f[1])))
        for key, value in facts:
            if isinstance(value, bool):
                self._add_category(slots, key, "true" if value else "false")
            elif isinstance(value, str):
                self._add_category(slots, key, value)
            else:
                self._add_measure(slots, key, float(value))
        return self._unit(slots)

    def _add_category(self, slots: dict[int, float], key: str, value: str) -> None:
        slot, sign = _slot_and_sign(f"c:{key}={value}", self.dimension)
        slots[slot] = slots.get(slot, 0.0) + sign

    def _add_measure(self, slots: dict[int, float], key: str, value: float) -> None:
        first, first_sign = _slot_and_sign(f"n:{key}", self.dimension)
        offset, second_sign = _slot_and_sign(f"n2:{key}", self.dimension - 1)
        second = (first + 1 + offset) % self.dimension
        angle = (math.pi / 2) * _squash(value)
        slots[first] = slots.get(first, 0.0) + first_sign * math.cos(angle)
        slots[second] = slots.get(second, 0.0) + second_sign * math.sin(angle)

    def _unit(self, slots: dict[int, float]) -> list[float]:
        norm = math.sqrt(math.fsum(x * x for x in slots.values()))
        if norm == 0.0:
            # A context with no facts still needs a direction: pgvector's
            # cosine distance to a zero vector is NaN, which sorts
            # unpredictably and compares false to everything. The uniform
            # vector is nearly orthogonal to real contexts, whose signed
            # features cancel out against it, so "no facts" matches nothing
            # strongly.
            return [1.0 / math.sqrt(self.dimension)] * self.dimension
        vector = [0.0] * self.dimension
        for slot, value in slots.items():
            vector[slot] = value / norm
        return vector


def _flatten(value: Any, prefix: str) -> Iterator[tuple[str, str | bool | int | float]]:
    # Leaves first, and dict before the Mapping ABC: most values are text or
    # numbers, and an ABC check costs ten plain ones.
    if value is None:
        return
    if isinstance(value, str | bool):
        yield prefix, value
        return
    if isinstance(value, int | float):
        try:
            finite = math.isfinite(value)
        except OverflowError:
            finite = False
        if not finite:
            raise ValueError(f"context value at {prefix!r} is not a finite number")
        yield prefix, value
        return
    if isinstance(value, (dict, Mapping)):
        for key, item in value.items():
            yield from _flatten(item, f"{prefix}.{key}" if prefix else str(key))
        return
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _flatten(item, f"{prefix}.{index}" if prefix else str(index))
        return
    raise TypeError(f"context value at {prefix!r} is a {type(value).__name__}, not JSON")


def _squash(value: float) -> float:
    """Map any real number smoothly into (-1, 1), zero to zero."""
    return math.tanh(math.copysign(math.log1p(abs(value)), value) / _NUMERIC_SPREAD)


def _slot_and_sign(feature: str, buckets: int) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    number = int.from_bytes(digest, "big")
    # The low bit picks the sign and the rest picks the slot, so the two are
    # independent of each other.
    return (number >> 1) % buckets, 1.0 if number & 1 else -1.0
