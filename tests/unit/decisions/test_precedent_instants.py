"""The precedent answer prints its instants as the gateway prints every
other: RFC 3339 with the +00:00 offset, microseconds only when there are
some, null for an unset timestamp."""

from __future__ import annotations

import random
from datetime import UTC, datetime

from google.protobuf.timestamp_pb2 import Timestamp

from gateway.codec.common import timestamp_text
from gateway.codec.decisions import _timestamp_text

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
FIRST = int((datetime(1, 1, 1, tzinfo=UTC) - EPOCH).total_seconds())
LAST = int((datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC) - EPOCH).total_seconds())


def test_every_instant_prints_as_the_gateway_prints_it() -> None:
    rng = random.Random(20261130)
    stamps = [(FIRST, 0), (LAST, 999_999_999), (0, 1000), (0, 999), (-1, 999_999_000), (1, 0), (86_399, 1)]
    for _ in range(20_000):
        seconds = rng.choice(
            [rng.randint(FIRST, LAST), rng.randint(-(10**6), 10**6), rng.randint(1_600_000_000, 2_000_000_000)]
        )
        nanos = rng.choice([0, rng.randint(0, 999_999_999), rng.randint(0, 999) * 1000])
        stamps.append((seconds, nanos))
    for seconds, nanos in stamps:
        stamp = Timestamp(seconds=seconds, nanos=nanos)
        assert _timestamp_text(stamp) == timestamp_text(stamp), (seconds, nanos)


def test_an_unset_instant_is_null() -> None:
    assert _timestamp_text(Timestamp()) is None
    assert _timestamp_text(Timestamp(seconds=1_700_000_000), present=False) is None
    assert _timestamp_text(Timestamp(seconds=1_700_000_000, nanos=5_000)) == "2023-11-14T22:13:20.000005+00:00"
