import { describe, expect, it } from "vitest";
import type { ModelCall } from "../../../api/resources";
import { timeline } from "./timeline";

const RUN = { started_at: "2026-09-29T10:00:00Z", finished_at: "2026-09-29T10:00:01Z", duration_ms: 1000, status: "succeeded" as const };

function call(startedAt: string, durationMs: number, status: ModelCall["status"] = "succeeded"): ModelCall {
  return {
    trace_id: "t",
    span_id: startedAt,
    operation: "chat",
    provider: null,
    model: null,
    input_tokens: null,
    output_tokens: null,
    status,
    error_type: null,
    started_at: startedAt,
    duration_ms: durationMs,
  };
}

describe("span timeline", () => {
  it("places each call by its start and length on the run's axis", () => {
    const drawn = timeline(RUN, [call("2026-09-29T10:00:00.250Z", 500), call("2026-09-29T10:00:00.900Z", 100, "failed")], 1000);
    expect(drawn.run).toEqual({ x: 0, width: 1000, failed: false });
    expect(drawn.calls).toEqual([
      { x: 250, width: 500, failed: false },
      { x: 900, width: 100, failed: true },
    ]);
  });
  it("widens the axis for a call outside the run rather than clip it", () => {
    const drawn = timeline(RUN, [call("2026-09-29T09:59:59Z", 500)], 400);
    expect(drawn.spanMs).toBe(2000);
    expect(drawn.calls[0]).toEqual({ x: 0, width: 100, failed: false });
    expect(drawn.run).toEqual({ x: 200, width: 200, failed: false });
  });
  it("keeps an instant call visible and a run of no length drawable", () => {
    const instant = { ...RUN, finished_at: RUN.started_at, duration_ms: 0 };
    const drawn = timeline(instant, [call(RUN.started_at, 0)], 600);
    expect(drawn.spanMs).toBe(1);
    expect(drawn.calls[0]?.width).toBe(2);
    expect(drawn.run.width).toBe(2);
  });
});
