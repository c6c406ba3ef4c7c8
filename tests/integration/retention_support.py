"""Helpers for the retention tests of every context: a table's delete that
notes the size of each batch, and a context's retention counts over gRPC."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from outrider.v1 import common_pb2, common_pb2_grpc
from services.common.retention import Prune
from services.common.settings import Settings
from tests.harness import service_channel


def noting_batches(prune: Prune, batches: list[int]) -> Prune:
    """`prune`, with the rows each batch deleted appended to `batches`."""

    async def noted(conn: AsyncConnection, *, before: datetime, limit: int) -> int:
        deleted = await prune(conn, before=before, limit=limit)
        batches.append(deleted)
        return deleted

    return noted


async def deleted(settings: Settings, context: str) -> dict[str, int]:
    """Rows the context's running retention job has deleted, per table."""
    async with service_channel(settings, context) as channel:
        report = await common_pb2_grpc.RetentionStub(channel).GetRetention(common_pb2.GetRetentionRequest())
    return {table.table: table.deleted for table in report.tables}
