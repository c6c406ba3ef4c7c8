"""Which models a decision listing reads: an exact model, part of a name, both, or none."""

import pytest

from services.decisions.queries import facet_days, listed_models
from services.decisions.rules import FACET_DEFAULT_DAYS, FACET_MAX_DAYS, InvalidDecision

KNOWN = ["claude-haiku-4-5", "Claude-Sonnet-4-5", "gpt_4o%", "gpt\\4o"]


def test_no_model_asked_reads_every_decision():
    assert listed_models(KNOWN, model=None, model_contains=None) is None
    assert listed_models(KNOWN, model="", model_contains="") is None


def test_part_of_a_name_matches_ignoring_case_and_takes_pattern_characters_literally():
    assert listed_models(KNOWN, model=None, model_contains="SONNET") == ["Claude-Sonnet-4-5"]
    assert listed_models(KNOWN, model=None, model_contains="claude") == ["claude-haiku-4-5", "Claude-Sonnet-4-5"]
    assert listed_models(KNOWN, model=None, model_contains="%") == ["gpt_4o%"]
    assert listed_models(KNOWN, model=None, model_contains="_") == ["gpt_4o%"]
    assert listed_models(KNOWN, model=None, model_contains="\\") == ["gpt\\4o"]
    assert listed_models(KNOWN, model=None, model_contains="opus") == []


def test_an_exact_model_is_read_even_when_unseen_and_narrows_with_a_substring():
    assert listed_models(KNOWN, model="claude-opus-5", model_contains=None) == ["claude-opus-5"]
    assert listed_models(KNOWN, model="claude-haiku-4-5", model_contains="HAIKU") == ["claude-haiku-4-5"]
    assert listed_models(KNOWN, model="claude-haiku-4-5", model_contains="sonnet") == []


def test_the_facet_window_defaults_to_a_month_and_refuses_outside_a_day_to_a_year():
    assert facet_days(None) == FACET_DEFAULT_DAYS == 30
    assert facet_days(1) == 1 and facet_days(FACET_MAX_DAYS) == FACET_MAX_DAYS
    for days in (0, -1, FACET_MAX_DAYS + 1):
        with pytest.raises(InvalidDecision) as caught:
            facet_days(days)
        assert caught.value.field == "days"
