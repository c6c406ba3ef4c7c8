"""Telemetry rules: what a task run and a heartbeat are, and how insights are
put together. Pure functions; no I/O.

Two clocks meet here and must not be confused. A run is placed by its own
instants: started_at and finished_at are what insights windows, series
buckets and "last run" read, because an operator asks when the fleet worked,
not when its reports arrived (a batch of the morning's runs received at noon
is the morning's). The server's clock says only whether telemetry is
arriving at all ("receiving"). A run time written without an offset is read
as UTC: the SDK always sends UTC with its offset, and UTC is the one zone the
server can name without guessing the engine's. Durations come from the two
engine readings alone, whatever their zone.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from fnmatch import fnmatchcase
from typing import Any

from services.common import guards, windows
from services.common.errors import FieldError, NotFound
from services.common.paging import parse_cursor_instant

TASK_STATUSES = frozenset({"succeeded", "failed"})
MIN_WINDOW_DAYS = windows.MIN_DAYS
MAX_WINDOW_DAYS = windows.MAX_DAYS
DEFAULT_WINDOW_DAYS = windows.DEFAULT_DAYS
# Matches the heartbeat bucket's TTL: an agent heard from within this span is
# alive, and telemetry heard within it means the pipe is connected.
RECEIVING_WINDOW = timedelta(minutes=5)
SILENT = "silent"
UNKNOWN = "unknown"

MAX_ID_LENGTH = 128
MAX_TASK_ID_LENGTH = 256
MAX_STATE_LENGTH = 64
MAX_ERROR_LENGTH = 4000
# A run or a heartbeat is a dozen fields and a truncated error.
MAX_MESSAGE_BYTES = 64 * 1024

# Agent ids become keys in the heartbeat bucket, so both messages hold them to
# the key alphabet: an id a key cannot carry would let an agent report runs but
# never be seen alive.
_AGENT_ID = re.compile(r"[A-Za-z0-9_=-]+(?:\.[A-Za-z0-9_=-]+)*")
# ISO 8601 date-time, with or without an offset. Dates alone, week dates and
# compact forms are refused: no engine means them, and guessing a time of day
# would invent a duration.
_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:?\d{2})?")


class MalformedTelemetry(FieldError):
    """A telemetry message that cannot be used; `field` names the culprit."""

    default_code = "MALFORMED_TELEMETRY"


@dataclass(frozen=True, slots=True)
class TaskRun:
    """One finished task, as the engine reported it on telemetry.task."""

    agent_id: str
    task_id: str
    task_type: str
    status: str
    # Instants in UTC (see `instant`).
    started_at: datetime
    finished_at: datetime
    duration_ms: float
    error: str | None = None


@dataclass(frozen=True, slots=True)
class ModelCall:
    """One call to a model, as a GenAI model-call span reported it (see `otlp.rules`)."""

    trace_id: str
    span_id: str
    agent_id: str
    operation: str
    provider: str | None
    request_model: str | None
    response_model: str | None
    input_tokens: int | None
    output_tokens: int | None
    status: str
    error_type: str | None
    started_at: datetime
    duration_ms: float


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """One telemetry.agent message: the agent's own word on its state."""

    agent_id: str
    state: str
    at: str


@dataclass(frozen=True, slots=True)
class LiveState:
    """What the heartbeat bucket holds for one agent."""

    state: str
    at: str
    received_at: datetime | None


@dataclass(frozen=True, slots=True)
class RunStats:
    """An agent's runs within the window, as the store aggregates them."""

    agent_id: str
    runs: int
    failures: int
    avg_ms: float
    p95_ms: float
    last_run_at: datetime | None


@dataclass(frozen=True, slots=True)
class ModelStats:
    """One agent's calls to one model within the window, as the store aggregates them."""

    agent_id: str
    model: str
    provider: str
    calls: int
    failures: int
    input_tokens: int
    output_tokens: int
    avg_ms: float
    p95_ms: float


