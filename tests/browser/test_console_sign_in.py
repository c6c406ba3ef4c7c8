"""The console's own sign-in instructions, followed as a person would: the
command the sign-in screen (and `outrider up`'s banner) names, and the
read-only one the no-access screen names, each run as the command against
this platform's secret, and the link it prints opened."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import re
import shlex
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from launcher.supervisor import print_banner
from services.common.settings import Settings
from tests.browser.conftest import Platform, platform, pretty, screenshot, serious_violations
from tests.console_tools import ROOT
from tests.harness import NATS_ENGINE, NATS_SERVICE, SERVICE_KEY

# The entry point pip installs beside the interpreter: the `outrider` a person types.
OUTRIDER = Path(sys.executable).with_name("outrider")


@pytest.fixture(scope="module")
async def console(template) -> AsyncIterator[Platform]:
    async with platform(template, demo=False) as empty:
        yield empty


def platform_env(settings: Settings) -> dict[str, str]:
    """The shell of an operator beside this platform: its data dir, port and secrets, nothing else of Outrider's."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("OUTRIDER_", "DATABASE_URL", "NATS_URL"))}
    return {
        **inherited,
        "OUTRIDER_DATA_DIR": str(settings.data_dir),
        "OUTRIDER_HTTP_HOST": settings.http_host,
        "OUTRIDER_HTTP_PORT": str(settings.http_port),
        "OUTRIDER_JWT_SECRET": settings.jwt_secret,
        "OUTRIDER_INTERNAL_KEY": settings.internal_key,
        "OUTRIDER_SERVICE_KEY": SERVICE_KEY,
        "OUTRIDER_NATS_PASSWORD": NATS_SERVICE.password,
        "OUTRIDER_NATS_ENGINE_PASSWORD": NATS_ENGINE.password,
    }


async def run_as_typed(command: str, settings: Settings) -> str:
    """What `command`, as a person would paste it into that shell, prints."""
    argv = shlex.split(command)
    assert argv[0] == "outrider", command
    process = await asyncio.create_subprocess_exec(
        OUTRIDER,
        *argv[1:],
        cwd=ROOT,
        env=platform_env(settings),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    async with asyncio.timeout(60):
        out, err = await process.communicate()
    assert process.returncode == 0, f"{command}: {err.decode()}"
    return out.decode().strip()


async def opened_in_a_new_tab(page: Page, link: str) -> Page:
    """The link opened as a terminal opens one: in a new tab of the same browser."""
    tab = await page.context.new_page()
    tab.set_default_timeout(15_000)
    await tab.goto(link)
    return tab


async def commands_shown(page: Page) -> list[str]:
    return await page.locator("#content code").all_inner_texts()


async def signed_in_as(page: Page, role: str) -> None:
    """A console page, shown in place of the sign-in and no-access screens, read with the link's token."""
    await expect(page.get_by_role("navigation", name="Console sections")).to_be_visible()
    await expect(page.locator(".who-role")).to_have_text(role)
    await expect(page.get_by_role("region", name="All agents").get_by_role("link").first).to_be_visible()


async def accessible(page: Page, axe_source: str) -> None:
    found = await serious_violations(page, axe_source)
    assert found == [], pretty(found)


async def test_the_command_the_sign_in_screen_names_prints_a_link_that_signs_in(
    console: Platform, page: Page, axe_source
):
    await page.goto(f"{console.base}/console/")
    await expect(page.get_by_role("heading", name="Sign in to the Outrider console")).to_be_visible()
    [command] = [shown for shown in await commands_shown(page) if shown.startswith("outrider token")]
    await screenshot(page, "sign-in-instructions")
    await accessible(page, axe_source)

    banner = io.StringIO()
    with contextlib.redirect_stdout(banner):
        print_banner(console.settings, console.base, 1.0)
    # The banner's console line names the command for a fresh link in backticks, as the screen does.
    assert re.findall(r"`(outrider token[^`]*)`", banner.getvalue()) == [command], banner.getvalue()

    link = await run_as_typed(command, console.settings)
    assert link.startswith(f"{console.base}/console/#token="), link
    tab = await opened_in_a_new_tab(page, link)
    await signed_in_as(tab, "admin")
    await screenshot(tab, "signed-in-by-token-command")

    # Pasted into the tab still on the sign-in screen, the link differs only in its fragment: no page load, and
    # it signs in all the same, its token gone from the address bar.
    await page.goto(link)
    await signed_in_as(page, "admin")
    assert "#token=" not in page.url


async def test_the_read_only_command_the_no_access_screen_names_prints_a_link_that_signs_in(
    console: Platform, page: Page, axe_source
):
    await page.goto(console.link(tenant=7))
    await expect(page.get_by_role("heading", name="No access to the Outrider console")).to_be_visible()
    # The screen names the admin command whole, then the read-only role as the flag that takes its --role's place.
    admin, read_only = await commands_shown(page)
    assert admin.endswith(" --role 1") and read_only == "--role 3", (admin, read_only)
    await screenshot(page, "no-access-instructions")
    await accessible(page, axe_source)

    link = await run_as_typed(admin.removesuffix("--role 1") + read_only, console.settings)
    await signed_in_as(await opened_in_a_new_tab(page, link), "role 3 · read-only")
