"""A retention day of OUTRIDER_RETENTION_DAY_S seconds: every lifetime and
every pass interval counts in it, so a soak plays weeks in minutes with the
platform's own deletes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from services.common import retention
from services.common.settings import SettingsError, load
from services.decisions import retention as decision_retention
from services.outcomes.retention import lifetimes as outcome_lifetimes
from services.playground.retention import lifetimes as playground_lifetimes
from services.telemetry.retention import lifetimes as telemetry_lifetimes

BASE = {"OUTRIDER_JWT_SECRET": "j" * 40, "OUTRIDER_INTERNAL_KEY": "k" * 40}
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def test_a_real_day_by_default_passes_hourly(tmp_path) -> None:
    settings = load({**BASE, "OUTRIDER_DATA_DIR": str(tmp_path)})
    assert settings.retention_day_s == 86_400
    assert retention.days(settings, 30) == timedelta(days=30)
    assert retention.interval_s(settings) == retention.INTERVAL_S


def test_a_compressed_day_shortens_every_lifetime_and_the_passes(tmp_path) -> None:
    settings = load(
        {
            **BASE,
            "OUTRIDER_DATA_DIR": str(tmp_path),
            "OUTRIDER_RETENTION_DAY_S": "60",
            "OUTRIDER_TELEMETRY_RETENTION_DAYS": "4",
            "OUTRIDER_PLAYGROUND_RETENTION_DAYS": "3",
            "OUTRIDER_FACT_REJECTION_RETENTION_DAYS": "2",
        }
    )
    assert retention.interval_s(settings) == 2.5
    assert [(one.table, one.keep) for one in telemetry_lifetimes(settings)] == [
        ("runs", timedelta(minutes=4)),
        ("model_calls", timedelta(minutes=4)),
    ]
    # The admissions' rate window is minutes of the clock, whatever the day.
    assert [(one.table, one.keep) for one in playground_lifetimes(settings)] == [
        ("runs", timedelta(minutes=3)),
        ("run_admissions", timedelta(minutes=10)),
    ]
    assert [(one.table, one.keep) for one in outcome_lifetimes(settings)] == [("fact_rejections", timedelta(minutes=2))]


def test_decisions_count_their_retention_in_the_same_day() -> None:
    assert decision_retention.cutoff(NOW, 4, timedelta(seconds=60)) == NOW - timedelta(minutes=4)
    assert decision_retention.cutoff(NOW, 4) == NOW - timedelta(days=4)


@pytest.mark.parametrize("raw", ["59", "86401", "a day"])
def test_a_day_outside_a_minute_to_a_day_is_refused(tmp_path, raw) -> None:
    with pytest.raises(SettingsError, match="OUTRIDER_RETENTION_DAY_S"):
        load({**BASE, "OUTRIDER_DATA_DIR": str(tmp_path), "OUTRIDER_RETENTION_DAY_S": raw})
