"""Precedent search: the judged decisions of one type nearest to a context.

The plan (graph or exact, and how wide a graph walk) comes from
queries.plan_search; this module supplies its inputs, the judged-row count of
every type, kept for a minute because counting on every query would
cost more than the search, and runs the plan.
"""

from __future__ import annotations

import asyncio
import logging
import time

from sqlalchemy.ext.asyncio import AsyncEngine

from services.decisions import rules, store
from services.decisions.connections import DirectConnections
from services.decisions.embedding import Embedder
from services.decisions.queries import (
    EF_PER_RESULT,
    EF_SEARCH_MAX,
    EXACT_SEARCH_ROWS,
    SimilarQuery,
    graph_came_short,
    plan_search,
)
from services.decisions.rules import SimilarSummary
from services.decisions.store import DecisionRow

_log = logging.getLogger(__name__)

# Long enough that counting (an index-only scan over judged rows) is a small
# share of the work; short enough that a type's share of the graph, which
# moves with the outcome judge's sweeps, is never far off. A stale count only
# changes speed, never the answer: a short graph walk is re-run exactly.
COUNTS_TTL_S = 60.0


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
    """Searches on direct connections (direct_connections(purpose="search"))."""

    def __init__(
        self,
        connections: DirectConnections,
        *,
        counts: JudgedCounts,
        exact_rows: int = EXACT_SEARCH_ROWS,
        ef_per_result: float = EF_PER_RESULT,
    ) -> None:
        self._connections = connections
        self._counts = counts
        self._exact_rows = exact_rows
        self._ef_per_result = ef_per_result

    async def nearest(self, *, decision_type: str, embedding: bytes, k: int) -> list[DecisionRow]:
        """`embedding` in store.vector_bytes form."""
        try:
            return await self._nearest(decision_type, embedding, k)
        except store.ConnectionLost:
            # The dead connection took the idle ones with it; a fresh one answers.
            return await self._nearest(decision_type, embedding, k)

    async def _nearest(self, decision_type: str, embedding: bytes, k: int) -> list[DecisionRow]:
        type_rows, judged_rows = await self._counts.get(decision_type)
        plan = plan_search(
            k=k,
            type_rows=type_rows,
            judged_rows=judged_rows,
            exact_rows=self._exact_rows,
            ef_per_result=self._ef_per_result,
        )
        if not plan.exact:
            rows = await self._find(decision_type, embedding, k, ef_search=plan.ef_search)
            # A query far from every precedent of its type (a situation
            # never seen) lands the walk among other types' rows; a wider
            # walk usually reaches the type, and costs far less than
            # reading all of its rows.
            if graph_came_short(found=len(rows), k=k, type_rows=type_rows) and plan.ef_search < EF_SEARCH_MAX:
                rows = await self._find(decision_type, embedding, k, ef_search=EF_SEARCH_MAX)
            if not graph_came_short(found=len(rows), k=k, type_rows=type_rows):
                return rows
        return await self._find(decision_type, embedding, k, ef_search=None)

    async def _find(self, decision_type: str, embedding: bytes, k: int, *, ef_search: int | None) -> list[DecisionRow]:
        async with self._connections.connection(ef_search=ef_search) as conn:
            return await store.find_similar(
                conn, decision_type=decision_type, embedding=embedding, k=k, exact=ef_search is None
            )


async def find(
    query: SimilarQuery, *, embedder: Embedder, precedents: PrecedentSearch
) -> tuple[list[DecisionRow], SimilarSummary]:
    """The precedents of one search, nearest first, and how they turned out.

    The caller's own vector is searched with as it is; facts without one are
    embedded as a recorded decision's would be, so they meet its vector.
    """
    vector = store.vector_bytes(query.embedding or embedder.embed(query.context or {}))
    rows = await precedents.nearest(decision_type=query.decision_type, embedding=vector, k=query.k)
    return rows, rules.similar_summary(row.outcome or "" for row in rows)
