"""The judging settings as `services.common.settings` declares them: a good
value is read silently; a bad one warns, naming the variable and the value,
and the default is used rather than the start refused."""

import logging

import pytest

from services.common.settings import load

WINDOW = ("AGENT_OUTCOME_WINDOW_HOURS", "outcome_window_hours")
RETENTION = ("AGENT_DECISION_RETENTION_DAYS", "decision_retention_days")


def read(tmp_path, setting: tuple[str, str], raw: str | None) -> int:
    variable, field = setting
    env = {"OUTRIDER_DATA_DIR": str(tmp_path)}
    if raw is not None:
        env[variable] = raw
    return getattr(load(env), field)


@pytest.mark.parametrize(
    ("setting", "raw", "value"),
    [
        *((WINDOW, raw, hours) for raw, hours in [(None, 48), ("", 48), ("   ", 48), ("72", 72), (" 24 ", 24)]),
        (WINDOW, "1", 1),
        *((RETENTION, raw, days) for raw, days in [(None, 180), ("", 180), ("30", 30), (" 365 ", 365)]),
    ],
)
def test_a_good_value_is_read_silently(tmp_path, setting, raw, value, caplog):
    with caplog.at_level(logging.WARNING):
        assert read(tmp_path, setting, raw) == value
    assert caplog.records == []


@pytest.mark.parametrize(
    ("setting", "raw", "default"),
    [
        *((WINDOW, raw, 48) for raw in ["abc", "0", "-5", "1.5", "1e3", "8761", "99999999999"]),
        *((RETENTION, raw, 180) for raw in ["forever", "0", "-1", "30.5", "3651", "10000000"]),
    ],
)
def test_a_bad_value_warns_and_uses_the_default(tmp_path, setting, raw, default, caplog):
    with caplog.at_level(logging.WARNING):
        assert read(tmp_path, setting, raw) == default
    assert len(caplog.records) == 1
    assert setting[0] in caplog.text
    assert repr(raw) in caplog.text
