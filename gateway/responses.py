"""Every answer the gateway gives, counted by status class for /metrics
(`outrider_http_responses_total{class="5xx"}`), so the share of failed
requests can be alerted on. By class only: a label per route would multiply
the series by every path the API has, for an alert that needs none of them.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

CLASSES = ("2xx", "3xx", "4xx", "5xx")
# The monitoring's own requests are left out. A scrape or probe every few
# seconds would be most of a quiet gateway's traffic and dilute the share of
# failures its users see; and its failures are told elsewhere: a scrape that
# fails is `up == 0`, a red /readyz is `outrider_ready 0`.
UNCOUNTED = frozenset({"/metrics", "/healthz", "/readyz"})


class ResponseCounts:
    def __init__(self) -> None:
        self.by_class = dict.fromkeys(CLASSES, 0)

    def count(self, status: int) -> None:
        status_class = f"{status // 100}xx"
        if status_class in self.by_class:
            self.by_class[status_class] += 1

    def exposition(self) -> str:
        """Prometheus text format 0.0.4."""
        metric = "outrider_http_responses_total"
        lines = [
            f"# HELP {metric} HTTP answers this gateway gave since it started, by status class;"
            " its own scrapes and probes left out.",
            f"# TYPE {metric} counter",
            *(f'{metric}{{class="{status_class}"}} {count}' for status_class, count in self.by_class.items()),
        ]
        return "\n".join(lines) + "\n"


class CountedResponses:
    """Pure ASGI, as RequestIds is: streamed answers pass through untouched."""

    def __init__(self, app: ASGIApp, counts: ResponseCounts) -> None:
        self.app = app
        self.counts = counts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in UNCOUNTED:
            await self.app(scope, receive, send)
            return
        started = False

        async def counted(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                self.counts.count(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, counted)
        except Exception:
            # An unexpected error is answered 500 by Starlette outside every
            # middleware, so its answer never passes through `counted`.
            if not started:
                self.counts.count(500)
            raise
