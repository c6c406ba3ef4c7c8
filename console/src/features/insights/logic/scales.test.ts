import { describe, expect, it } from "vitest";
import type { UsagePoint } from "../../../api/resources";
import {
  OTHERS,
  bucketAt,
  formatTokens,
  formatUsd,
  latency,
  latencyByAgent,
  linePath,
  niceTicks,
  runsAndFailures,
  stackSegments,
  stackedMax,
  tickIndices,
  usageMeasure,
  valuesMax,
} from "./scales";

const at = (i: number) => `2026-09-29T${String(i).padStart(2, "0")}:00:00+00:00`;
const runPoint = (i: number, runs: number, failures: number, p50: number | null = null, p95: number | null = null) => ({
  start: at(i),
  runs,
  failures,
  p50_ms: p50,
  p95_ms: p95,
});
const usage = (i: number, input: number, cost: number | null): UsagePoint => ({
  start: at(i),
  calls: 1,
  reported_calls: 1,
  input_tokens: input,
  output_tokens: 0,
  estimated_cost: cost,
});

describe("niceTicks", () => {
  it("steps in round numbers from zero to at least the maximum", () => {
    expect(niceTicks(7)).toEqual([0, 2, 4, 6, 8]);
    expect(niceTicks(100)).toEqual([0, 50, 100]);
    expect(niceTicks(880)).toEqual([0, 500, 1000]);
    expect(niceTicks(0.0061)).toEqual([0, 0.002, 0.004, 0.006, 0.008]);
  });
  it("steps by whole numbers for counts", () => {
    expect(niceTicks(1, 4, true)).toEqual([0, 1]);
    expect(niceTicks(3, 4, true)).toEqual([0, 1, 2, 3]);
    expect(niceTicks(0, 4, true)).toEqual([0, 1]);
    expect(niceTicks(1)).toEqual([0, 0.5, 1]);
  });
  it("draws one step for an empty chart", () => {
    expect(niceTicks(0)).toEqual([0, 0.5]);
  });
});

describe("tickIndices", () => {
  it("labels at most the asked number of buckets, evenly", () => {
    expect(tickIndices(25, 6)).toEqual([0, 5, 10, 15, 20]);
    expect(tickIndices(3, 6)).toEqual([0, 1, 2]);
    expect(tickIndices(0, 6)).toEqual([]);
  });
});

describe("stacks", () => {
  const series = [
    { name: "succeeded", values: [8, 0, null] },
    { name: "failed", values: [2, 3, 4] },
  ];
  it("take the largest stack of known values as their top", () => {
    expect(stackedMax(series)).toBe(10);
    expect(valuesMax(series)).toBe(8);
  });
  it("build upwards from the foot and leave unknown and zero values out", () => {
    expect(stackSegments(series, 0, 10, 100)).toEqual([
      { series: 0, y: 20, height: 80 },
      { series: 1, y: 0, height: 20 },
    ]);
    expect(stackSegments(series, 2, 10, 100)).toEqual([{ series: 1, y: 60, height: 40 }]);
  });
});

describe("linePath", () => {
  it("breaks where a value is unknown rather than drawing through it", () => {
    expect(linePath([1, 2, null, 4], (i) => i * 10, (v) => 100 - v)).toBe("M0 99 L10 98 M30 96");
  });
});

describe("series from the run series", () => {
  const agentA = { agent_id: "A", points: [runPoint(0, 5, 1, 100, 300), runPoint(1, 0, 0)] };
  const agents = [agentA, { agent_id: "B", points: [runPoint(0, 2, 2), runPoint(1, 3, 0)] }];
  it("splits runs into succeeded and failed, summed over agents", () => {
    expect(runsAndFailures(agents)).toEqual([
      { name: "succeeded", values: [4, 3] },
      { name: "failed", values: [3, 0] },
    ]);
  });
  it("draws the busiest agents' p95 when no one agent is chosen", () => {
    expect(latencyByAgent(agents, 1)).toEqual([{ name: "A p95", values: [300, null] }]);
    const busierB = [agentA, { agent_id: "B", points: [runPoint(0, 9, 0), runPoint(1, 3, 0)] }];
    expect(latencyByAgent(busierB, 5).map((s) => s.name)).toEqual(["B p95", "A p95"]);
  });
  it("keeps an agent's latency unknown where it had no run", () => {
    expect(latency(agentA)).toEqual([
      { name: "p50", values: [100, null] },
      { name: "p95", values: [300, null] },
    ]);
  });
});

describe("usageMeasure", () => {
  const series = [
    { name: "small", points: [usage(0, 1, 0.1), usage(1, 1, 0)] },
    { name: "big", points: [usage(0, 100, 1), usage(1, 50, 1)] },
    { name: "unpriced", points: [usage(0, 5, null), usage(1, 0, null)] },
  ];
  it("ranks the series by total, largest first", () => {
    expect(usageMeasure(series, (p) => p.input_tokens, 3).map((s) => s.name)).toEqual(["big", "unpriced", "small"]);
  });
  it("folds the rest into one, unknown where any part is unknown", () => {
    const folded = usageMeasure(series, (p) => p.estimated_cost, 2);
    expect(folded.map((s) => s.name)).toEqual(["big", OTHERS]);
    expect(folded[1]?.values).toEqual([null, null]);
    const tokens = usageMeasure(series, (p) => p.input_tokens, 2);
    expect(tokens[1]?.values).toEqual([6, 1]);
  });
});

describe("bucketAt", () => {
  it("finds the bucket under the pointer, clamped to the chart", () => {
    expect(bucketAt(0, 300, 3)).toBe(0);
    expect(bucketAt(150, 300, 3)).toBe(1);
    expect(bucketAt(400, 300, 3)).toBe(2);
    expect(bucketAt(-5, 300, 3)).toBe(0);
  });
});

describe("units", () => {
  it("writes tokens compactly and dollars to the cent or finer", () => {
    expect(formatTokens(1_234_000)).toBe("1.2M");
    expect(formatTokens(null)).toBe("—");
    expect(formatUsd(12.5)).toBe("$12.5");
    expect(formatUsd(0.006)).toBe("$0.006");
    expect(formatUsd(0.00075)).toBe("$0.00075");
    expect(formatUsd(0)).toBe("$0");
    expect(formatUsd(null)).toBe("no price");
  });
});
