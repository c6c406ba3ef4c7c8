"""Retention: a malformed-facts counter and its sample go once no rejection
has moved it for OUTRIDER_FACT_REJECTION_RETENTION_DAYS (services.common.retention
runs the job)."""

from __future__ import annotations

from services.common.retention import Lifetime, days
from services.common.settings import Settings
from services.outcomes import store


def lifetimes(settings: Settings) -> list[Lifetime]:
    return [Lifetime("fact_rejections", days(settings, settings.fact_rejection_retention_days), store.prune_rejections)]
