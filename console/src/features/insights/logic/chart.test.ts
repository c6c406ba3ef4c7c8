import { describe, expect, it } from "vitest";
import { barLayout, niceCeiling, outcomeGrid, outcomeListPath, seriesTotals } from "./chart";

const point = (runs: number, failures: number) => ({ start: "2026-09-29T00:00:00+00:00", runs, failures, p50_ms: null, p95_ms: null });

describe("niceCeiling", () => {
  it("rounds an axis up to 1, 2 or 5 times a power of ten", () => {
    expect([0, 1, 3, 7, 12, 40, 51, 999].map(niceCeiling)).toEqual([1, 1, 5, 10, 20, 50, 100, 1000]);
  });
});

describe("barLayout", () => {
  it("spreads bars across the width and scales them to the maximum", () => {
    const bars = barLayout([point(10, 2), point(0, 0), point(5, 5)], 300, 100, 10);
    expect(bars).toHaveLength(3);
    expect(bars[0]).toMatchObject({ x: 12.5, width: 75, runsY: 0, runsHeight: 100, failuresHeight: 20, failuresY: 80 });
    expect(bars[1]?.runsHeight).toBe(0);
    expect(bars[2]).toMatchObject({ runsHeight: 50, failuresHeight: 50 });
  });
  it("never draws more failures than runs, and nothing for no points", () => {
    expect(barLayout([point(2, 5)], 10, 10, 2)[0]?.failuresHeight).toBe(10);
    expect(barLayout([], 100, 100, 1)).toEqual([]);
  });
  it("totals a series", () => {
    expect(seriesTotals([point(3, 1), point(7, 0)])).toEqual({ runs: 10, failures: 1, peak: 7 });
  });
});

describe("outcomeGrid", () => {
  it("folds counts by type and outcome", () => {
    const grid = outcomeGrid([
      { decision_type: "stall_response", outcome: "success", count: 4 },
      { decision_type: "assignment_failure", outcome: "pending", count: 2 },
      { decision_type: "stall_response", outcome: "failure", count: 1 },
    ]);
    expect(grid.rows).toEqual([
      { type: "assignment_failure", cells: { pending: 2 }, total: 2 },
      { type: "stall_response", cells: { success: 4, failure: 1 }, total: 5 },
    ]);
  });
});

describe("outcomeListPath", () => {
  it("opens one type's decisions with one outcome, decided within the span counted", () => {
    const path = new URL(outcomeListPath("stall_response", "pending", { from: "2026-09-22T10:00:00Z", to: "" }), "http://console");
    expect(path.pathname).toBe("/decisions");
    expect(path.searchParams.get("decision_type")).toBe("stall_response");
    expect(path.searchParams.get("outcome")).toBe("pending");
    expect(path.searchParams.get("from")).toBe("2026-09-22T10:00:00Z");
    expect(path.searchParams.has("to")).toBe(false);
    const range = new URL(outcomeListPath("stall_response", "success", { from: "A", to: "B" }), "http://console");
    expect([range.searchParams.get("from"), range.searchParams.get("to")]).toEqual(["A", "B"]);
  });
});
