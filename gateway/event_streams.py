"""Caps on the Server-Sent Events streams the gateway holds open for people.

Each kind of event stream (a playground run today) is counted per person and
in total (services.common.stream_caps): a stream holds a connection here and
a call in the context behind it for as long as it runs, so one person's open
tabs must not take the streams everyone else needs. Past a cap the request
is answered 429 `STREAM_CAP_REACHED` in the error envelope, naming the cap.
"""

from __future__ import annotations

from fastapi import Request

from gateway.errors import ApiError
from services.common.callers import Principal
from services.common.errors import RateLimited
from services.common.stream_caps import StreamCaps, StreamSlot


def _caps(request: Request, kind: str) -> StreamCaps:
    # Made at a kind's first stream and kept with the app: every request of
    # the app shares them, and no route needs to declare them up front.
    state = request.app.state
    by_kind: dict[str, StreamCaps] | None = getattr(state, "event_stream_caps", None)
    if by_kind is None:
        by_kind = state.event_stream_caps = {}
    caps = by_kind.get(kind)
    if caps is None:
        settings = state.settings
        caps = by_kind[kind] = StreamCaps(kind, per_caller=settings.sse_per_person, total=settings.sse_total)
    return caps


def admit(request: Request, kind: str, person: Principal) -> StreamSlot:
    """A slot for one more `kind` stream of `person`; release it when the stream ends."""
    try:
        return _caps(request, kind).admit(f"person:{person.sub}")
    except RateLimited as refused:
        raise ApiError(429, refused.code, refused.message, refused.details) from None
