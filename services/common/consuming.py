"""What every JetStream consumer shares: one guard between a message's bytes
and the consumer loop, a safe way to show those bytes in a log (redacted:
services/common/redaction/preview.py), and a batch write that never lets one
message hold the others hostage.

A consumer loop that dies on a message is worse than a dropped message: the
message comes back after a restart and kills it again, and every message
behind it waits forever. So parsing answers only "value" or "malformed",
whatever the bytes are, and a write that fails because of one message's data
is narrowed down to that message.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from services.common.errors import FieldError
from services.common.redaction.preview import preview

Item = TypeVar("Item")
Parsed = TypeVar("Parsed")
Result = TypeVar("Result")

# SQLSTATE classes that blame the row, not the database: 22 data exception
# (NUL in text, a number out of range), 23 integrity constraint, 54 program
# limit (a key too large for its index). Writing that row again fails again.
_DATA_CLASSES = ("22", "23", "54")


@dataclass(frozen=True, slots=True)
class Malformed:
    """Why a message cannot be used: the field at fault and the problem."""

    field: str
    problem: str

    @property
    def reason(self) -> str:
        """A short label to count by: the field, not the value."""
        return self.field


@dataclass(frozen=True, slots=True)
class Guarded(Generic[Parsed]):
    value: Parsed | None = None
    malformed: Malformed | None = None


def guarded(parse: Callable[[bytes], Parsed], data: bytes) -> Guarded[Parsed]:
    """The parsed value, or why the bytes are malformed; never an exception.

    Any exception counts: JSON nested past the parser's recursion limit, an
    integer of thousands of digits, a timestamp that overflows when moved to
    UTC, a type no rule expected. Each is a property of these bytes, so
    retrying cannot help.
    """
    try:
        return Guarded(value=parse(data))
    except FieldError as error:
        return Guarded(malformed=Malformed(error.field, error.problem))
    except RecursionError:
        return Guarded(malformed=Malformed("payload", "nested too deeply to read"))
    except Exception as error:  # noqa: BLE001 - the guard's whole point: nothing escapes into the loop
        return Guarded(malformed=Malformed("payload", f"unreadable ({type(error).__name__})"))


def printable(text: str, limit: int = 500) -> str:
    """Free text (a parser's complaint may quote the payload) made safe to store and log."""
    return preview(text.encode("utf-8", "surrogatepass"), limit)


def blames_the_data(error: BaseException) -> bool:
    """Whether a failed write failed because of what was written.

    Anything else (a dropped connection, a database restarting, a timeout)
    is an outage: the same rows will write once it is over, so they go back
    to the stream whole instead of being split and judged.
    """
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        state = getattr(current, "sqlstate", None)
        if isinstance(state, str):
            return state.startswith(_DATA_CLASSES)
        current = getattr(current, "orig", None) or current.__cause__
    return False


async def write_apart(
    items: Sequence[Item], write: Callable[[Sequence[Item]], Awaitable[Result]]
) -> tuple[list[Result], list[tuple[Item, BaseException]]]:
    """Write items together; when the data is to blame, write halves apart.

    Returns what each successful write returned, and the items that failed
    on their own with their errors. An outage is raised as it is: splitting
    a batch cannot help a database that is down.
    """
    if not items:
        return [], []
    try:
        return [await write(items)], []
    except Exception as error:
        if not blames_the_data(error):
            raise
        if len(items) == 1:
            return [], [(items[0], error)]
    middle = len(items) // 2
    first_results, first_failures = await write_apart(items[:middle], write)
    second_results, second_failures = await write_apart(items[middle:], write)
    return first_results + second_results, first_failures + second_failures
