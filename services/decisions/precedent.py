"""Precedent search: the judged decisions of one type nearest to a context.

The plan (graph or exact, and how wide a graph walk) comes from
queries.plan_search; this module supplies its inputs, the judged-row count of
every type, kept for a minute because counting on every query would
cost more than the search.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence

from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from services.decisions import store
from services.decisions.queries import (
    EF_PER_RESULT,
    EF_SEARCH_MAX,
    EXACT_SEARCH_ROWS,
    graph_came_short,
    plan_search,
)
from services.decisions.store import DecisionRow

_log = logging.getLogger(__name__)

# Long enough that counting (an index-only scan over judged rows) is a small
# share of the work; short enough that a type's share of the graph, which
# moves with the outcome judge's sweeps, is never far off. A stale count only
# changes speed, never the answer: a short graph walk is re-run exactly.
COUNTS_TTL_S = 60.0
SEARCH_POOL_SIZE = 10


def search_engine(url: str, context: str) -> AsyncEngine:
    """A pool for precedent search alone: autocommit, and no ping on checkout.

    The shared engine pings every connection it hands out, and the ping
    wraps itself in a transaction: three round trips, more than the search
    they guard. A search is a single read, so a connection that died with
    the database is simply retried once on a fresh one (see nearest).
    """
    return create_async_engine(
        url,
        pool_size=SEARCH_POOL_SIZE,
        max_overflow=0,
        pool_pre_ping=False,
        # Last in, first out: light traffic keeps reusing one or two warm
        # backends instead of rotating through all ten.
        pool_use_lifo=True,
        connect_args={
            "server_settings": {"search_path": f"{context},public", "application_name": f"outrider-{context}-search"}
        },
    ).execution_options(isolation_level="AUTOCOMMIT")


class JudgedCounts:
    """Judged decisions per type, recounted in the background when stale.

    Searches go on with the previous counts while a recount runs: at a
    million rows the count takes a good fraction of a second, and making
    every search that arrives meanwhile wait for it would put that pause in
    the latency of each of them.
    """

    def __init__(self, engine: AsyncEngine, *, ttl_s: float = COUNTS_TTL_S) -> None:
        self._engine = engine
        self._ttl_s = ttl_s
        self._counts: dict[str, int] = {}
        self._total = 0
        self._read_at: float | None = None
        self._recount: asyncio.Task[None] | None = None

    async def get(self, decision_type: str) -> tuple[int, int]:
        """(judged rows of this type, judged rows of every type)."""
        stale = self._read_at is None or time.monotonic() - self._read_at > self._ttl_s
        if stale and self._recount is None:
            self._recount = asyncio.create_task(self._count())
        if self._read_at is None and self._recount is not None:
            # Nothing to go on yet: the first searches wait for the first count.
            await asyncio.shield(self._recount)
        return self._counts.get(decision_type, 0), self._total

    async def _count(self) -> None:
        try:
            async with self._engine.connect() as conn:
                counts = await store.judged_counts(conn)
            self._counts, self._total = counts, sum(counts.values())
            self._read_at = time.monotonic()
        except Exception:
            if self._read_at is None:
                raise
            # Older counts still plan correct searches; the next search retries.
            _log.warning("recounting judged decisions failed", exc_info=True)
        finally:
            self._recount = None


class PrecedentSearch:
    """Searches through an autocommit engine, as search_engine() makes."""

    def __init__(
        self,
        engine: AsyncEngine,
        *,
        counts: JudgedCounts | None = None,
        exact_rows: int = EXACT_SEARCH_ROWS,
        ef_per_result: float = EF_PER_RESULT,
    ) -> None:
        self._engine = engine
        self._counts = counts or JudgedCounts(engine)
        self._exact_rows = exact_rows
        self._ef_per_result = ef_per_result

    async def nearest(self, *, decision_type: str, embedding: Sequence[float], k: int) -> list[DecisionRow]:
        try:
            return await self._nearest(decision_type, embedding, k)
        except (DBAPIError, store.ConnectionLost) as error:
            if isinstance(error, DBAPIError) and not error.connection_invalidated:
                raise
            # The pool has dropped the dead connection; a fresh one answers.
            return await self._nearest(decision_type, embedding, k)

    async def _nearest(self, decision_type: str, embedding: Sequence[float], k: int) -> list[DecisionRow]:
        type_rows, judged_rows = await self._counts.get(decision_type)
        plan = plan_search(
            k=k, type_rows=type_rows, judged_rows=judged_rows,
            exact_rows=self._exact_rows, ef_per_result=self._ef_per_result,
        )
        async with self._engine.connect() as conn:
            if not plan.exact:
                rows = await store.find_similar(
                    conn, decision_type=decision_type, embedding=embedding, k=k, exact=False,
                    ef_search=plan.ef_search,
                )
                # A query far from every precedent of its type (a situation
                # never seen) lands the walk among other types' rows; a wider
                # walk usually reaches the type, and costs far less than
                # reading all of its rows.
                if graph_came_short(found=len(rows), k=k, type_rows=type_rows) and plan.ef_search < EF_SEARCH_MAX:
                    rows = await store.find_similar(
                        conn, decision_type=decision_type, embedding=embedding, k=k, exact=False,
                        ef_search=EF_SEARCH_MAX,
                    )
                if not graph_came_short(found=len(rows), k=k, type_rows=type_rows):
                    return rows
            return await store.find_similar(conn, decision_type=decision_type, embedding=embedding, k=k, exact=True)
