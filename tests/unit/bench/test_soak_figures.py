"""The soak bench's arithmetic: reconciliation, slopes, restarted counters, /readyz around a kill."""

from __future__ import annotations

import pytest

from bench.soak.figures import Ledger, Tally, increase, last_half, outage, reconcile, refusals, slope_per_hour


def test_slope_is_per_hour_from_a_least_squares_fit():
    # Fitted by hand: covariance 630 over spread 18,000 is 0.035 a second.
    points = [(0.0, 10.0), (60.0, 13.0), (120.0, 13.0), (180.0, 17.0)]
    assert slope_per_hour(points) == pytest.approx(126.0)
    assert slope_per_hour([(t, 42.0) for t in (0.0, 10.0, 20.0)]) == 0.0
    assert slope_per_hour([(5.0, 1.0)]) == 0.0
    assert slope_per_hour([(5.0, 1.0), (5.0, 9.0)]) == 0.0


def test_last_half_keeps_the_second_half_of_the_time_covered():
    points = [(0.0, 1.0), (10.0, 2.0), (50.0, 3.0), (60.0, 4.0), (100.0, 5.0)]
    assert last_half(points) == [(50.0, 3.0), (60.0, 4.0), (100.0, 5.0)]
    assert last_half([]) == []


def test_a_counter_that_restarts_counts_its_new_reading_as_growth():
    assert increase([10.0, 15.0, 3.0, 8.0]) == 5 + 3 + 5
    assert increase([7.0]) == 0.0


def test_reconcile_counts_missing_and_extra_rows():
    tally = reconcile(["a", "b", "c", "c", "d"], {"a": 1, "b": 3, "d": 0, "x": 2})
    assert tally == Tally(acknowledged=4, found=2, missing=2, doubled=2)


def test_ledger_looks_for_settled_ids_and_gives_up_before_the_lifetime():
    ledger = Ledger(settle_s=20.0, give_up_s=200.0)
    ledger.acknowledge("early", 0.0)
    ledger.acknowledge("early", 5.0)
    ledger.acknowledge("late", 100.0)
    ledger.acknowledge("withdrawn", 0.0)
    ledger.withdraw("withdrawn")
    assert ledger.due(30.0) == ["early"]
    ledger.settle(["early"], {}, 30.0)
    assert ledger.tally() == Tally(acknowledged=2, found=0, missing=0, doubled=0)
    ledger.settle(["early", "late"], {"late": 2}, 210.0)
    assert ledger.tally() == Tally(acknowledged=2, found=1, missing=1, doubled=1)
    assert ledger.missing == ["early"]
    assert ledger.due(1_000.0) == []


def test_the_final_look_calls_missing_whatever_was_not_found():
    ledger = Ledger(settle_s=20.0, give_up_s=200.0)
    ledger.acknowledge("a", 99.0)
    ledger.acknowledge("b", 99.0)
    assert ledger.due(100.0) == []
    assert ledger.due(100.0, everything=True) == ["a", "b"]
    ledger.settle(["a", "b"], {"a": 1}, 100.0, final=True)
    assert ledger.tally() == Tally(acknowledged=2, found=1, missing=1, doubled=0)


def test_a_ledger_refuses_to_give_up_before_it_settles():
    with pytest.raises(ValueError, match="settle_s"):
        Ledger(settle_s=30.0, give_up_s=30.0)


def test_outage_reads_red_then_green_after_the_kill_and_before_the_next():
    probes = [(9.0, True), (10.5, True), (12.0, False), (13.0, False), (16.5, True), (30.0, False), (31.0, True)]
    seen = outage("NATS", 10.0, probes, until=25.0)
    assert (seen.red_after_s, seen.red_for_s, seen.green_after_s) == (2.0, 4.5, 6.5)
    never = outage("NATS", 10.0, [(11.0, True), (12.0, True)])
    assert (never.red_after_s, never.red_for_s, never.green_after_s) == (None, None, None)
    stuck = outage("Postgres", 10.0, [(11.0, False), (12.0, False)])
    assert (stuck.red_after_s, stuck.red_for_s, stuck.green_after_s) == (1.0, None, None)


def test_refusals_are_counted_by_door_then_reason():
    events = [("REST /v1/traces", "HTTP 503"), ("NATS telemetry.task", "timeout"), ("REST /v1/traces", "HTTP 503")]
    assert refusals(events) == {"NATS telemetry.task": {"timeout": 1}, "REST /v1/traces": {"HTTP 503": 2}}
