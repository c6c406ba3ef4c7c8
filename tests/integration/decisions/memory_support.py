"""What the decision-memory integration tests share: test vectors and direct inserts."""

from __future__ import annotations

import math
import random
import uuid
from datetime import UTC, datetime

import asyncpg

DIMENSION = 384


def vector_text(values: list[float]) -> str:
    """pgvector's text form, for statements sent without the binary codec."""
    return "[" + ",".join(repr(float(x)) for x in values) + "]"


def unit_vector(seed: int, dimension: int = DIMENSION) -> list[float]:
    rng = random.Random(seed)
    raw = [rng.gauss(0.0, 1.0) for _ in range(dimension)]
    norm = math.sqrt(sum(x * x for x in raw))
    return [x / norm for x in raw]


def near(base: list[float], seed: int, spread: float) -> list[float]:
    """A vector close to `base`: the larger `spread`, the further away."""
    rng = random.Random(seed)
    return [x + spread * rng.gauss(0.0, 1.0) / math.sqrt(len(base)) for x in base]


async def connect(template, database: str) -> asyncpg.Connection:
    return await asyncpg.connect(template.raw_dsn(database), server_settings={"search_path": "decisions,public"})


async def insert_rows(conn: asyncpg.Connection, rows: list[dict]) -> list[uuid.UUID]:
    """Insert decisions directly, judged or not, with any decided_at."""
    ids = []
    records = []
    for row in rows:
        decision_id = row.get("id") or uuid.uuid4()
        ids.append(decision_id)
        outcome = row.get("outcome")
        records.append(
            (
                decision_id,
                row.get("decision_type", "stall_response"),
                row.get("agent_id", "EXCEPTION_AGENT"),
                row.get("subject_id", "booking-1"),
                row.get("context", '{"facts": {"stall_minutes": 12}}'),
                row.get("action", "reassign"),
                row.get("confidence", 0.7),
                vector_text(row["embedding"]),
                row.get("decided_at", datetime.now(UTC)),
                outcome,
                "sweeper" if outcome else None,
            )
        )
    await conn.executemany(
        """
        insert into decisions (id, decision_type, agent_id, subject_id, context, action, confidence,
                               embedding, decided_at, outcome, judged_at, judged_by)
        values ($1, $2, $3, $4, $5::jsonb, $6, $7, $8::text::vector, $9, $10,
                case when $10::text is null then null else now() end, $11)
        """,
        records,
    )
    return ids
