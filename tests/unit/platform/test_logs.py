"""Log lines: JSON for machines, a readable coloured line on a terminal."""

from __future__ import annotations

import io
import json
import logging

from services.common.logs import JsonFormatter, TextFormatter, formatter_for


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def record(message: str = "consumer recreated", **extra: object) -> logging.LogRecord:
    entry = logging.makeLogRecord(
        {
            "name": "services.telemetry",
            "levelname": "WARNING",
            "levelno": 30,
            "msg": message,
            "created": 1_764_500_000.25,
            "msecs": 250.0,
        }
    )
    entry.__dict__.update(extra)
    return entry


def test_auto_picks_text_on_a_terminal_and_json_elsewhere() -> None:
    assert isinstance(formatter_for("telemetry", "auto", Terminal()), TextFormatter)
    assert isinstance(formatter_for("telemetry", "auto", io.StringIO()), JsonFormatter)
    assert isinstance(formatter_for("telemetry", "json", Terminal()), JsonFormatter)
    plain = formatter_for("telemetry", "text", io.StringIO())
    assert isinstance(plain, TextFormatter) and not plain.colour


def test_a_readable_line_has_time_part_level_message_and_extras() -> None:
    line = TextFormatter("telemetry", colour=False).format(record(problem="409"))
    stamp, part, level, *rest = line.split()
    assert (len(stamp), part, level) == (8, "telemetry", "WARN")
    assert " ".join(rest) == "consumer recreated problem=409"


def test_colour_only_when_asked() -> None:
    assert "\x1b[" in TextFormatter("gateway", colour=True).format(record())
    assert "\x1b[" not in TextFormatter("gateway", colour=False).format(record())


def test_a_json_line_keeps_every_field() -> None:
    entry = json.loads(JsonFormatter("telemetry").format(record(problem="409")))
    assert (entry["role"], entry["level"], entry["msg"], entry["problem"]) == (
        "telemetry",
        "warning",
        "consumer recreated",
        "409",
    )
    assert entry["at"].endswith("Z")
