"""The evidence rules: a propensity in (0, 1], an execution in its four words,
a window in range, and execution counts folded and ordered."""

from __future__ import annotations

import math

import pytest

from services.decisions import rules
from services.decisions.rules import Execution, ExecutionCount, InvalidDecision


@pytest.mark.parametrize("value", [1e-9, 0.5, 1.0])
def test_a_propensity_in_range_is_kept(value):
    assert rules.checked_propensity(value) == value


@pytest.mark.parametrize("value", [0.0, -0.1, 1.0000001, math.nan, math.inf])
def test_a_propensity_out_of_range_names_the_field(value):
    with pytest.raises(InvalidDecision) as caught:
        rules.checked_propensity(value)
    assert caught.value.field == "model_propensity"


def test_an_unsaid_propensity_and_execution_are_none():
    assert rules.checked_propensity(None) is None
    assert rules.checked_execution("") is None


def test_an_execution_is_one_of_four_words_exactly():
    assert [rules.checked_execution(word.value) for word in Execution] == list(Execution)
    with pytest.raises(InvalidDecision) as caught:
        rules.checked_execution("Autonomous")
    assert caught.value.field == "execution"


@pytest.mark.parametrize(("window", "kept"), [(0, False), (1, True), (10_000, True), (10_001, False)])
def test_a_window_is_between_one_and_the_cap(window, kept):
    if kept:
        assert rules.judged_window(window) == window
    else:
        with pytest.raises(InvalidDecision):
            rules.judged_window(window)


def test_execution_counts_fold_outcomes_and_put_the_unsaid_first():
    rows = [
        ("stall_response", "proposed", None, 2),
        ("stall_response", "autonomous", "success", 3),
        ("stall_response", None, "failure", 1),
        ("route_choice", "confirmed", "unknown", 4),
        ("stall_response", "autonomous", "failure", 5),
    ]
    assert rules.execution_counts(rows) == [
        ExecutionCount("route_choice", Execution.CONFIRMED, unknown=4),
        ExecutionCount("stall_response", None, failures=1),
        ExecutionCount("stall_response", Execution.AUTONOMOUS, successes=3, failures=5),
        ExecutionCount("stall_response", Execution.PROPOSED, pending=2),
    ]
