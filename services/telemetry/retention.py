"""Retention: runs and model calls that started more than
OUTRIDER_TELEMETRY_RETENTION_DAYS ago are deleted, a bounded batch at a time
(services.common.retention runs the job)."""

from __future__ import annotations

from services.common.retention import Lifetime, days
from services.common.settings import Settings
from services.telemetry import store


def lifetimes(settings: Settings) -> list[Lifetime]:
    keep = days(settings, settings.telemetry_retention_days)
    return [Lifetime("runs", keep, store.prune_runs), Lifetime("model_calls", keep, store.prune_model_calls)]
