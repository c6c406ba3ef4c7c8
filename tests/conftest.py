"""Fixtures for integration tests; unit tests (tests/unit) need none of them
(the one every test gets only releases the ports a test reserved)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from services.common.settings import Settings
from tests.harness import (
    Stack,
    build_template,
    embedded_stack,
    fresh_database,
    make_settings,
    ports_released,
    reset_nats,
)

pytest_plugins = ["tests.watchdog"]


@pytest.fixture(autouse=True)
def _ports_held_for_the_test() -> Iterator[None]:
    """The ports a test reserves stay held until it ends, after every server it started has stopped."""
    with ports_released():
        yield


@pytest.fixture(scope="session")
def stack() -> Iterator[Stack]:
    # Not under pytest's basetemp: pytest resets that tree's permissions, and
    # the embedded Postgres runs as its own user, which must traverse the path.
    data_dir = Path(tempfile.mkdtemp(prefix="outrider-test-"))
    try:
        with embedded_stack(data_dir) as running_stack:
            yield running_stack
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture(scope="session")
async def template(stack: Stack) -> Stack:
    await build_template(stack)
    return stack


@pytest.fixture
async def database(template: Stack) -> AsyncIterator[str]:
    """A fresh, fully migrated database for one test."""
    async with fresh_database(template) as name:
        yield name


@pytest.fixture
async def settings(template: Stack, database: str) -> Settings:
    await reset_nats(template.nats_url)
    return make_settings(template, database)
