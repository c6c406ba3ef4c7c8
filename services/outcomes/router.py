"""The router: routing advice for one key, from the evidence behind it.

The evidence lives in two places, the ledger's episode credits booked under
the key and, for a decision type, the decisions context's judged outcomes by
model; the router gathers both and hands them to the advice rule.
"""

from __future__ import annotations

import asyncio
import random

from sqlalchemy.ext.asyncio import AsyncEngine

from services.outcomes import store
from services.outcomes.clients import DecisionsClient
from services.outcomes.rules.advice import Advice, CreditTally, RouteQuery, advise, recommendation
from services.outcomes.store import RouteColumn


def new_seed() -> int:
    return random.SystemRandom().getrandbits(63)


class Router:
    def __init__(self, engine: AsyncEngine, *, decisions: DecisionsClient) -> None:
        self._engine = engine
        self._decisions = decisions

    async def advise(self, query: RouteQuery) -> Advice:
        """Posteriors, pick probabilities and the seeded pick for the query's key."""
        key = query.key
        if key.kind == "decision_type":
            # Two sources, neither waiting on the other: the answer takes the slower one, not both.
            credits, outcomes = await asyncio.gather(
                self._credits(key.kind, key.name), self._decisions.count_outcomes()
            )
        else:
            credits, outcomes = await self._credits(key.kind, key.name), []
        return advise(
            key,
            credits=credits,
            outcomes=outcomes,
            candidates=query.candidates,
            seed=new_seed() if query.seed is None else query.seed,
        )

    async def _credits(self, column: RouteColumn, key: str) -> list[CreditTally]:
        async with self._engine.connect() as conn:
            return await store.tally_credits(conn, column=column, key=key)

    async def recommend(self, query: RouteQuery) -> Advice:
        """The advice, refused when it names no model to use."""
        return recommendation(await self.advise(query))
