"""The exports' cells: any JSON value a listing holds becomes a cell a
spreadsheet shows and never runs, reading back as the value it was; every
column in order."""

from __future__ import annotations

import csv
import io
import json

from hypothesis import given
from hypothesis import strategies as st

from gateway.codec.decisions import EXPORT_COLUMNS, export_record, listed_decision_json
from gateway.codec.registry import AUDIT_EXPORT_COLUMNS, audit_json
from gateway.codec.telemetry import RUN_EXPORT_COLUMNS, run_json
from gateway.export import FORMULA_STARTS, cell, csv_lines, csv_rows, spreadsheet_safe
from outrider.v1 import decisions_pb2, registry_pb2, telemetry_pb2

# Every JSON value: an audit row's old and new values are whatever was changed.
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@given(st.text())
def test_no_text_cell_ever_starts_a_formula_and_the_text_is_kept(text: str):
    safe = spreadsheet_safe(text)
    assert not safe.startswith(FORMULA_STARTS)
    assert safe in (text, f"'{text}")


@given(JSON_VALUES)
def test_every_json_value_is_a_safe_cell_that_reads_back(value):
    shown = cell(value)
    (row,) = csv.reader(io.StringIO(csv_lines([[shown]])))
    assert row == [shown]
    if isinstance(value, bool | int | float):
        # Numbers are written as numbers, a negative one unquoted.
        assert json.loads(shown) == value
        return
    assert not shown.startswith(FORMULA_STARTS)
    unquoted = shown[1:] if shown.startswith("'") and shown[1:].startswith(FORMULA_STARTS) else shown
    if value is None:
        assert shown == ""
    elif isinstance(value, str):
        assert unquoted == value
    else:
        assert json.loads(unquoted) == value


@given(st.lists(st.fixed_dictionaries({"old": JSON_VALUES, "new": JSON_VALUES, "entity_id": st.text()}), max_size=5))
def test_audit_rows_keep_their_columns_whatever_was_changed(changes):
    text = csv_lines([list(AUDIT_EXPORT_COLUMNS)]) + csv_rows(changes, AUDIT_EXPORT_COLUMNS)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == len(changes)
    for row, change in zip(rows, changes, strict=True):
        assert list(row) == list(AUDIT_EXPORT_COLUMNS)
        assert (row["old"], row["new"], row["id"]) == (cell(change["old"]), cell(change["new"]), "")


@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "id": st.uuids().map(str),
                "subject_id": st.text(min_size=1),
                "reasoning": st.none() | st.text(),
                "confidence": st.floats(min_value=0, max_value=1),
                "rollout": st.none()
                | st.fixed_dictionaries({"id": st.uuids().map(str), "arm": st.sampled_from(["control", "candidate"])}),
            }
        ),
        max_size=5,
    )
)
def test_decision_rows_spread_the_rollout_over_two_columns(decisions):
    text = csv_lines([list(EXPORT_COLUMNS)]) + csv_rows([export_record(d) for d in decisions], EXPORT_COLUMNS)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == len(decisions)
    for row, decision in zip(rows, decisions, strict=True):
        assert list(row) == list(EXPORT_COLUMNS)
        assert row["subject_id"] == spreadsheet_safe(decision["subject_id"])
        assert float(row["confidence"]) == decision["confidence"]
        assert row["reasoning"] == ("" if decision["reasoning"] is None else spreadsheet_safe(decision["reasoning"]))
        assert row["rollout_arm"] == (decision["rollout"] or {}).get("arm", "")


def test_a_negative_number_is_a_number_and_dashed_text_is_quoted():
    (row,) = csv.DictReader(io.StringIO(csv_lines([["duration_ms", "error"]]) + csv_lines([[cell(-0.5), cell("-x")]])))
    assert (row["duration_ms"], row["error"]) == ("-0.5", "'-x")


def test_every_field_a_listing_shows_has_its_column():
    """A field added to a listing and not to its export would vanish from every file."""
    assert set(RUN_EXPORT_COLUMNS) == set(run_json(telemetry_pb2.TaskRun()))
    assert set(AUDIT_EXPORT_COLUMNS) == set(audit_json(registry_pb2.AuditRow()))
    assert set(EXPORT_COLUMNS) == set(export_record(listed_decision_json(decisions_pb2.Decision()))) - {"rollout"}
