"""In-process ingest counters, served by GetCounters and scraped as /metrics.

Each replica counts what it handled since it started; a scrape of every
replica sums to the fleet. They live in memory on purpose: they describe this
process's work, and a database row per increment would cost more than the
ingest it measures.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(slots=True)
class Counters:
    """Mutated only from the event loop, so plain integers need no lock."""

    received: int = 0
    inserted: int = 0
    duplicates: int = 0
    malformed: int = 0
    redelivered: int = 0
    heartbeats: int = 0
    otlp_received: int = 0
    otlp_malformed: int = 0
    otlp_spans_rejected: int = 0
    otlp_runs_inserted: int = 0
    model_calls_inserted: int = 0
    otlp_duplicates: int = 0
    otlp_unwritable: int = 0

    def snapshot(self) -> dict[str, int]:
        return asdict(self)
