"""Caps on the long-lived streams callers hold open: per caller and in total.

A stream (a snapshot watch, a precedent stream, a Server-Sent Events run)
holds a slot of its server for as long as its caller keeps it, days for a
watch. Without a cap per caller, one key opening streams in a loop takes
every slot, and the console, the health checks and every other engine are
refused with it. So each kind of stream is counted per caller and in total,
the total set below what the server serves at once, and a caller past
either cap is refused with the cap named, while everyone else goes on.

Counting is synchronous: a check and its count happen with no await in
between, so the event loop cannot admit two streams into the last slot.
"""

from __future__ import annotations

from collections import Counter
from typing import Literal

from services.common.errors import RateLimited

CapName = Literal["per_caller", "total"]


def cap_reached(*, stream: str, cap: CapName, limit: int, caller: str) -> RateLimited:
    """A stream refused because its caller, or all callers together, hold the most allowed."""
    whose = f"{caller} holds" if cap == "per_caller" else "all callers together hold"
    return RateLimited(
        f"{whose} {limit} open {stream} streams, the most allowed; close one or try again later",
        code="STREAM_CAP_REACHED",
        details={"cap": cap, "stream": stream, "limit": limit, "caller": caller},
    )


class StreamSlot:
    """One admitted stream. Releasing it twice releases it once: a stream
    may end by its own code and by its server's notice of the end, both."""

    __slots__ = ("_caller", "_caps", "_held")

    def __init__(self, caps: StreamCaps, caller: str) -> None:
        self._caps = caps
        self._caller = caller
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._caps._release(self._caller)

    def __enter__(self) -> StreamSlot:
        return self

    def __exit__(self, *_: object) -> None:
        self.release()


class StreamCaps:
    """The open streams of one kind (`stream` names it to a refused caller)."""

    def __init__(self, stream: str, *, per_caller: int, total: int) -> None:
        if not 1 <= per_caller <= total:
            raise ValueError(f"a stream cap needs 1 <= per caller ({per_caller}) <= total ({total})")
        self.stream = stream
        self.per_caller = per_caller
        self.total = total
        self._open: Counter[str] = Counter()
        self._count = 0

    def admit(self, caller: str) -> StreamSlot:
        """A slot for one more stream of `caller`; RateLimited (STREAM_CAP_REACHED) naming the cap it would pass."""
        if self._open[caller] >= self.per_caller:
            raise cap_reached(stream=self.stream, cap="per_caller", limit=self.per_caller, caller=caller)
        if self._count >= self.total:
            raise cap_reached(stream=self.stream, cap="total", limit=self.total, caller=caller)
        self._open[caller] += 1
        self._count += 1
        return StreamSlot(self, caller)

    def _release(self, caller: str) -> None:
        self._count -= 1
        self._open[caller] -= 1
        if not self._open[caller]:
            del self._open[caller]
