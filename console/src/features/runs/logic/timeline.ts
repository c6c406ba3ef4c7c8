import type { ModelCall, TaskRun } from "../../../api/resources";

/** One bar of a span timeline, in the chart's own units. */
export type SpanBar = { x: number; width: number; failed: boolean };

export type Timeline = {
  /** The first instant drawn, ms since the epoch, and how many ms the chart spans. */
  startMs: number;
  spanMs: number;
  run: SpanBar;
  calls: SpanBar[];
};

// A call of a few microseconds still shows as a mark.
const MIN_WIDTH = 2;

function bar(startMs: number, durationMs: number, origin: number, spanMs: number, width: number, failed: boolean): SpanBar {
  const x = ((startMs - origin) / spanMs) * width;
  return { x, width: Math.max(MIN_WIDTH, Math.min(width - x, (durationMs / spanMs) * width)), failed };
}

/**
 * The run and its model calls on one time axis `width` wide. The axis covers
 * the run and every call: a call matched by trace may start before the run
 * span does or end after it, and is drawn where it was, not clipped.
 */
export function timeline(run: Pick<TaskRun, "started_at" | "finished_at" | "duration_ms" | "status">, calls: ModelCall[], width: number): Timeline {
  const runStart = Date.parse(run.started_at ?? "");
  const runEnd = run.finished_at ? Date.parse(run.finished_at) : runStart + run.duration_ms;
  const starts = calls.map((call) => Date.parse(call.started_at ?? ""));
  const origin = Math.min(runStart, ...starts);
  const end = Math.max(runEnd, ...calls.map((call, index) => (starts[index] ?? origin) + call.duration_ms));
  // A run of zero length still gets an axis to draw on.
  const spanMs = Math.max(end - origin, 1);
  return {
    startMs: origin,
    spanMs,
    run: bar(runStart, runEnd - runStart, origin, spanMs, width, run.status === "failed"),
    calls: calls.map((call, index) =>
      bar(starts[index] ?? origin, call.duration_ms, origin, spanMs, width, call.status === "failed"),
    ),
  };
}
