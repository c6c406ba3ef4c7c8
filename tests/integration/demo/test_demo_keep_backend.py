"""`outrider demo` run as the command, against the embedded stack: its
logistics backend stops with the report, and with --keep-backend it keeps
serving the playground's read tools until Ctrl-C."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx

from services.common.settings import CONTEXTS, Settings
from tests.harness import (
    INTERNAL_KEY,
    JWT_SECRET,
    NATS_ENGINE,
    bound_socket,
    reserved_port,
    running,
    serving_gateway,
    with_env,
)

ROOT = Path(__file__).resolve().parents[3]
KEPT = "backend still serving; Ctrl-C to stop"
# The smallest demo: one booking round. Too few conversations for its
# console routing claim, so it reports CLAIMS FAILED; what this test reads
# is the backend's life around the report, not the claims.
SCALE = "1"
# The report's last line, whatever the claims came to.
VERDICTS = ("all claims hold", "CLAIMS FAILED")
DEMO_PATIENCE_S = 240.0


def demo_env(settings: Settings) -> dict[str, str]:
    """The demo's view of the test platform, as an operator's shell would hold it beside `outrider up`."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("OUTRIDER_", "DATABASE_URL", "NATS_URL"))}
    return {
        **inherited,
        # Unbuffered, so the line after the report reaches the pipe while the command still waits.
        "PYTHONUNBUFFERED": "1",
        "OUTRIDER_DATA_DIR": str(settings.data_dir),
        "OUTRIDER_HTTP_PORT": str(settings.http_port),
        "NATS_URL": settings.nats_url or "",
        "OUTRIDER_JWT_SECRET": JWT_SECRET,
        "OUTRIDER_INTERNAL_KEY": INTERNAL_KEY,
        "OUTRIDER_NATS_ENGINE_USER": NATS_ENGINE.name,
        "OUTRIDER_NATS_ENGINE_PASSWORD": NATS_ENGINE.password,
        **{f"OUTRIDER_{context.upper()}_ADDR": settings.addr(context) for context in CONTEXTS},
    }


@asynccontextmanager
async def demo_command(settings: Settings, backend_port: int, *flags: str) -> AsyncIterator[asyncio.subprocess.Process]:
    """`outrider demo` started as a process; whatever the test leaves of it is ended when the block ends."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "launcher.cli",
        "demo",
        "--scale",
        SCALE,
        "--backend-port",
        str(backend_port),
        *flags,
        cwd=ROOT,
        env=demo_env(settings),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        yield process
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def lines_until(process: asyncio.subprocess.Process, wanted: str) -> list[str]:
    """What the command printed up to the line `wanted`, or up to its exit when it never prints it."""
    assert process.stdout is not None, "the demo's stdout is piped"
    lines: list[str] = []
    async with asyncio.timeout(DEMO_PATIENCE_S):
        while raw := await process.stdout.readline():
            lines.append(raw.decode().rstrip())
            if lines[-1] == wanted:
                break
    return lines


def verdict(lines: list[str]) -> str | None:
    return next((line for line in lines if line.startswith(VERDICTS)), None)


async def riders(backend_port: int) -> httpx.Response | None:
    """The backend's riders, as the playground's list_express_riders tool reads them; None when nothing answers."""
    try:
        async with httpx.AsyncClient(timeout=5) as client:
            return await client.get(f"http://127.0.0.1:{backend_port}/internal/express/riders", params={"tenant_id": 3})
    except httpx.TransportError:
        return None


async def test_the_backend_stops_with_the_report_unless_kept(settings):
    sock = bound_socket()
    settings = with_env(settings, http_port=sock.getsockname()[1])
    async with running(settings, CONTEXTS), serving_gateway(settings, sock):
        kept_port = reserved_port()
        async with demo_command(settings, kept_port, "--keep-backend") as kept:
            shown = await lines_until(kept, KEPT)
            assert shown[-1] == KEPT and verdict(shown), "\n".join(shown)
            serving_riders = await riders(kept_port)
            # Still serving a moment later: kept, not merely slow to stop.
            await asyncio.sleep(0.5)
            assert kept.returncode is None, "\n".join(shown)
            still_serving = await riders(kept_port)
            kept.send_signal(signal.SIGINT)
            async with asyncio.timeout(30):
                stopped_by_ctrl_c = await kept.wait()
        after_ctrl_c = await riders(kept_port)

        plain_port = reserved_port()
        async with demo_command(settings, plain_port) as plain:
            printed = await lines_until(plain, KEPT)
            async with asyncio.timeout(30):
                plain_exit = await plain.wait()
        after_plain = await riders(plain_port)

    assert serving_riders is not None and serving_riders.status_code == 200
    assert serving_riders.json()["items"], serving_riders.text
    assert still_serving is not None and still_serving.status_code == 200
    assert stopped_by_ctrl_c == 130
    assert after_ctrl_c is None

    # Without the flag the command ends on its own after the report, with the report's verdict as its status.
    assert KEPT not in printed and verdict(printed), "\n".join(printed)
    assert plain_exit == (0 if verdict(printed) == VERDICTS[0] else 1), "\n".join(printed)
    assert after_plain is None
