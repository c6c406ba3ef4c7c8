"""Ingest: telemetry.otlp from JetStream into the runs and model_calls tables.

The same pull and write loop as the task-run ingest (its own durable
consumer on the same stream): a batch of messages is written in one
transaction and acked after it commits, so a database outage leaves the
spans in the stream and a redelivery lands on the rows already there.

Each message is mapped by one pure step (`codec.read_message`), which
returns its records or raises MalformedTelemetry; a malformed message is
terminated and counted. When a batch's write fails, its messages are
written one by one, so one message that cannot be written never holds the
others back: while the database answers, that message alone is retried and,
on its last allowed delivery, terminated and counted.
"""

from __future__ import annotations

import asyncio
import logging

from nats.aio.msg import Msg
from sqlalchemy.ext.asyncio import AsyncEngine

from services.telemetry import store
from services.telemetry.ingest import Ingest, delivery_count, settle
from services.telemetry.otlp.codec import SUBJECT, Records, read_message
from services.telemetry.rules import MalformedTelemetry

_log = logging.getLogger(__name__)

DURABLE = "telemetry-otlp-ingest"
# Deliveries a message may fail to write on its own, with the database
# answering, before it is terminated. A deadlock or a serialisation failure
# passes on a retry; a message that fails this often alone never will, and
# retrying it forever would keep it in every later batch.
MAX_WRITE_DELIVERIES = 5
_PING_TIMEOUT_S = 5.0


async def commit(engine: AsyncEngine, records: list[Records]) -> tuple[int, int, int]:
    """Write the records in one transaction: (runs new, model calls new, already written)."""
    runs = [run for r in records for run in r.runs]
    calls = [call for r in records for call in r.model_calls]
    async with engine.begin() as conn:
        runs_new = await store.insert_runs(conn, runs=runs)
        calls_new = await store.insert_model_calls(conn, calls=calls)
    return runs_new, calls_new, len(runs) + len(calls) - runs_new - calls_new


class OtlpIngest(Ingest):
    subjects = (SUBJECT,)
    durable = DURABLE

    async def _write(self, batch: list[Msg]) -> bool:
        counters = self._counters
        counters.otlp_received += len(batch)
        mapped: list[tuple[Msg, Records]] = []
        malformed: list[Msg] = []
        for msg in batch:
            if delivery_count(msg) > 1:
                counters.redelivered += 1
            try:
                records = read_message(msg.data)
            except MalformedTelemetry as error:
                counters.otlp_malformed += 1
                malformed.append(msg)
                _log.warning(
                    "malformed OTLP message terminated",
                    extra={"field": error.field, "reason": error.problem, "stream_seq": msg.metadata.sequence.stream},
                )
                continue
            if records.rejected:
                counters.otlp_spans_rejected += len(records.rejected)
                first = records.rejected[0]
                _log.warning(
                    "OTLP spans skipped",
                    extra={"spans": len(records.rejected), "field": first.field, "reason": first.problem},
                )
            mapped.append((msg, records))
        # Terminated, not nak'd: undecodable now is undecodable on every redelivery.
        await settle(malformed, "term")
        if not mapped:
            return True
        try:
            self._count(*await commit(self._engine, [records for _, records in mapped]))
        except asyncio.CancelledError:
            await self._give_back([msg for msg, _ in mapped], None)
            raise
        except Exception as error:  # noqa: BLE001 - whatever failed, the batch is not committed
            _log.warning(
                "OTLP batch not written; writing its messages one by one",
                extra={"messages": len(mapped), "error": f"{type(error).__name__}: {error}"[:500]},
            )
            return await self._write_each(mapped)
        await settle([msg for msg, _ in mapped], "ack")
        return True

    def _count(self, runs_new: int, calls_new: int, duplicates: int) -> None:
        self._counters.otlp_runs_inserted += runs_new
        self._counters.model_calls_inserted += calls_new
        self._counters.otlp_duplicates += duplicates

    async def _write_each(self, mapped: list[tuple[Msg, Records]]) -> bool:
        """Each message in its own transaction; False when the database is down."""
        for index, (msg, records) in enumerate(mapped):
            try:
                self._count(*await commit(self._engine, [records]))
            except asyncio.CancelledError:
                await self._give_back([m for m, _ in mapped[index:]], None)
                raise
            except Exception as error:  # noqa: BLE001 - told apart below: the database, or this message
                if not await self._database_answers():
                    await self._give_back([m for m, _ in mapped[index:]], self._config.retry_delay_s)
                    return False
                if delivery_count(msg) >= MAX_WRITE_DELIVERIES:
                    self._counters.otlp_unwritable += 1
                    _log.error(
                        "OTLP message could not be written; terminated",
                        extra={
                            "stream_seq": msg.metadata.sequence.stream,
                            "deliveries": delivery_count(msg),
                            "error": f"{type(error).__name__}: {error}"[:500],
                        },
                    )
                    await settle([msg], "term")
                else:
                    await settle([msg], "nak", self._config.retry_delay_s)
                continue
            await settle([msg], "ack")
        return True

    async def _database_answers(self) -> bool:
        try:
            async with asyncio.timeout(_PING_TIMEOUT_S), self._engine.connect() as conn:
                await store.ping(conn)
        except Exception:  # noqa: BLE001 - any failure means "down"
            return False
        return True
