"""Exports: every row a listing's filters select, across all its pages, as
CSV or JSON Lines, streamed page by page.

The first page is read before the answer starts, so a refused filter or a
context that is down is a status code, not a file that stops short. A
failure after it propagates: the server ends the chunked answer without its
last chunk, and the client sees an incomplete transfer rather than a file
that looks whole.

JSON Lines carry each row as the listing shows it. CSV flattens it into
named columns; a cell is text a spreadsheet shows and never runs, because
ids, reasons and changed values are text from outside (CSV injection).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, Protocol, TypeVar

from fastapi import Query
from fastapi.responses import StreamingResponse

from gateway.contracts.common import STAFF_ERRORS

CSV = "text/csv; charset=utf-8"
JSON_LINES = "application/x-ndjson"
# A cell a spreadsheet would run as a formula starts with one of these.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

ExportFormat = Annotated[Literal["csv", "jsonl"], Query(description="csv (a header row first) or jsonl")]

RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "content": {CSV: {"schema": {"type": "string"}}, JSON_LINES: {"schema": {"type": "string"}}},
        "description": "streamed page by page; a failure after the first page ends the stream unfinished",
    },
    **STAFF_ERRORS,
}


class Page(Protocol):
    @property
    def next_cursor(self) -> str: ...


P = TypeVar("P", bound=Page)


def spreadsheet_safe(cell: str) -> str:
    """Text a spreadsheet shows and never evaluates: a leading quote before
    anything that would start a formula. Numbers are written apart, so a
    negative number is never quoted."""
    return f"'{cell}" if cell.startswith(FORMULA_STARTS) else cell


def cell(value: Any) -> str:
    """One JSON value as a CSV cell: nothing for null, numbers as written,
    true/false, text made safe, and an object or a list as its JSON."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return spreadsheet_safe(value)
    return spreadsheet_safe(json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True))


def csv_lines(rows: Sequence[Sequence[str]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows(rows)
    return out.getvalue()


def csv_rows(records: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    return csv_lines([[cell(record.get(column)) for column in columns] for record in records])


def json_lines(records: Sequence[Mapping[str, Any]]) -> str:
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)


async def streamed(
    *,
    name: str,
    format: Literal["csv", "jsonl"],
    columns: Sequence[str],
    page: Callable[[str], Awaitable[P]],
    records: Callable[[P], Sequence[Mapping[str, Any]]],
    flat: Callable[[Mapping[str, Any]], Mapping[str, Any]] = lambda record: record,
) -> StreamingResponse:
    """Every page `page(cursor)` answers, from the first ("") until one has
    no next cursor, as an attachment named `name`-<UTC stamp>.<format>.
    `flat` spreads a record over the CSV's columns (JSON Lines keep it whole)."""
    first = await page("")

    async def pages() -> AsyncIterator[P]:
        reply = first
        yield reply
        while reply.next_cursor:
            reply = await page(reply.next_cursor)
            yield reply

    async def body() -> AsyncIterator[str]:
        if format == "csv":
            yield csv_lines([list(columns)])
        async for reply in pages():
            shown = records(reply)
            yield csv_rows([flat(record) for record in shown], columns) if format == "csv" else json_lines(shown)

    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return StreamingResponse(
        body(),
        media_type=CSV if format == "csv" else JSON_LINES,
        headers={"Content-Disposition": f'attachment; filename="{name}-{stamp}.{format}"'},
    )
