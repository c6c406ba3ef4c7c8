"""What the NATS access tests share: the streams' limits, a fact to publish,
and the refusals a connection is told of."""

from __future__ import annotations

import json

from services.common.nats import StreamLimits

LIMITS = StreamLimits(max_age_s=3600.0, max_bytes=2**20)
CANCELLED = json.dumps({"subject_id": "BK-1", "at": "2026-09-29T10:00:00+00:00", "cancelled": True}).encode()


class Refusals:
    """What the server refused a connection, as it tells the client."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def note(self, exc: Exception) -> None:
        self.seen.append(str(exc).lower())

    def mention(self, subject: str) -> bool:
        return any("permissions violation" in seen and subject.lower() in seen for seen in self.seen)
