"""Fixtures for integration tests; unit tests (tests/unit) need none of them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from services.common.settings import Settings
from tests.harness import Stack, build_template, fresh_database, make_settings, reset_nats, start_stack


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    running_stack, pg, broker = start_stack(tmp_path_factory.mktemp("stack"))
    try:
        yield running_stack
    finally:
        broker.stop()
        pg.stop()


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
