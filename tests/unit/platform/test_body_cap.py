"""The body cap refuses an oversized body before the app (auth, parsing) sees
any of it, and stops reading at the cap."""

from __future__ import annotations

import json

from gateway.limits import BodyCap


class App:
    def __init__(self) -> None:
        self.called = False
        self.body = b""

    async def __call__(self, scope, receive, send) -> None:
        self.called = True
        while True:
            message = await receive()
            self.body += message.get("body", b"")
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


def chunks(total: int, size: int = 64 * 1024, *, declare: int | None = None):
    sent = {"bytes": 0}
    parts = [b"x" * min(size, total - offset) for offset in range(0, total, size)] or [b""]

    async def receive():
        if not parts:
            return {"type": "http.disconnect"}
        part = parts.pop(0)
        sent["bytes"] += len(part)
        return {"type": "http.request", "body": part, "more_body": bool(parts)}

    headers = [] if declare is None else [(b"content-length", str(declare).encode())]
    return receive, headers, sent


async def call(cap: BodyCap, path: str, receive, headers) -> tuple[int, bytes]:
    answer: dict = {"body": b""}

    async def send(message) -> None:
        if message["type"] == "http.response.start":
            answer["status"] = message["status"]
        else:
            answer["body"] += message.get("body", b"")

    await cap({"type": "http", "path": path, "headers": headers}, receive, send)
    return answer["status"], answer["body"]


async def test_a_declared_length_over_the_cap_is_refused_unread() -> None:
    app = App()
    receive, headers, sent = chunks(20 * 2**20, declare=20 * 2**20)
    status, body = await call(BodyCap(app, default_bytes=2**20), "/internal/agent-decisions", receive, headers)
    assert status == 413 and not app.called and sent["bytes"] == 0
    error = json.loads(body)["error"]
    assert (error["code"], error["details"]) == ("BODY_TOO_LARGE", {"limit_bytes": 2**20})


async def test_an_undeclared_body_is_cut_off_at_the_cap() -> None:
    app = App()
    receive, headers, sent = chunks(20 * 2**20)
    status, _ = await call(BodyCap(app, default_bytes=2**20), "/admin/ai/skills", receive, headers)
    assert status == 413 and not app.called
    # Read one chunk past the cap, not the twenty megabytes behind it.
    assert sent["bytes"] <= 2**20 + 64 * 1024


async def test_a_tighter_prefix_wins_and_a_body_within_reaches_the_app_whole() -> None:
    cap = BodyCap(
        App(), default_bytes=2**20, by_prefix=[("/internal", 512 * 1024), ("/internal/human-inputs", 64 * 1024)]
    )
    assert (cap.limit_for("/internal/human-inputs"), cap.limit_for("/internal/facts"), cap.limit_for("/admin")) == (
        64 * 1024,
        512 * 1024,
        2**20,
    )
    receive, headers, _ = chunks(100 * 1024)
    assert (await call(cap, "/internal/human-inputs", receive, headers))[0] == 413
    app = App()
    receive, headers, _ = chunks(300 * 1024, size=7000)
    status, body = await call(BodyCap(app, default_bytes=2**20), "/internal/facts", receive, headers)
    assert (status, body, len(app.body)) == (200, b"ok", 300 * 1024)
