// Scales, ticks and shapes of the Insights time charts, kept apart from
// React so they can be tested with plain numbers.
import type { AgentSeries, UsagePoint, UsageSeries } from "../../../api/resources";
import { niceCeiling } from "./chart";

/** One named line of values per bucket; null is "unknown", drawn as a gap. */
export type Series = { name: string; values: (number | null)[] };

/**
 * Round ticks from 0 to at least `max`, about `count` steps of 1, 2 or 5 ×
 * 10^n; steps of at least 1 for what comes in whole numbers (runs, tokens).
 */
export function niceTicks(max: number, count = 4, whole = false): number[] {
  const fine = niceCeiling(max > 0 ? max / count : 1 / count);
  const step = whole ? Math.max(1, fine) : fine;
  const steps = Math.max(1, Math.ceil(max / step - 1e-9));
  return Array.from({ length: steps + 1 }, (_, i) => Number((i * step).toPrecision(12)));
}

/** Indices of at most `most` buckets to label, evenly spread, the first always among them. */
export function tickIndices(buckets: number, most: number): number[] {
  if (buckets <= 0) return [];
  const every = Math.max(1, Math.ceil(buckets / Math.max(1, most)));
  const indices: number[] = [];
  for (let i = 0; i < buckets; i += every) indices.push(i);
  return indices;
}

/** The largest stack of known values in any bucket. */
export function stackedMax(series: Series[]): number {
  const buckets = Math.max(0, ...series.map((s) => s.values.length));
  let max = 0;
  for (let i = 0; i < buckets; i += 1) max = Math.max(max, series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
  return max;
}

export function valuesMax(series: Series[]): number {
  return Math.max(0, ...series.flatMap((s) => s.values.filter((v): v is number => v !== null)));
}

export type Segment = { series: number; y: number; height: number };

/**
 * Each bucket's stack, the first series at the foot, scaled so `top` is the
 * chart's full `height`. An unknown value adds no segment.
 */
export function stackSegments(series: Series[], bucket: number, top: number, height: number): Segment[] {
  const scale = top > 0 ? height / top : 0;
  let base = height;
  const segments: Segment[] = [];
  series.forEach((s, index) => {
    const value = s.values[bucket];
    if (value === null || value === undefined || value <= 0) return;
    const size = value * scale;
    base -= size;
    segments.push({ series: index, y: base, height: size });
  });
  return segments;
}

/** An SVG path through the known values, broken where a value is unknown. */
export function linePath(values: (number | null)[], x: (index: number) => number, y: (value: number) => number): string {
  let path = "";
  let drawing = false;
  values.forEach((value, index) => {
    if (value === null) {
      drawing = false;
      return;
    }
    path += `${drawing ? "L" : "M"}${round(x(index))} ${round(y(value))} `;
    drawing = true;
  });
  return path.trim();
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

/** Runs that succeeded and runs that failed per bucket, over the chosen agents. */
export function runsAndFailures(agents: AgentSeries[]): Series[] {
  const buckets = Math.max(0, ...agents.map((a) => a.points.length));
  const succeeded = Array.from({ length: buckets }, () => 0);
  const failed = Array.from({ length: buckets }, () => 0);
  for (const agent of agents) {
    agent.points.forEach((p, i) => {
      succeeded[i] = (succeeded[i] ?? 0) + Math.max(0, p.runs - p.failures);
      failed[i] = (failed[i] ?? 0) + Math.min(p.failures, p.runs);
    });
  }
  return [
    { name: "succeeded", values: succeeded },
    { name: "failed", values: failed },
  ];
}

/** One agent's median and 95th percentile run duration per bucket (unknown where it had no run). */
export function latency(agent: AgentSeries): Series[] {
  return [
    { name: "p50", values: agent.points.map((p) => p.p50_ms) },
    { name: "p95", values: agent.points.map((p) => p.p95_ms) },
  ];
}

export const OTHERS = "all others";

/**
 * A measure of each usage series per bucket, the `most` largest by total
 * kept and the rest folded into one; a fold holding an unknown value is
 * unknown, since a sum without it would read as less than was spent.
 */
export function usageMeasure(series: UsageSeries[], measure: (p: UsagePoint) => number | null, most: number): Series[] {
  const all = series.map((s) => ({ name: s.name || "(model not reported)", values: s.points.map(measure) }));
  const total = (s: Series) => s.values.reduce<number>((sum, v) => sum + (v ?? 0), 0);
  const ranked = [...all].sort((a, b) => total(b) - total(a) || a.name.localeCompare(b.name));
  if (ranked.length <= most) return ranked;
  const kept = ranked.slice(0, most - 1);
  const rest = ranked.slice(most - 1);
  const buckets = Math.max(0, ...rest.map((s) => s.values.length));
  const folded = Array.from({ length: buckets }, (_, i) =>
    rest.reduce<number | null>((sum, s) => (sum === null || s.values[i] === null ? null : sum + (s.values[i] ?? 0)), 0),
  );
  return [...kept, { name: OTHERS, values: folded }];
}

/** The bucket under a pointer `offset` pixels into a plot `width` wide. */
export function bucketAt(offset: number, width: number, buckets: number): number {
  if (buckets <= 0 || width <= 0) return 0;
  return Math.min(buckets - 1, Math.max(0, Math.floor((offset / width) * buckets)));
}

const compact = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });

export function formatTokens(value: number | null): string {
  return value === null ? "—" : compact.format(value);
}

/** US dollars, with cents (or finer, for the small sums of a quiet hour). */
export function formatUsd(value: number | null): string {
  if (value === null) return "no price";
  if (value === 0) return "$0";
  const digits = value >= 1 ? 2 : value >= 0.01 ? 3 : 5;
  return `$${value.toFixed(digits).replace(/(\.\d*?[1-9])0+$|\.0+$/, "$1")}`;
}

/** The 95th percentile run duration of the `most` busiest agents, a line each. */
export function latencyByAgent(agents: AgentSeries[], most: number): Series[] {
  const runs = (agent: AgentSeries) => agent.points.reduce((sum, p) => sum + p.runs, 0);
  return [...agents]
    .sort((a, b) => runs(b) - runs(a) || a.agent_id.localeCompare(b.agent_id))
    .slice(0, most)
    .map((agent) => ({ name: `${agent.agent_id} p95`, values: agent.points.map((p) => p.p95_ms) }));
}
