"""In-process ingest counters, served by GetCounters and scraped as /metrics.

Each replica counts what it handled since it started; a scrape of every
replica sums to the fleet. They live in memory on purpose: they describe this
process's work, and a database row per increment would cost more than the
ingest it measures.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(slots=True)
class Counters:
    """Mutated only from the event loop, so plain integers need no lock."""

    received: int = 0
    inserted: int = 0
    duplicates: int = 0
    malformed: int = 0
    redelivered: int = 0
    heartbeats: int = 0
    dead_lettered: int = 0
    malformed_by_field: Counter[str] = field(default_factory=Counter)
    otlp_received: int = 0
    otlp_malformed: int = 0
    otlp_spans_rejected: int = 0
    otlp_runs_inserted: int = 0
    model_calls_inserted: int = 0
    otlp_duplicates: int = 0
    otlp_unwritable: int = 0
    # Runs and heartbeats refused because their agent is not one their
    # engine's key lists, by kind ("task_run", "heartbeat").
    agent_refusals: Counter[str] = field(default_factory=Counter)
    # Messages on the heartbeat subjects whose reply subject was not the
    # sender's own inbox: left unanswered.
    replies_refused: int = 0

    def count_malformed(self, field_name: str) -> None:
        self.malformed += 1
        self.malformed_by_field[field_name] += 1

    def snapshot(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "malformed_by_field": dict(self.malformed_by_field),
            "agent_refusals": dict(self.agent_refusals),
        }
