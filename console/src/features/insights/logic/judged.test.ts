import { describe, expect, it } from "vitest";
import {
  bandPath,
  bucketListPath,
  judgedPoints,
  judgedRuns,
  judgedTotals,
  ratePath,
  timeTickIndices,
  unjudgedBars,
  wilsonInterval,
} from "./judged";

const bucket = (successes: number, failures: number, unknown = 0, pending = 0, hour = 0) => ({
  start: new Date(Date.UTC(2026, 10, 20, hour)).toISOString(),
  successes,
  failures,
  unknown,
  pending,
});

describe("wilsonInterval", () => {
  // Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I, method 3.
  it.each([
    [81, 263, 0.2553, 0.3662],
    [15, 148, 0.0624, 0.1605],
    [0, 20, 0, 0.1611],
    [1, 29, 0.0061, 0.1718],
  ])("gives the published interval for %i of %i", (successes, trials, low, high) => {
    const interval = wilsonInterval(successes, trials);
    expect(interval?.low).toBeCloseTo(low, 4);
    expect(interval?.high).toBeCloseTo(high, 4);
  });

  it("has no interval without trials, and stays within [0, 1]", () => {
    expect(wilsonInterval(0, 0)).toBeNull();
    expect(wilsonInterval(5, 5)).toMatchObject({ high: 1 });
  });

  it("covers the true rate about 95 % of the time when simulated", () => {
    // A seeded generator (mulberry32) so the run is the same every time.
    let seed = 20261120;
    const random = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    for (const [truth, trials] of [
      [0.3, 40],
      [0.85, 25],
    ] as const) {
      const runs = 4000;
      let covered = 0;
      for (let r = 0; r < runs; r++) {
        let successes = 0;
        for (let t = 0; t < trials; t++) if (random() < truth) successes++;
        const interval = wilsonInterval(successes, trials);
        if (interval && interval.low <= truth && truth <= interval.high) covered++;
      }
      expect(covered / runs).toBeGreaterThan(0.92);
      expect(covered / runs).toBeLessThan(0.98);
    }
  });
});

describe("judgedPoints", () => {
  it("rates only judged decisions: unknown and pending are never failures", () => {
    const [point] = judgedPoints([bucket(3, 1, 5, 40)]);
    expect(point).toMatchObject({ judged: 4, rate: 0.75, unknown: 5, pending: 40 });
    expect(point?.low).toBeCloseTo(0.3006, 3);
    expect(point?.high).toBeCloseTo(0.9544, 3);
  });
  it("has no rate for a bucket with nothing judged, however many wait", () => {
    expect(judgedPoints([bucket(0, 0, 2, 9)])[0]).toMatchObject({ rate: null, low: null, high: null, pending: 9 });
  });
  it("totals the window", () => {
    expect(judgedTotals(judgedPoints([bucket(3, 1, 0, 2), bucket(0, 0, 1, 1), bucket(1, 3)]))).toEqual({
      successes: 4,
      judged: 8,
      unknown: 1,
      pending: 3,
      rate: 0.5,
    });
  });
});

describe("the line and its band", () => {
  const points = judgedPoints([bucket(1, 0), bucket(1, 1), bucket(0, 0, 0, 3), bucket(0, 2), bucket(0, 0)]);
  it("breaks where nothing was judged", () => {
    expect(judgedRuns(points)).toEqual([[0, 1], [3]]);
  });
  it("draws rates at bucket centres, 100 % at the top", () => {
    // Five buckets across 500: centres at 50, 150, …; rates 1 and 0.5 over a height of 100.
    expect(ratePath(points, 500, 100)).toBe("M50.0,0.0L150.0,50.0M325.0,100.0L375.0,100.0");
  });
  it("closes one band polygon per run, the top above the bottom", () => {
    const band = bandPath(points, 500, 100);
    expect(band.match(/Z/g)).toHaveLength(2);
    expect(band.startsWith("M50.0,0.0L150.0,")).toBe(true);
  });
});

describe("timeTickIndices", () => {
  it("keeps every bucket when few, else spaces at most the asked number with both ends", () => {
    expect(timeTickIndices(3, 6)).toEqual([0, 1, 2]);
    const ticks = timeTickIndices(25, 6);
    expect(ticks[0]).toBe(0);
    expect(ticks[ticks.length - 1]).toBe(24);
    expect(ticks.length).toBeLessThanOrEqual(6);
    expect(timeTickIndices(0, 6)).toEqual([]);
  });
});

describe("unjudgedBars", () => {
  it("stacks unknown above pending, scaled to the busiest bucket", () => {
    const { peak, bars } = unjudgedBars(judgedPoints([bucket(1, 0, 1, 3), bucket(0, 0, 0, 2)]), 200, 40);
    expect(peak).toBe(4);
    expect(bars[0]).toMatchObject({ pendingHeight: 30, pendingY: 10, unknownHeight: 10, unknownY: 0 });
    expect(bars[1]).toMatchObject({ pendingHeight: 20, unknownHeight: 0 });
  });
});

describe("bucketListPath", () => {
  it("lists one type's decisions from a bucket's start to the next one's", () => {
    const path = bucketListPath("stall_response", "2026-11-20T06:00:00+00:00", 6 * 3600);
    const params = new URLSearchParams(path.split("?")[1]);
    expect(path.startsWith("/decisions?")).toBe(true);
    expect(params.get("decision_type")).toBe("stall_response");
    expect(new Date(params.get("from") ?? "").toISOString()).toBe("2026-11-20T06:00:00.000Z");
    expect(new Date(params.get("to") ?? "").toISOString()).toBe("2026-11-20T12:00:00.000Z");
  });
});
