"""The suite's watchdog: a test's setup, call or teardown that runs past
OUTRIDER_TEST_WATCHDOG_S seconds (300 unless set; 0 turns it off) has every
thread's stack written to the terminal's stderr, and, when its thread runs an
asyncio loop, every task's await chain; then the test fails. A hang ends with
where it hung, not at the CI job's timeout with nothing said.

It fails the test by cancelling the task the test's loop runs; when that
does not end it (the loop is blocked, or the test is not async), it
interrupts the test's thread as Ctrl-C would, every GRACE_S, until it ends.
"""

from __future__ import annotations

import asyncio
import faulthandler
import math
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from types import FrameType
from typing import IO, Any

import pytest

LIMIT_SETTING = "OUTRIDER_TEST_WATCHDOG_S"
DEFAULT_LIMIT_S = 300.0
# How long a cancelled test gets to end before its thread is interrupted, and between interruptions.
GRACE_S = 10.0


@dataclass(frozen=True, eq=False)
class Watched:
    """One phase of one test, from its start: compared by identity, so a
    phase that ended is never taken for the next one."""

    what: str
    deadline: float
    thread: int


def limit_s() -> float:
    raw = os.environ.get(LIMIT_SETTING, "").strip()
    try:
        limit = float(raw) if raw else DEFAULT_LIMIT_S
    except ValueError:
        limit = math.nan
    if not (math.isfinite(limit) and limit >= 0):
        raise pytest.UsageError(f"{LIMIT_SETTING} must be a number of seconds, 0 to turn the watchdog off; not {raw!r}")
    return limit


def running_task(thread: int) -> tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]] | None:
    """The loop `thread` runs and the task it runs until complete (the test's
    or a fixture's, as pytest-asyncio's runner starts them), read off the
    thread's stack, since asyncio names a thread's running loop to that thread alone."""
    frame: FrameType | None = sys._current_frames().get(thread)
    while frame is not None:
        if frame.f_code.co_name == "run_until_complete":
            loop, task = frame.f_locals.get("self"), frame.f_locals.get("future")
            if isinstance(loop, asyncio.AbstractEventLoop) and isinstance(task, asyncio.Task):
                return loop, task
        frame = frame.f_back
    return None


def awaiting(task: asyncio.Task[Any]) -> Iterator[FrameType]:
    """A task's await chain, outermost first: its coroutine, the coroutine
    that one awaits, and so on down to what waits on a future. (A task's own
    print_stack shows only the outermost.)"""
    awaited: Any = task.get_coro()
    while (frame := getattr(awaited, "cr_frame", None) or getattr(awaited, "gi_frame", None)) is not None:
        yield frame
        awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "gi_yieldfrom", None)


def tasks_text(loop: asyncio.AbstractEventLoop, running: asyncio.Task[Any]) -> str:
    """Every task of the loop, the one its thread runs first."""
    lines = []
    for task in sorted(asyncio.all_tasks(loop), key=lambda task: task is not running):
        lines.append(f"{task!r}\n")
        lines += traceback.StackSummary.extract((frame, frame.f_lineno) for frame in awaiting(task)).format()
    return "".join(lines)


class Watchdog:
    """One thread for the whole run, woken once per limit at most: every
    deadline set while it waits lies past its wake-up, so no phase's start
    need wake it, and a phase costs one small object and two attribute writes."""

    def __init__(self, limit_s: float, terminal: IO[str]) -> None:
        self.limit_s, self.terminal = limit_s, terminal
        self.watched: Watched | None = None
        self.barked: Watched | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="test-watchdog", daemon=True)
        self._thread.start()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        return (yield from self._phase(item, "setup"))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        return (yield from self._phase(item, "call"))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, None, None]:
        return (yield from self._phase(item, "teardown"))

    def pytest_unconfigure(self) -> None:
        self._stop.set()
        self._thread.join()
        self.terminal.close()

    def _phase(self, item: pytest.Item, when: str) -> Generator[None, None, None]:
        watched = Watched(f"{item.nodeid} ({when})", time.monotonic() + self.limit_s, threading.get_ident())
        self.watched = watched
        try:
            yield
        except BaseException:
            # The cancellation or the interrupt the watchdog caused, said as what it means.
            if self.barked is watched:
                pytest.fail(
                    f"{watched.what} ran past {self.limit_s:g}s ({LIMIT_SETTING}); the stacks of every thread"
                    " and every asyncio task are on stderr above the report"
                )
            raise
        finally:
            self.watched = None

    def _watch(self) -> None:
        wait = self.limit_s
        while not self._stop.wait(wait):
            watched, now = self.watched, time.monotonic()
            if watched is not None and now >= watched.deadline:
                self._bark(watched)
                wait = 0.0  # the next phase's deadline, looked at afresh
            else:
                wait = watched.deadline - now if watched is not None else self.limit_s

    def _bark(self, watched: Watched) -> None:
        self.barked = watched
        self._say(f"\n+++ watchdog: {watched.what} has run past {self.limit_s:g}s ({LIMIT_SETTING}) +++")
        self._say("+++ every thread's stack +++")
        faulthandler.dump_traceback(self.terminal, all_threads=True)
        running = running_task(watched.thread)
        grace = 0.0
        if running is not None:
            loop, task = running
            self._say(f"+++ every task of the loop in the test's thread +++\n{tasks_text(loop, task)}", end="")
            self._say(f"+++ watchdog: cancelling {task.get_name()} +++")
            loop.call_soon_threadsafe(task.cancel, f"{watched.what} ran past {self.limit_s:g}s ({LIMIT_SETTING})")
            grace = GRACE_S
        while self._still_runs(watched, grace):
            self._say(f"+++ watchdog: {watched.what} still runs; interrupting it as Ctrl-C would +++")
            signal.pthread_kill(watched.thread, signal.SIGINT)
            grace = GRACE_S

    def _still_runs(self, watched: Watched, for_s: float) -> bool:
        """Whether the phase still runs `for_s` from now, looked at every tenth of a second."""
        until = time.monotonic() + for_s
        while self.watched is watched and time.monotonic() < until:
            if self._stop.wait(0.1):
                return False
        return self.watched is watched and not self._stop.is_set()

    def _say(self, text: str, end: str = "\n") -> None:
        self.terminal.write(text + end)
        self.terminal.flush()


def pytest_configure(config: pytest.Config) -> None:
    limit = limit_s()
    # A debugger's pause is no hang.
    if limit == 0 or config.getoption("usepdb", False) or config.getoption("trace", False):
        return
    # The terminal's stderr, kept now while output is not captured: a test's
    # captured stderr is shown only once it ends, and a hung one may never.
    terminal = os.fdopen(os.dup(2), "w", encoding="utf-8", errors="replace")
    config.pluginmanager.register(Watchdog(limit, terminal), "outrider-watchdog")
