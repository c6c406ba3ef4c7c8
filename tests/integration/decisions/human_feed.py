"""A real human-input feed for tests: HTTP on 127.0.0.1, served from a thread.

It speaks the contract of services/decisions/human/sources.py: items per
subject in written order, paged by an opaque cursor, behind a bearer token.
Tests add items, make it fail or stall, and read back what it was asked.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


class Feed:
    def __init__(self, *, token: str = "feed-token", page_size: int = 2) -> None:
        self.token = token
        self.page_size = page_size
        self.url = ""
        self._items: dict[str, list[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        # (subject, after) of every authorised request, in arrival order.
        self.requests: list[tuple[str, str | None]] = []
        self.failures_left = 0
        self.failure_status = 500
        self.answers_before_failing = 0
        self.delay_s = 0.0

    def add(
        self,
        subject: str,
        external_id: str | int | None,
        body: str | None,
        *,
        author: str = "priya",
        written_at: datetime | None = None,
    ) -> None:
        item: dict[str, Any] = {
            "author": author,
            "written_at": (written_at or datetime.now(UTC)).isoformat(),
            "body": body,
        }
        if external_id is not None:
            item["id"] = external_id
        self.add_raw(subject, item)

    def add_raw(self, subject: str, item: Any) -> None:
        """Serve `item` exactly as given, well-formed or not."""
        with self._lock:
            self._items.setdefault(subject, []).append(item)

    def fail(self, times: int = 1, *, status: int = 500, after_answers: int = 0) -> None:
        """Fail the next `times` requests, once `after_answers` more have succeeded."""
        with self._lock:
            self.failures_left, self.failure_status = times, status
            self.answers_before_failing = after_answers

    def asked_after(self, subject: str) -> list[str | None]:
        with self._lock:
            return [after for s, after in self.requests if s == subject]

    def answer(self, query: dict[str, list[str]], authorization: str | None) -> tuple[int, dict[str, Any]]:
        if authorization != f"Bearer {self.token}":
            return 401, {"error": "bad token"}
        subject = query.get("subject", [""])[0]
        after = query.get("after", [None])[0]
        with self._lock:
            self.requests.append((subject, after))
            if self.failures_left and self.answers_before_failing:
                self.answers_before_failing -= 1
            elif self.failures_left:
                self.failures_left -= 1
                return self.failure_status, {"error": "feed is down"}
            items = list(self._items.get(subject, ()))
            delay = self.delay_s
        if delay:
            time.sleep(delay)
        start = int(after.removeprefix("pos-")) if after else 0
        page = items[start : start + self.page_size]
        end = start + len(page)
        return 200, {"items": page, "next_cursor": f"pos-{end}", "has_more": end < len(items)}


def _handler(feed: Feed) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, payload = feed.answer(parse_qs(urlsplit(self.path).query), self.headers.get("Authorization"))
            body = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


@contextmanager
def serving(feed: Feed) -> Iterator[Feed]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(feed))
    server.daemon_threads = True
    server.block_on_close = False
    feed.url = f"http://127.0.0.1:{server.server_address[1]}/feed"
    thread = threading.Thread(target=server.serve_forever, name="human-feed", daemon=True)
    thread.start()
    try:
        yield feed
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
