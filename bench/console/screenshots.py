"""The README's console screenshots, taken against the demo.

    python -m bench.console.screenshots            # writes docs/images/console-*.png

It starts the stack and loads `outrider demo` as the console bench does
(`--data-dir` reuses a demo loaded there), then opens each page in Debian's
Chromium at 1360x900, in an operator's zone and a 24-hour locale, and
saves the viewport once the page's data is on screen.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
from pathlib import Path

from playwright.async_api import async_playwright

from bench.console.bench import CHROMIUM_ARGS, ROOT, demo_stack, first_ids

OUT = ROOT / "docs" / "images"

# file name, path, then a selector present only once the page's data is rendered.
SHOTS = [
    ("console-agent-studio.png", "/console/agents/EXCEPTION_AGENT", "form.thresholds input"),
    ("console-decisions.png", "/console/decisions", "table tbody tr"),
    ("console-insights.png", "/console/insights", "svg[role=img]"),
    ("console-rollouts.png", "/console/rollouts", "table tbody tr"),
    ("console-run.png", "/console/runs/{run_agent}/{run_task}", "#run-heading"),
    ("console-audit.png", "/console/audit", "table tbody tr"),
]
# The demo's operators dispatch in India; en-GB writes the page's times on a 24-hour clock.
ZONE = "Asia/Kolkata"
LOCALE = "en-GB"


async def take(base: str, token: str, out: Path) -> list[Path]:
    ids = await first_ids(base, token)
    written = []
    async with async_playwright() as driver:
        browser = await driver.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        try:
            context = await browser.new_context(
                viewport={"width": 1360, "height": 900}, color_scheme="light", timezone_id=ZONE, locale=LOCALE
            )
            page = await context.new_page()
            await page.goto(f"{base}/console/agents#token={token}")
            await page.wait_for_selector("nav")
            for name, path, selector in SHOTS:
                await page.goto(f"{base}{path.format(**ids)}")
                await page.wait_for_selector(selector, timeout=30_000)
                # Later reads on the page (names, charts beside the first answer) settle first.
                await page.wait_for_load_state("networkidle")
                target = out / name
                await page.screenshot(path=str(target), animations="disabled", caret="hide")
                written.append(target)
        finally:
            await browser.close()
    return written


async def main(scale: int, data_dir: Path | None, out: Path) -> None:
    with demo_stack(scale, data_dir) as (base, token, _):
        for path in await take(base, token, out):
            print(f"{path.relative_to(ROOT)}: {path.stat().st_size / 1024:.0f} KiB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=120, help="demo booking rounds, as `outrider demo --scale`")
    parser.add_argument("--data-dir", type=Path, help="keep the stack's data here and reuse a demo loaded there")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    asyncio.run(main(args.scale, args.data_dir, args.out))
