"""Helpers for migration scripts."""

from __future__ import annotations

from alembic import op
from sqlalchemy.util import await_only


def execute_script(sql: str) -> None:
    """Run several SQL statements at once.

    asyncpg prepares every statement, and a prepared statement holds one
    command; a plain execute without parameters uses the simple protocol,
    which takes a whole script inside the migration's transaction.
    """
    driver = op.get_bind().connection.driver_connection
    assert driver is not None, "a migration runs on an open connection"
    await_only(driver.execute(sql))
