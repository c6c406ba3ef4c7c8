import { describe, expect, it } from "vitest";
import type { RolloutEvent } from "../../../api/resources";
import {
  allowedActions,
  armPosterior,
  changeInWords,
  filtersFromSearch,
  harmPath,
  harmSeries,
  rolloutRefresh,
  stepTimeline,
  WATCHED_ROLLOUT_MS,
} from "./rollouts";

const event = (over: Partial<RolloutEvent>): RolloutEvent => ({
  at: "2026-01-01T00:00:00Z",
  by: "rollout-guard",
  event: "observed",
  p_harm: null,
  percent: 5,
  reason: "",
  ...over,
});

describe("changeInWords", () => {
  it("names the model before and after", () => {
    expect(changeInWords({ model: "claude-opus-5-5" }, { model: null })).toBe("model the engine default → claude-opus-5-5");
  });
  it("names autonomy as on and off", () => {
    expect(changeInWords({ autonomous: true }, { autonomous: false })).toBe("autonomy off → on");
  });
  it("names a skill's switch and each threshold", () => {
    expect(changeInWords({ skill_id: "stall", enabled: false, thresholds: { stallMinutes: 12 } }, { thresholds: { stallMinutes: 15 } })).toBe(
      "disable stall, stall stallMinutes 15 → 12",
    );
  });
});

describe("armPosterior", () => {
  it("is Beta(1 + successes, 1 + failures) with the unknowns left out", () => {
    const p = armPosterior({ judged: 10, successes: 8, failures: 2, unknown: 40, pending: 3, mean: 0, low: 0, high: 0 });
    expect([p.alpha, p.beta]).toEqual([9, 3]);
    expect(p.mean).toBeCloseTo(0.75);
    expect(p.low).toBeLessThan(p.mean);
    expect(p.high).toBeGreaterThan(p.mean);
  });
});

describe("history", () => {
  const history = [
    event({ event: "started", by: "ops@example.com", at: "2026-01-01T00:00:00Z" }),
    event({ p_harm: 0.4, at: "2026-01-01T02:00:00Z" }),
    event({ p_harm: 0.1, at: "2026-01-01T01:00:00Z" }),
    event({ event: "halted", p_harm: 0.97, percent: 0, at: "2026-01-01T03:00:00Z" }),
  ];
  it("keeps state changes on the timeline and leaves the quiet looks out", () => {
    expect(stepTimeline(history).map((e) => e.event)).toEqual(["started", "halted"]);
  });
  it("orders p_harm by time and draws it from left to right, 1 at the top", () => {
    const series = harmSeries(history);
    expect(series.map((p) => p.pHarm)).toEqual([0.1, 0.4, 0.97]);
    expect(harmPath(series, 100, 50)).toBe("M0.0,45.0 L50.0,30.0 L100.0,1.5");
  });
});

describe("filters and actions", () => {
  it("drops a state the registry does not know", () => {
    expect(filtersFromSearch(new URLSearchParams("agent=A&state=sideways"))).toEqual({ agent: "A", state: "" });
  });
  it("offers only what the state allows", () => {
    expect(allowedActions("running")).toEqual(["pause", "abort"]);
    expect(allowedActions("paused")).toEqual(["resume", "abort"]);
    expect(allowedActions("completed")).toEqual([]);
  });
});

describe("rolloutRefresh", () => {
  it("watches a rollout while it can still move and stops once it has ended", () => {
    expect(rolloutRefresh("running")).toBe(WATCHED_ROLLOUT_MS);
    expect(rolloutRefresh("paused")).toBe(WATCHED_ROLLOUT_MS);
    expect((["halted", "aborted", "completed"] as const).map((state) => rolloutRefresh(state))).toEqual([false, false, false]);
    expect(rolloutRefresh(undefined)).toBe(false);
  });
});
