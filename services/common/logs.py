"""Logs: one JSON object a line for machines, a readable line for people.

`auto` (the default) picks by where the lines go: a terminal gets
`time part level message key=value…` in colour, anything else (a file, a
collector, compose) gets JSON. `OUTRIDER_LOG_FORMAT` forces either.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any, TextIO

_RESERVED = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "color_message"}

_COLOURS = {
    "DEBUG": "\x1b[2m",
    "INFO": "\x1b[36m",
    "WARNING": "\x1b[33m",
    "ERROR": "\x1b[31m",
    "CRITICAL": "\x1b[1;31m",
}
_DIM, _RESET = "\x1b[2m", "\x1b[0m"


def _extras(record: logging.LogRecord) -> dict[str, Any]:
    # Fields passed as logger.info(..., extra={...}) travel as keys.
    return {k: v for k, v in record.__dict__.items() if k not in _RESERVED}


class JsonFormatter(logging.Formatter):
    def __init__(self, role: str) -> None:
        super().__init__()
        self.role = role

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "at": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "role": self.role,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        entry.update(_extras(record))
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


class TextFormatter(logging.Formatter):
    """`14:02:07 decisions  WARN  message  key=value`, coloured when asked."""

    def __init__(self, role: str, *, colour: bool) -> None:
        super().__init__()
        self.role = role
        self.colour = colour

    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%H:%M:%S", time.localtime(record.created))
        level = record.levelname[:4]
        extras = " ".join(f"{key}={value}" for key, value in _extras(record).items())
        if self.colour:
            line = (
                f"{_DIM}{stamp}{_RESET} {self.role:<10} {_COLOURS.get(record.levelname, '')}{level:<4}{_RESET} "
                f"{record.getMessage()}" + (f"  {_DIM}{extras}{_RESET}" if extras else "")
            )
        else:
            line = f"{stamp} {self.role:<10} {level:<4} {record.getMessage()}" + (f"  {extras}" if extras else "")
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def formatter_for(role: str, log_format: str, stream: TextIO) -> logging.Formatter:
    readable = log_format == "text" or (log_format == "auto" and stream.isatty())
    if readable:
        return TextFormatter(role, colour=stream.isatty())
    return JsonFormatter(role)


def configure(role: str, level: str = "INFO", log_format: str = "auto") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter_for(role, log_format, sys.stderr))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # Third-party chatter at INFO drowns the events an operator needs.
    for noisy in ("pgserver", "alembic", "nats", "httpx", "uvicorn.access", "asyncio"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