@dataclass(frozen=True, slots=True)
class ModelUsage:
    """A ModelStats row with its estimated cost, when the price table prices its model."""

    stats: ModelStats
    estimated_cost: float | None


@dataclass(frozen=True, slots=True)
class RegistryAgent:
    id: str
    status: str


@dataclass(frozen=True, slots=True)
class AgentInsight:
    agent_id: str
    runs: int
    failures: int
    avg_ms: float
    p95_ms: float
    last_run_at: datetime | None
    state: str
    last_heartbeat_at: datetime | None
    registered: bool
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    estimated_cost: float | None = None


@dataclass(frozen=True, slots=True)
class OutcomeCount:
    decision_type: str
    outcome: str
    count: int


def _decode(raw: bytes | str) -> Mapping[str, Any]:
    if len(raw) > MAX_MESSAGE_BYTES:
        raise MalformedTelemetry(
            "payload", f"is {len(raw):,} bytes; a telemetry message is at most {MAX_MESSAGE_BYTES:,}"
        )
    try:
        payload = json.loads(raw.decode() if isinstance(raw, bytes) else raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise MalformedTelemetry("payload", f"not valid JSON: {error}") from None
    if not isinstance(payload, dict):
        raise MalformedTelemetry("payload", f"expected a JSON object, got {type(payload).__name__}")
    return payload


def _text(payload: Mapping[str, Any], name: str, limit: int) -> str:
    value = payload.get(name)
    if type(value) is not str:  # JSON decodes strings to str itself, never a subclass
        if value is None:
            raise MalformedTelemetry(name, "is required")
        raise MalformedTelemetry(name, f"expected a string, got {type(value).__name__}")
    value = value.strip()
    if not value:
        raise MalformedTelemetry(name, "must not be empty")
    if len(value) > limit:
        raise MalformedTelemetry(name, f"is longer than {limit} characters")
    _carriable(name, value)
    return value


def _carriable(name: str, value: str) -> None:
    # Postgres text holds neither NUL nor a lone surrogate (JSON's \ud800);
    # one such value would fail its whole batch on every redelivery and
    # stall the stream behind it.
    guards.text(name, value, max_length=len(value), error=MalformedTelemetry)


def _agent_id(payload: Mapping[str, Any]) -> str:
    value = _text(payload, "agent_id", MAX_ID_LENGTH)
    if not _AGENT_ID.fullmatch(value):
        raise MalformedTelemetry("agent_id", "may hold only letters, digits, '_', '-', '=' and inner dots")
    return value


def _task_id(payload: Mapping[str, Any]) -> str:
    # Some engines number their tasks; 42 and "42" name the same task.
    raw = payload.get("task_id")
    if isinstance(raw, int) and not isinstance(raw, bool):
        # Held to int64 as every number from outside is: written out, a
        # 400-digit number would be an id past the length cap of a text one.
        return str(guards.integer("task_id", raw, error=MalformedTelemetry))
    return _text(payload, "task_id", MAX_TASK_ID_LENGTH)


def parse_datetime(name: str, raw: Any) -> datetime:
    """An ISO 8601 date-time, naive or with an offset, as the engine wrote it."""
    if not isinstance(raw, str):
        raise MalformedTelemetry(name, f"expected an ISO 8601 date-time string, got {type(raw).__name__}")
    text = raw.strip()
    if not _DATETIME.fullmatch(text):
        raise MalformedTelemetry(name, f"{raw!r} is not an ISO 8601 date-time")
    try:
        return datetime.fromisoformat(text.upper())
    except ValueError as error:
        raise MalformedTelemetry(name, f"{raw!r} is not a valid date-time: {error}") from None


# How far ahead of this clock a run's time may read: an engine's clock
# drifts a little. A naive time is the engine's wall clock in a zone it does
# not name, which may be up to 14 hours ahead of UTC.
RUN_CLOCK_SKEW = timedelta(minutes=2)
_WIDEST_OFFSET = timedelta(hours=14)


def bounded_run_time(name: str, value: datetime, now: datetime) -> datetime:
    """A run's time within DESIGN §3's bounds: from 2000-01-01, and not in the future."""
    if value.utcoffset() is None:
        guards.instant(
            name, value.replace(tzinfo=UTC), now=now, future=RUN_CLOCK_SKEW + _WIDEST_OFFSET, error=MalformedTelemetry
        )
        return value
    guards.instant(name, value, now=now, future=RUN_CLOCK_SKEW, error=MalformedTelemetry)
    return value


def instant(moment: datetime) -> datetime:
    """A run time already held by `bounded_run_time`, as a UTC instant; one
    written without an offset is UTC already."""
    return moment.replace(tzinfo=UTC) if moment.utcoffset() is None else moment.astimezone(UTC)


def duration_ms(started: datetime, finished: datetime) -> float:
    """Milliseconds between two readings of the engine's clock.

    Both must carry an offset or both must lack one: a naive time and an aware
    one differ by an unknown zone, so their difference would be a guess.
    """
    if (started.utcoffset() is None) != (finished.utcoffset() is None):
        raise MalformedTelemetry(
            "finished_at", "started_at and finished_at must both have a UTC offset or both lack one"
        )
    elapsed = (finished - started).total_seconds() * 1000
    if elapsed < 0:
        raise MalformedTelemetry("finished_at", "is before started_at")
    return elapsed


def parse_task(raw: bytes | str, *, now: datetime | None = None) -> TaskRun:
    """Validate one telemetry.task message body; `now` is this clock unless given.

    Keys this version does not know are ignored: an engine that adds a field
    must not get every one of its runs terminated.
    """
    payload = _decode(raw)
    agent_id = _agent_id(payload)
    task_id = _task_id(payload)
    task_type = _text(payload, "task_type", MAX_ID_LENGTH)
    status = _text(payload, "status", MAX_ID_LENGTH)
    if status not in TASK_STATUSES:
        raise MalformedTelemetry("status", f"must be one of {', '.join(sorted(TASK_STATUSES))}, got {status!r}")
    if "started_at" not in payload:
        raise MalformedTelemetry("started_at", "is required")
    if "finished_at" not in payload:
        raise MalformedTelemetry("finished_at", "is required")
    clock = now or datetime.now(UTC)
    started = bounded_run_time("started_at", parse_datetime("started_at", payload["started_at"]), clock)
    finished = bounded_run_time("finished_at", parse_datetime("finished_at", payload["finished_at"]), clock)
    elapsed = duration_ms(started, finished)
    error = payload.get("error")
    if error is not None:
        if not isinstance(error, str):
            raise MalformedTelemetry("error", f"expected a string or null, got {type(error).__name__}")
        _carriable("error", error)
        # The run matters more than the tail of a stack trace: a long error
        # is cut, not a reason to lose the run.
        error = error[:MAX_ERROR_LENGTH] or None
    return TaskRun(
        agent_id=agent_id,
        task_id=task_id,
        task_type=task_type,
        status=status,
        started_at=instant(started),
        finished_at=instant(finished),
        duration_ms=elapsed,
        error=error,
    )


def parse_heartbeat(raw: bytes | str, *, now: datetime | None = None) -> Heartbeat:
    """Validate one telemetry.agent message body: {agent_id, state, at}; `now` is this clock unless given."""
    payload = _decode(raw)
    agent_id = _agent_id(payload)
    state = _text(payload, "state", MAX_STATE_LENGTH)
    if "at" not in payload:
        raise MalformedTelemetry("at", "is required")
    at = parse_datetime("at", payload["at"])
    guards.instant(
        "at",
        at if at.utcoffset() is not None else at.replace(tzinfo=UTC),
        now=now or datetime.now(UTC),
        error=MalformedTelemetry,
    )
    return Heartbeat(agent_id=agent_id, state=state, at=payload["at"].strip())


def heartbeat_value(beat: Heartbeat) -> bytes:
    """What the heartbeat bucket stores under the agent's key."""
    return json.dumps({"state": beat.state, "at": beat.at}).encode()


def read_heartbeat_value(raw: bytes | None, received_at: datetime | None) -> LiveState:
    """A bucket entry back as a state; an unreadable entry is `unknown`, never `silent`."""
    try:
        stored = json.loads(raw or b"")
        return LiveState(state=str(stored["state"]), at=str(stored.get("at", "")), received_at=received_at)
    except (ValueError, TypeError, KeyError):
        return LiveState(state=UNKNOWN, at="", received_at=received_at)


# The run list's agent filter offers the agents of the last month: one that
# stopped reporting longer ago is still found by typing its id into a link.
DEFAULT_FACET_DAYS = 30


def facet_days(requested: int | None) -> int:
    """The facets' window: unset means 30, outside 1..30 is refused."""
    days = DEFAULT_FACET_DAYS if requested is None else requested
    if not MIN_WINDOW_DAYS <= days <= MAX_WINDOW_DAYS:
        raise windows.InvalidWindow("days", f"must be between {MIN_WINDOW_DAYS} and {MAX_WINDOW_DAYS}, got {days}")
    return days


@dataclass(frozen=True, slots=True)
class AskedWindow:
    """The span insights and the run series are asked for: the last `days`
    days (7 unset, 1..30) or a range of up to 30 days. It becomes a span
    once the database's clock says when now is."""

    days: int | None = None
    start: datetime | None = None
    end: datetime | None = None

    def span(self, now: datetime) -> windows.Span:
        return windows.asked_span(
            now,
            days=self.days,
            start=self.start,
            end=self.end,
            default_days=DEFAULT_WINDOW_DAYS,
            min_days=MIN_WINDOW_DAYS,
            max_days=MAX_WINDOW_DAYS,
        )


def receiving(last_run_received: datetime | None, now: datetime, live: Mapping[str, LiveState]) -> bool:
    """Whether telemetry reaches Outrider at all.

    A live key in the heartbeat bucket is itself proof of a heartbeat within
    the last five minutes (the bucket's TTL), so either kind of message counts.
    Without this flag a broken pipe reads as a quiet fleet: "0 runs".
    """
    if live:
        return True
    return last_run_received is not None and now - last_run_received <= RECEIVING_WINDOW


@dataclass(frozen=True, slots=True)
class Price:
    """What a model costs per million input and per million output tokens."""

    input: float
    output: float


# Where a price table came from, as the run series names it beside its costs.
PRICES_DEFAULT = "default"
PRICES_CONFIGURED = "configured"
PRICES_NONE = "none"


def price_source(raw: Mapping[str, Mapping[str, float]], defaults: Mapping[str, Mapping[str, float]]) -> str:
    """Whether the settings' table is the built-in estimate, the operator's own, or empty."""
    if not raw:
        return PRICES_NONE
    return PRICES_DEFAULT if _plain(raw) == _plain(defaults) else PRICES_CONFIGURED


def _plain(table: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
    return {model: dict(entry) for model, entry in table.items()}


def price_table(raw: Mapping[str, Mapping[str, float]]) -> dict[str, Price]:
    """The settings' {model or glob: {"input": n, "output": n}} as prices."""
    return {pattern: Price(float(entry["input"]), float(entry["output"])) for pattern, entry in raw.items()}


def price_for(model: str, prices: Mapping[str, Price]) -> Price | None:
    """The model's own entry, else the longest glob that matches it.

    The longest pattern is the most specific one: "claude-opus-*" must win
    over "claude-*" whatever order the operator wrote them in.
    """
    if not model:
        return None
    if model in prices:
        return prices[model]
    matching = [pattern for pattern in prices if fnmatchcase(model, pattern)]
    return prices[max(matching, key=len)] if matching else None


def estimated_cost(price: Price, input_tokens: int, output_tokens: int) -> float:
    return (input_tokens * price.input + output_tokens * price.output) / 1_000_000


@dataclass(frozen=True, slots=True)
class UsageReport:
    rows: list[ModelUsage]
    # Models called in the window that a configured table does not price.
    unpriced: list[str] = field(default_factory=list)


def model_usage(stats: Iterable[ModelStats], prices: Mapping[str, Price]) -> UsageReport:
    """Each (agent, model) row priced when the table can; no table prices nothing."""
    rows: list[ModelUsage] = []
    unpriced: set[str] = set()
    for stat in stats:
        price = price_for(stat.model, prices)
        if price is None and prices:
            unpriced.add(stat.model)
        cost = estimated_cost(price, stat.input_tokens, stat.output_tokens) if price is not None else None
        rows.append(ModelUsage(stat, cost))
    return UsageReport(rows, sorted(unpriced))


@dataclass(frozen=True, slots=True)
class _AgentUsage:
    calls: int
    input_tokens: int
    output_tokens: int
    cost: float | None


def _agent_usage(rows: Iterable[ModelUsage]) -> dict[str, _AgentUsage]:
    totals: dict[str, _AgentUsage] = {}
    for row in rows:
        stat = row.stats
        before = totals.get(stat.agent_id, _AgentUsage(0, 0, 0, 0.0))
        # One unpriced model leaves the agent's total unknown: a sum that
        # silently skips a model would understate what the agent spends.
        cost = None if before.cost is None or row.estimated_cost is None else before.cost + row.estimated_cost
        totals[stat.agent_id] = _AgentUsage(
            before.calls + stat.calls,
            before.input_tokens + stat.input_tokens,
            before.output_tokens + stat.output_tokens,
            cost,
        )
    return totals


def assemble(
    stats: Iterable[RunStats],
    registry: Iterable[RegistryAgent] | None,
    live: Mapping[str, LiveState] | None,
    usage: Iterable[ModelUsage] = (),
) -> list[AgentInsight]:
    """One row per agent that ran, called a model, reported, or is expected to.

    Registry agents with no runs are listed with zeros and their state, so a
    silent agent is seen instead of missing. Retired agents are expected to
    be silent and are left out unless they still report. `registry` or `live`
    is None when that source could not be read. An agent's cost is set only
    when every model it called is priced.
    """
    by_agent = {s.agent_id: s for s in stats}
    known = {a.id: a for a in registry or ()}
    beats = live or {}
    calls = _agent_usage(usage)
    ids = set(by_agent) | set(beats) | set(calls) | {a.id for a in known.values() if a.status != "retired"}
    rows = []
    for agent_id in sorted(ids):
        stat = by_agent.get(agent_id)
        beat = beats.get(agent_id)
        used = calls.get(agent_id)
        if live is None:
            state = UNKNOWN
        elif beat is None:
            state = SILENT
        else:
            state = beat.state
        rows.append(
            AgentInsight(
                agent_id=agent_id,
                runs=stat.runs if stat else 0,
                failures=stat.failures if stat else 0,
                avg_ms=stat.avg_ms if stat else 0.0,
                p95_ms=stat.p95_ms if stat else 0.0,
                last_run_at=stat.last_run_at if stat else None,
                state=state,
                last_heartbeat_at=beat.received_at if beat else None,
                registered=agent_id in known,
                model_calls=used.calls if used else 0,
                input_tokens=used.input_tokens if used else 0,
                output_tokens=used.output_tokens if used else 0,
                estimated_cost=used.cost if used else None,
            )
        )
    return rows


# Bucket widths a run series may use, narrowest first. The narrowest that
# keeps a window within SERIES_MAX_BUCKETS wins: a day in hours, a week in
# quarter days, a month in days. Finer buckets would draw bars too thin to
# read; coarser ones would hide the hour a fleet went quiet.
SERIES_BUCKET_SECONDS = (3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400)
SERIES_MAX_BUCKETS = 48


@dataclass(frozen=True, slots=True)
class SeriesWindow:
    start: datetime
    end: datetime
    bucket_seconds: int
    buckets: int
    # The days asked for; None for a range of its own.
    days: int | None = None


@dataclass(frozen=True, slots=True)
class SeriesPoint:
    start: datetime
    runs: int
    failures: int
    # None when no run started in the bucket: an empty bucket has no latency.
    p50_ms: float | None = None
    p95_ms: float | None = None


@dataclass(frozen=True, slots=True)
class BucketRuns:
    """One agent's runs in one bucket, as the store aggregates them."""

    agent_id: str
    bucket: int
    runs: int
    failures: int
    p50_ms: float
    p95_ms: float


@dataclass(frozen=True, slots=True)
class BucketCalls:
    """One agent's calls to one model in one bucket, as the store aggregates them."""

    agent_id: str
    model: str
    bucket: int
    calls: int
    # Calls that reported usage: the tokens are theirs alone.
    reported_calls: int
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True, slots=True)
class UsagePoint:
    start: datetime
    calls: int = 0
    reported_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    # None when a model called in the bucket has no price.
    estimated_cost: float | None = 0.0


@dataclass(frozen=True, slots=True)
class UsageSeries:
    by_agent: dict[str, list[UsagePoint]]
    by_model: dict[str, list[UsagePoint]]


@dataclass(frozen=True, slots=True)
class SeriesReport:
    window: SeriesWindow
    runs: dict[str, list[SeriesPoint]]
    usage: UsageSeries


def series_window(span: windows.Span) -> SeriesWindow:
    """Equal, epoch-aligned buckets covering the span, the narrowest width
    that draws it in at most SERIES_MAX_BUCKETS."""
    width = windows.bucket_width(span, SERIES_BUCKET_SECONDS, SERIES_MAX_BUCKETS)
    drawn = windows.buckets(span, width)
    return SeriesWindow(start=drawn.start, end=drawn.end, bucket_seconds=width, buckets=drawn.count, days=span.days)


def ended_buckets(window: SeriesWindow, now: datetime) -> list[datetime]:
    """The starts of the window's buckets that have ended by `now`: a bucket
    holding now is still filling, and one after it has not begun."""
    width = timedelta(seconds=window.bucket_seconds)
    starts = (window.start + i * width for i in range(window.buckets))
    return [start for start in starts if start + width <= now]


def contiguous_spans(starts: Iterable[datetime], bucket_seconds: int) -> list[tuple[datetime, datetime]]:
    """Buckets grouped into runs of neighbours, each as [first start, last
    end): one range read each, so two far-apart buckets do not read the
    month between them."""
    width = timedelta(seconds=bucket_seconds)
    spans: list[tuple[datetime, datetime]] = []
    for start in sorted(set(starts)):
        if spans and spans[-1][1] == start:
            spans[-1] = (spans[-1][0], start + width)
        else:
            spans.append((start, start + width))
    return spans


def buckets_holding(instants: Iterable[datetime]) -> tuple[list[int], list[datetime]]:
    """Every series bucket, of every width, that holds one of `instants`, as
    parallel lists of widths and starts: the buckets a write into those
    instants makes stale."""
    epochs = {math.floor(instant.timestamp()) for instant in instants}
    held = sorted({(w, epoch // w * w) for w in SERIES_BUCKET_SECONDS for epoch in epochs})
    return [w for w, _ in held], [datetime.fromtimestamp(start, tz=UTC) for _, start in held]


def dense_series(window: SeriesWindow, counts: Iterable[BucketRuns]) -> dict[str, list[SeriesPoint]]:
    """Per agent, every bucket of the window in order, from the sparse buckets
    that had runs; buckets outside the window are ignored."""
    by_agent: dict[str, dict[int, BucketRuns]] = {}
    for count in counts:
        if 0 <= count.bucket < window.buckets:
            by_agent.setdefault(count.agent_id, {})[count.bucket] = count
    width = timedelta(seconds=window.bucket_seconds)
    series: dict[str, list[SeriesPoint]] = {}
    for agent_id, buckets in sorted(by_agent.items()):
        points = []
        for i in range(window.buckets):
            start = window.start + i * width
            held = buckets.get(i)
            points.append(
                SeriesPoint(start, held.runs, held.failures, held.p50_ms, held.p95_ms)
                if held
                else SeriesPoint(start, 0, 0)
            )
        series[agent_id] = points
    return series


def _add_calls(point: UsagePoint, calls: BucketCalls, cost: float | None) -> UsagePoint:
    return UsagePoint(
        start=point.start,
        calls=point.calls + calls.calls,
        reported_calls=point.reported_calls + calls.reported_calls,
        input_tokens=point.input_tokens + calls.input_tokens,
        output_tokens=point.output_tokens + calls.output_tokens,
        # One unpriced model makes the bucket's sum unknown: a total that
        # leaves it out would understate the spend.
        estimated_cost=None if point.estimated_cost is None or cost is None else point.estimated_cost + cost,
    )


def usage_series(window: SeriesWindow, counts: Iterable[BucketCalls], prices: Mapping[str, Price]) -> UsageSeries:
    """Model calls, tokens and estimated cost per bucket, folded per agent and per model.

    A bucket without calls cost nothing, so its cost is 0; a model the table
    does not price has no cost in any bucket, and neither has an agent's
    bucket that called it.
    """
    width = timedelta(seconds=window.bucket_seconds)

    def empty(priced: bool) -> list[UsagePoint]:
        return [
            UsagePoint(window.start + i * width, estimated_cost=0.0 if priced else None) for i in range(window.buckets)
        ]

    by_agent: dict[str, list[UsagePoint]] = {}
    by_model: dict[str, list[UsagePoint]] = {}
    for count in counts:
        if not 0 <= count.bucket < window.buckets:
            continue
        price = price_for(count.model, prices)
        cost = estimated_cost(price, count.input_tokens, count.output_tokens) if price is not None else None
        for series, name, priced in (
            (by_agent, count.agent_id, True),
            (by_model, count.model, price is not None),
        ):
            points = series.setdefault(name, empty(priced))
            points[count.bucket] = _add_calls(points[count.bucket], count, cost)
    return UsageSeries(dict(sorted(by_agent.items())), dict(sorted(by_model.items())))


def fold_outcomes(items: Iterable[tuple[str, str, int]]) -> list[OutcomeCount]:
    """Decision counts by type x outcome; decision memory splits them by model too."""
    totals: dict[tuple[str, str], int] = {}
    for decision_type, outcome, count in items:
        key = (decision_type, outcome or "pending")
        totals[key] = totals.get(key, 0) + count
    return [OutcomeCount(t, o, n) for (t, o), n in sorted(totals.items())]


# ─── The run list ──────────────────────────────────────────────────────────

# An OTLP run's task id is its span's identity, "<trace id>-<span id>" in hex
# (otlp.rules.map_span): the trace it names holds the run's model calls.
_OTLP_TASK_ID = re.compile(r"([0-9a-f]{32})-[0-9a-f]{16}")
# A detail lists at most this many model calls; a run that made more is a
# loop gone wrong, and its first calls say what it was doing.
MAX_RUN_MODEL_CALLS = 500
MATCHED_BY_TRACE = "trace"
MATCHED_BY_WINDOW = "window"


@dataclass(frozen=True, slots=True)
class RunKey:
    """Where a page of the run list ended: runs sort newest first by their own
    start, ties broken by agent and task so the order is total."""

    started_at: datetime
    agent_id: str
    task_id: str


@dataclass(frozen=True, slots=True)
class SlowRunKey:
    """Where a page of the slowest runs ended: longest first, ties broken by
    agent and task so the order is total."""

    duration_ms: float
    agent_id: str
    task_id: str


# The run list's orders: newest start first (the default), or longest first,
# where an operator looks for what is slow.
NEWEST, SLOWEST = "newest", "slowest"
RUN_ORDERS = (NEWEST, SLOWEST)


@dataclass(frozen=True, slots=True)
class RunListing:
    """One page of the run list, as asked for; None filters nothing."""

    agent_id: str | None
    status: str | None
    task_type: str | None
    started_from: datetime | None
    started_to: datetime | None
    after: RunKey | SlowRunKey | None
    limit: int
    order: str = NEWEST


@dataclass(frozen=True, slots=True)
class RunDetail:
    run: TaskRun
    # Oldest first, at most MAX_RUN_MODEL_CALLS.
    model_calls: list[ModelCall]
    matched_by: str
    truncated: bool


def run_key(parts: list[str]) -> RunKey:
    """A run-list cursor's key (see services.common.paging)."""
    started, agent_id, task_id = parts
    return RunKey(started_at=parse_cursor_instant(started), agent_id=agent_id, task_id=task_id)


def slow_run_key(parts: list[str]) -> SlowRunKey:
    """A cursor of the slowest runs: tagged, so one from the newest-first
    order is refused rather than read as a duration."""
    tag, duration, agent_id, task_id = parts
    if tag != SLOWEST:
        raise ValueError("not a cursor of the slowest runs")
    duration_ms = float(duration)
    if not math.isfinite(duration_ms):
        raise ValueError("a run's duration is a finite number")
    return SlowRunKey(duration_ms=duration_ms, agent_id=agent_id, task_id=task_id)


def run_order(word: str) -> str:
    """The run list's order; empty means newest first."""
    if not word:
        return NEWEST
    if word not in RUN_ORDERS:
        raise FieldError("order", f"must be one of {', '.join(RUN_ORDERS)}, got {word!r}")
    return word


def run_page_key(order: str, run: TaskRun) -> tuple[object, ...]:
    """The cursor key of a page's last run, in the listing's order."""
    if order == SLOWEST:
        return (SLOWEST, run.duration_ms, run.agent_id, run.task_id)
    return (run.started_at, run.agent_id, run.task_id)


def run_not_found(agent_id: str, task_id: str) -> NotFound:
    """No such run: never reported, or past retention."""
    return NotFound(
        f"agent {agent_id} has no run {task_id}",
        code="RUN_NOT_FOUND",
        details={"agent_id": agent_id, "task_id": task_id},
    )


def run_status_filter(word: str) -> str | None:
    """A listing's status filter: a task status, or none."""
    if not word:
        return None
    if word not in TASK_STATUSES:
        raise FieldError("status", f"must be one of {', '.join(sorted(TASK_STATUSES))}, got {word!r}")
    return word


def run_range(started_from: datetime | None, started_to: datetime | None) -> None:
    """A listing's time filter: from inclusive, to exclusive; an empty span is a mistake."""
    if started_from is not None and started_to is not None and started_to <= started_from:
        raise FieldError("started_to", "must be later than started_from")


def run_trace(task_id: str) -> str | None:
    """The OTLP trace a run is a span of, when its task id names one.

    An engine's own run (telemetry.task) carries no trace, so its model
    calls are found by time instead: the agent's calls that started while
    the run did (see `calls_window`).
    """
    found = _OTLP_TASK_ID.fullmatch(task_id)
    return found.group(1) if found else None


def calls_window(run: TaskRun) -> tuple[datetime, datetime]:
    """The instants, both inclusive, a call of an untraced run started within."""
    return run.started_at, run.finished_at


def run_model_calls(run: TaskRun, found: list[ModelCall], matched_by: str) -> RunDetail:
    """A run with the calls found for it, fetched as MAX_RUN_MODEL_CALLS + 1."""
    return RunDetail(
        run=run,
        model_calls=found[:MAX_RUN_MODEL_CALLS],
        matched_by=matched_by,
        truncated=len(found) > MAX_RUN_MODEL_CALLS,
    )
