"""The console's weight and speed: the initial bundle gzipped, and how long
each page takes to become usable against the embedded stack with demo data.

    python -m bench.console.bench                 # demo scale 120, 5 rounds
    python -m bench.console.bench --scale 20 --rounds 1   # smoke
    python -m bench.console.bench --scale 1200 --rounds 3 --data-dir /tmp/demo-1200
                                                  # 10x, the demo loaded once and kept

It runs `outrider up` on a temporary data dir (embedded Postgres and
nats-server, one process per context and one for the gateway, as a newcomer
runs it), loads `outrider demo` into it, then drives Debian's Chromium with
Playwright.

"Interactive" for a page is the moment its data-bearing content is on
screen (the page's own answer from the API rendered, with the controls that
act on it), read in the page as performance.now() since navigation start, so
Playwright's own round trips are not counted. Each page is measured cold (a
fresh browser context: no cache, signing in through the link) and warm (the
same tab navigating to it again, as an operator moving between pages does),
and medians are reported over the rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
from playwright.async_api import TimeoutError as PlaywrightTimeout
from playwright.async_api import async_playwright

from services.common.settings import CONTEXTS
from tests.console_tools import initial_bundle
from tests.harness import reserved_port, reserved_ports

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

# path, then a selector present only once the page's data is rendered.
PAGES = {
    "agents (opens the first agent)": ("/console/agents", ".studio-header h2"),
    "agent studio": ("/console/agents/EXCEPTION_AGENT", "form.thresholds input"),
    "decisions": ("/console/decisions", "table tbody tr"),
    "decision": ("/console/decisions/{decision}", "#precedents-heading ~ .table-wrap tbody tr"),
    "insights": ("/console/insights", "svg[role=img]"),
    "runs": ("/console/runs", "table tbody tr"),
    "run": ("/console/runs/{run_agent}/{run_task}", "#run-heading"),
    "routing": ("/console/routing?decision_type=stall_response", "svg[role=img]"),
    "rollouts": ("/console/rollouts", "table tbody tr"),
    "rollout": ("/console/rollouts/{rollout}", "#rollout-heading"),
    "alerts": ("/console/alerts", "section[aria-labelledby=resolved-heading] :is(.state-empty, .alerts)"),
    "playground": ("/console/playground", "#pg-prompt, .notice-warn"),
    "audit": ("/console/audit", ".state-empty, table tbody tr"),
    "human decisions": ("/console/subjects/{subject}", ".state-empty, .timeline"),
}


async def ready_at(page, selector: str) -> float:
    try:
        handle = await page.wait_for_function(
            "sel => document.querySelector(sel) ? performance.now() : null", arg=selector, timeout=30_000, polling="raf"
        )
    except PlaywrightTimeout:
        raise SystemExit(f"{selector} never appeared on {page.url}") from None
    return float(await handle.json_value())


async def measure(
    base: str, token: str, pages: dict[str, tuple[str, str]], rounds: int, breakdown: bool = False
) -> dict[str, dict[str, float]]:
    cold: dict[str, list[float]] = {name: [] for name in pages}
    warm: dict[str, list[float]] = {name: [] for name in pages}
    async with async_playwright() as driver:
        browser = await driver.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        try:
            for _ in range(rounds):
                for name, (path, selector) in pages.items():
                    context = await browser.new_context(viewport={"width": 1360, "height": 900})
                    page = await context.new_page()
                    await page.goto(f"{base}{path}#token={token}")
                    cold[name].append(await ready_at(page, selector))
                    if breakdown:
                        entries = await page.evaluate(
                            "() => [performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd,"
                            " ...performance.getEntriesByType('resource')"
                            ".map(e => [e.name.split('/').slice(3).join('/'),"
                            " Math.round(e.startTime), Math.round(e.duration)])]"
                        )
                        print(name, round(entries[0]), entries[1:])
                    # Warm: back on the first page, then this one again with the cache filled.
                    await page.goto(f"{base}/console/audit")
                    await page.wait_for_selector("nav")
                    await page.goto(f"{base}{path}")
                    warm[name].append(await ready_at(page, selector))
                    await context.close()
        finally:
            await browser.close()
    return {
        name: {
            "cold_ms": statistics.median(cold[name]),
            "warm_ms": statistics.median(warm[name]),
            "cold_max_ms": max(cold[name]),
        }
        for name in pages
    }


def outrider(*args: str, env: dict[str, str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "launcher.cli", *args], env=env, check=True, text=True, capture_output=True, **kwargs
    )


def wait_ready(base: str, up: subprocess.Popen, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if up.poll() is not None:
            raise SystemExit("outrider up exited before it was ready")
        try:
            if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit("outrider up never became ready")


@contextlib.contextmanager
def demo_stack(scale: int, data_dir: Path | None) -> Iterator[tuple[str, str, str]]:
    """`outrider up` with the demo loaded: (gateway base URL, a role 1 token, how the demo was loaded).

    A kept data dir holds the loaded demo, so later runs (before and after a
    change) measure the same data and skip the load.
    """
    kept = data_dir is not None
    data_dir = data_dir or Path(tempfile.mkdtemp(prefix="outrider-bench-console-"))
    data_dir.mkdir(parents=True, exist_ok=True)
    loaded = data_dir / "demo-loaded.txt"
    port = reserved_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OUTRIDER_", "DATABASE_URL", "NATS_URL"))}
    env.update(
        {
            "OUTRIDER_DATA_DIR": str(data_dir / "data"),
            "OUTRIDER_HTTP_PORT": str(port),
            "OUTRIDER_GRPC_PORT": str(reserved_ports(len(CONTEXTS))),
            "OUTRIDER_NATS_PORT": str(reserved_port()),
        }
    )
    base = f"http://127.0.0.1:{port}"
    up = subprocess.Popen(
        [sys.executable, "-m", "launcher.cli", "up"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_ready(base, up)
        if not loaded.exists():
            started = time.monotonic()
            demo = outrider(
                "demo", "--scale", str(scale), "--backend-port", str(reserved_port()), env=env, timeout=7200
            )
            summary = [line for line in demo.stdout.splitlines() if "decisions" in line][-1].strip()
            loaded.write_text(f"scale {scale}, loaded in {time.monotonic() - started:.0f} s: {summary}\n")
        yield base, outrider("token", "--role", "1", env=env).stdout.strip(), loaded.read_text().strip()
    finally:
        up.send_signal(signal.SIGINT)
        up.wait(60)
        if not kept:
            shutil.rmtree(data_dir, ignore_errors=True)


async def first_ids(base: str, token: str) -> dict[str, str]:
    """The newest decision, run and rollout, for the detail pages."""
    async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {token}"}) as api:
        first = (await api.get("/admin/ai/decisions", params={"limit": 1})).json()["items"][0]
        run = (await api.get("/admin/ai/runs", params={"limit": 1})).json()["items"][0]
        rollout = (await api.get("/admin/ai/rollouts", params={"limit": 1})).json()["items"][0]
    return {
        "decision": first["id"],
        "subject": first["subject_id"],
        "run_agent": run["agent_id"],
        "run_task": run["task_id"],
        "rollout": rollout["id"],
    }


async def main(scale: int, rounds: int, breakdown: bool, data_dir: Path | None, only: list[str]) -> None:
    with demo_stack(scale, data_dir) as (base, token, summary):
        ids = await first_ids(base, token)
        pages = {
            name: (path.format(**ids), selector) for name, (path, selector) in PAGES.items() if not only or name in only
        }
        load_before = os.getloadavg()[0]
        results = await measure(base, token, pages, rounds, breakdown)
        load_after = os.getloadavg()[0]

    bundle = initial_bundle()
    print(f"outrider up with `outrider demo --scale {scale}` loaded; {rounds} rounds")
    print(f"demo: {summary}")
    print(f"load average (1 min): {load_before:.1f} at the start, {load_after:.1f} at the end")
    print(
        f"initial bundle: {bundle['files']} files, {bundle['raw'] / 1024:.1f} KiB raw, "
        f"{bundle['gzip'] / 1024:.1f} KiB gzipped"
    )
    print(f"{'page':<32} {'cold median':>12} {'cold max':>10} {'warm median':>12}")
    for name, figures in results.items():
        print(
            f"{name:<32} {figures['cold_ms']:>9.0f} ms {figures['cold_max_ms']:>7.0f} ms {figures['warm_ms']:>9.0f} ms"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=120, help="demo booking rounds, as `outrider demo --scale`")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--breakdown",
        action="store_true",
        help="print each cold load's DOMContentLoaded and its requests (start, duration in ms)",
    )
    parser.add_argument(
        "--data-dir", type=Path, help="keep the stack's data here and reuse a demo already loaded there (loads it once)"
    )
    parser.add_argument("--page", action="append", default=[], choices=PAGES, help="measure only this page (repeat)")
    args = parser.parse_args()
    asyncio.run(main(args.scale, args.rounds, args.breakdown, args.data_dir, args.page))
