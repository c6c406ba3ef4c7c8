"""The export's cells: spreadsheet-safe text, numbers as written, every column."""

from __future__ import annotations

import csv
import io

from hypothesis import given
from hypothesis import strategies as st

from gateway.codec.decisions import (
    EXPORT_COLUMNS,
    FORMULA_STARTS,
    export_csv_header,
    export_csv_rows,
    spreadsheet_safe,
)


@given(st.text())
def test_no_cell_ever_starts_a_formula_and_the_text_is_kept(text: str):
    cell = spreadsheet_safe(text)
    assert not cell.startswith(FORMULA_STARTS)
    assert cell in (text, f"'{text}")


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
def test_rows_read_back_as_written(decisions):
    rows = list(csv.DictReader(io.StringIO(export_csv_header() + export_csv_rows(decisions))))
    assert len(rows) == len(decisions)
    for row, decision in zip(rows, decisions, strict=True):
        assert list(row) == list(EXPORT_COLUMNS)
        assert row["subject_id"] == spreadsheet_safe(decision["subject_id"])
        assert float(row["confidence"]) == decision["confidence"]
        assert row["reasoning"] == ("" if decision["reasoning"] is None else spreadsheet_safe(decision["reasoning"]))
        assert row["rollout_arm"] == (decision["rollout"] or {}).get("arm", "")


def test_a_negative_number_is_a_number_not_quoted_text():
    (row,) = csv.DictReader(io.StringIO(export_csv_header() + export_csv_rows([{"confidence": -0.5, "action": "-x"}])))
    assert row["confidence"] == "-0.5"
    assert row["action"] == "'-x"
