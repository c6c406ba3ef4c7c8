"""Retention: playground runs older than OUTRIDER_PLAYGROUND_RETENTION_DAYS
are deleted with their traces, and admissions once they have left the rate
window (services.common.retention runs the job)."""

from __future__ import annotations

from datetime import timedelta

from services.common.retention import Lifetime, days
from services.common.settings import Settings
from services.playground import rules, store


def lifetimes(settings: Settings) -> list[Lifetime]:
    return [
        Lifetime("runs", days(settings, settings.playground_retention_days), store.prune_runs),
        # An admission past the window can never count against the limit again.
        Lifetime("run_admissions", timedelta(seconds=rules.RATE_WINDOW_S), store.prune_admissions),
    ]
