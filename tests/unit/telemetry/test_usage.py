"""Model usage in insights: rows per agent and model, prices from the table,
and agent totals that are honest about models the table does not price."""

from __future__ import annotations

import pytest

from services.common.settings import DEFAULT_MODEL_PRICES, SettingsError, load
from services.telemetry import rules


def stats(agent: str, model: str, calls: int = 2, tokens: tuple[int, int] = (1_000_000, 200_000)) -> rules.ModelStats:
    return rules.ModelStats(
        agent_id=agent,
        model=model,
        provider="anthropic",
        calls=calls,
        failures=0,
        input_tokens=tokens[0],
        output_tokens=tokens[1],
        avg_ms=900.0,
        p95_ms=1500.0,
    )


PRICES = rules.price_table(
    {
        "claude-*": {"input": 3, "output": 15},
        "claude-opus-*": {"input": 15, "output": 75},
        "claude-opus-4-20250514": {"input": 14, "output": 70},
    }
)


@pytest.mark.parametrize(
    ("model", "price"),
    [
        ("claude-opus-4-20250514", rules.Price(14, 70)),
        ("claude-opus-4-1", rules.Price(15, 75)),
        ("claude-sonnet-4", rules.Price(3, 15)),
        ("gpt-4o", None),
        ("", None),
    ],
)
def test_the_exact_name_wins_then_the_longest_glob(model, price):
    assert rules.price_for(model, PRICES) == price


def test_rows_are_priced_per_million_tokens_and_unpriced_models_are_named():
    report = rules.model_usage([stats("A", "claude-sonnet-4"), stats("A", "gpt-4o"), stats("B", "")], PRICES)
    assert [row.estimated_cost for row in report.rows] == [pytest.approx(3 + 3), None, None]
    assert report.unpriced == ["", "gpt-4o"]


def test_without_a_price_table_nothing_is_priced_and_nothing_is_unpriced():
    report = rules.model_usage([stats("A", "claude-sonnet-4")], {})
    assert report.rows[0].estimated_cost is None and report.unpriced == []


def test_agents_total_their_calls_and_cost_only_when_every_model_is_priced():
    report = rules.model_usage(
        [
            stats("A", "claude-sonnet-4", calls=2),
            stats("A", "claude-opus-4-1", calls=1, tokens=(100_000, 10_000)),
            stats("B", "claude-sonnet-4", calls=4),
            stats("B", "gpt-4o", calls=1, tokens=(5, 5)),
        ],
        PRICES,
    )
    agents = {a.agent_id: a for a in rules.assemble([], [], {}, report.rows)}
    a, b = agents["A"], agents["B"]
    assert (a.model_calls, a.input_tokens, a.output_tokens) == (3, 1_100_000, 210_000)
    assert a.estimated_cost == pytest.approx(6 + 1.5 + 0.75)
    assert (b.model_calls, b.estimated_cost) == (5, None)
    assert a.runs == 0 and a.state == rules.SILENT, "an agent seen only through model calls is still listed"


def test_the_price_setting_is_validated_at_start(tmp_path):
    env = {"OUTRIDER_DATA_DIR": str(tmp_path)}
    loaded = load({**env, "OUTRIDER_MODEL_PRICES": '{"claude-*": {"input": 3, "output": 15.5}}'})
    assert rules.price_table(loaded.model_prices) == {"claude-*": rules.Price(3.0, 15.5)}
    assert load(env).model_prices == DEFAULT_MODEL_PRICES
    assert load({**env, "OUTRIDER_MODEL_PRICES": "{}"}).model_prices == {}
    for raw in (
        '{"claude-*": {"input": 3}}',
        '{"claude-*": {"input": -1, "output": 2}}',
        '["claude"]',
        '{"claude-*": {"input": "3", "output": 2}}',
        "nope",
    ):
        with pytest.raises(SettingsError, match="OUTRIDER_MODEL_PRICES"):
            load({**env, "OUTRIDER_MODEL_PRICES": raw})
