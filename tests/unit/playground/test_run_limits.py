"""The playground's run limits and the stored run's status: pure rules, and
the settings that set them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.common.settings import SettingsError, load
from services.playground import rules

STARTED = datetime(2026, 9, 29, 12, 0, tzinfo=UTC)
PROPERTY = settings(max_examples=300, deadline=None, database=None)


@pytest.mark.parametrize(
    ("stored", "seconds_later", "seen"),
    [
        ("running", 0, "running"),
        # Past the deadline the run may still be writing its end.
        ("running", 120 + 59, "running"),
        ("running", 120 + 61, "interrupted"),
        ("finished", 10_000, "finished"),
    ],
)
def test_a_run_still_running_well_past_its_deadline_was_interrupted(stored, seconds_later, seen):
    now = STARTED + timedelta(seconds=seconds_later)

    assert rules.run_status(stored, STARTED, now, 120.0) == seen


@pytest.mark.parametrize(
    ("spent", "allowed"),
    [
        (0, 16_384),  # a result's own cap, well inside the budget
        (40_000, 9_152),  # what is left of the budget
        (48_896, 256),  # just enough to be worth reading
        (48_897, 0),  # less than that: spent
        (49_152, 0),
    ],
)
def test_a_result_may_take_its_own_cap_or_what_is_left_of_the_run_s_budget(spent, allowed):
    assert rules.result_allowance(spent, 49_152, 16_384, 256) == allowed


def test_unstorable_characters_are_replaced_in_keys_and_values_alike():
    value = {"na\x00me": ["a\ud800b", ("\udfff",), 7, None], "ok": "Ünïcode 🚚"}

    assert rules.storable(value) == {"na\ufffdme": ["a\ufffdb", ["\ufffd"], 7, None], "ok": "Ünïcode 🚚"}


json_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


@PROPERTY
@given(json_like)
def test_whatever_comes_in_every_string_out_is_nul_free_utf_8_and_a_second_pass_changes_nothing(value):
    cleaned = rules.storable(value)

    for text in strings(cleaned):
        assert "\x00" not in text
        text.encode("utf-8")
    assert rules.storable(cleaned) == cleaned


def test_run_limits_default_to_what_the_settings_default_to(tmp_path):
    loaded = load({"OUTRIDER_DATA_DIR": str(tmp_path)})
    limits = rules.RunLimits()

    assert (
        loaded.playground_run_deadline_s,
        loaded.playground_tool_calls_per_turn,
        loaded.playground_result_bytes_per_run,
        loaded.playground_http_read_bytes,
    ) == (limits.deadline_s, limits.tool_calls_per_turn, limits.result_bytes_per_run, rules.HTTP_READ_BYTES)


@pytest.mark.parametrize(
    ("variable", "raw"),
    [
        ("OUTRIDER_PLAYGROUND_RUN_DEADLINE_S", "0"),
        ("OUTRIDER_PLAYGROUND_TOOL_CALLS_PER_TURN", "65"),
        ("OUTRIDER_PLAYGROUND_RESULT_BYTES_PER_RUN", "1024"),
        ("OUTRIDER_PLAYGROUND_HTTP_READ_BYTES", "lots"),
    ],
)
def test_a_limit_out_of_its_range_stops_the_start(tmp_path, variable, raw):
    with pytest.raises(SettingsError, match=variable):
        load({"OUTRIDER_DATA_DIR": str(tmp_path), variable: raw})
