// The judged-success chart's numbers and geometry, kept apart from React so
// they can be tested with plain numbers. Only success and failure are
// judged: unknown and pending decisions are counted beside the rate, never
// in it, so a backlog of unjudged decisions cannot read as failures.
import type { OutcomeBucket } from "../../../api/resources";
import { toInstant } from "../../../lib/format";

/** The standard normal quantile of 0.975: a two-sided 95 % interval. */
export const Z_95 = 1.959963984540054;

/**
 * Wilson's score interval for a binomial proportion (Wilson 1927): unlike
 * p ± z·√(p(1−p)/n) it stays within [0, 1] and keeps its coverage near the
 * nominal for the few judged decisions of a quiet bucket. Null for no trials.
 */
export function wilsonInterval(successes: number, trials: number, z: number = Z_95): { low: number; high: number } | null {
  if (trials <= 0) return null;
  const p = successes / trials;
  const z2 = z * z;
  const denominator = 1 + z2 / trials;
  const centre = (p + z2 / (2 * trials)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / trials + z2 / (4 * trials * trials))) / denominator;
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

export type JudgedPoint = {
  start: string;
  successes: number;
  failures: number;
  unknown: number;
  pending: number;
  judged: number;
  /** successes ÷ judged; null when nothing in the bucket was judged. */
  rate: number | null;
  low: number | null;
  high: number | null;
};

export function judgedPoints(buckets: OutcomeBucket[]): JudgedPoint[] {
  return buckets.map((b) => {
    const judged = b.successes + b.failures;
    const interval = wilsonInterval(b.successes, judged);
    return {
      start: b.start ?? "",
      successes: b.successes,
      failures: b.failures,
      unknown: b.unknown,
      pending: b.pending,
      judged,
      rate: judged > 0 ? b.successes / judged : null,
      low: interval?.low ?? null,
      high: interval?.high ?? null,
    };
  });
}

/** The whole window's judged success, for the caption: one rate over every bucket. */
export function judgedTotals(points: JudgedPoint[]) {
  const sum = (pick: (p: JudgedPoint) => number) => points.reduce((total, p) => total + pick(p), 0);
  const successes = sum((p) => p.successes);
  const judged = sum((p) => p.judged);
  return { successes, judged, unknown: sum((p) => p.unknown), pending: sum((p) => p.pending), rate: judged > 0 ? successes / judged : null };
}

/** The centre of bucket `index` of `count` across `width`. */
export function bucketX(index: number, count: number, width: number): number {
  return count > 0 ? ((index + 0.5) * width) / count : 0;
}

/** A rate in [0, 1] as a y within `height`, 100 % at the top. */
export function rateY(rate: number, height: number): number {
  return (1 - rate) * height;
}

/** The runs of consecutive buckets with judged decisions: the line breaks where nothing was judged. */
export function judgedRuns(points: JudgedPoint[]): number[][] {
  const runs: number[][] = [];
  let current: number[] = [];
  points.forEach((p, index) => {
    if (p.rate === null) {
      if (current.length > 0) runs.push(current);
      current = [];
    } else current.push(index);
  });
  if (current.length > 0) runs.push(current);
  return runs;
}

const xy = (x: number, y: number) => `${x.toFixed(1)},${y.toFixed(1)}`;

/**
 * The rate line as one SVG path, a sub-path per run of judged buckets; a lone
 * judged bucket is a short level stroke so it still shows.
 */
export function ratePath(points: JudgedPoint[], width: number, height: number): string {
  const count = points.length;
  return judgedRuns(points)
    .map((run) => {
      const coordinates = run.map((i) => [bucketX(i, count, width), rateY(points[i]?.rate ?? 0, height)] as const);
      if (coordinates.length === 1) {
        const [x, y] = coordinates[0] ?? [0, 0];
        const half = width / count / 4;
        return `M${xy(x - half, y)}L${xy(x + half, y)}`;
      }
      return coordinates.map(([x, y], k) => `${k === 0 ? "M" : "L"}${xy(x, y)}`).join("");
    })
    .join("");
}

/** The 95 % band as closed polygons, one per run of judged buckets: along the tops, back along the bottoms. */
export function bandPath(points: JudgedPoint[], width: number, height: number): string {
  const count = points.length;
  const half = count > 0 ? width / count / 4 : 0;
  return judgedRuns(points)
    .map((run) => {
      const edge = (pick: (p: JudgedPoint) => number | null) =>
        run.flatMap((i) => {
          const y = rateY(pick(points[i] as JudgedPoint) ?? 0, height);
          const x = bucketX(i, count, width);
          return run.length === 1 ? [xy(x - half, y), xy(x + half, y)] : [xy(x, y)];
        });
      const top = edge((p) => p.high);
      const bottom = edge((p) => p.low).reverse();
      return `M${[...top, ...bottom].join("L")}Z`;
    })
    .join("");
}

/** Percent ticks on the rate axis. */
export const RATE_TICKS = [0, 0.25, 0.5, 0.75, 1];

/** At most `most` evenly spaced bucket indices for time ticks, first and last included. */
export function timeTickIndices(count: number, most: number): number[] {
  if (count <= 0) return [];
  if (count <= most) return Array.from({ length: count }, (_, i) => i);
  const step = Math.ceil((count - 1) / (most - 1));
  const indices = [];
  for (let i = 0; i < count - 1; i += step) indices.push(i);
  if (count - 1 - (indices[indices.length - 1] ?? 0) < step / 2) indices.pop();
  indices.push(count - 1);
  return indices;
}

/** The unjudged strip: each bucket's unknown and pending bars, scaled to the busiest bucket's unjudged. */
export function unjudgedBars(points: JudgedPoint[], width: number, height: number) {
  const peak = Math.max(0, ...points.map((p) => p.unknown + p.pending));
  const slot = points.length > 0 ? width / points.length : 0;
  const barWidth = Math.max(1, slot * 0.7);
  const scale = peak > 0 ? height / peak : 0;
  return {
    peak,
    bars: points.map((p, index) => {
      const pendingHeight = p.pending * scale;
      const unknownHeight = p.unknown * scale;
      return {
        x: index * slot + (slot - barWidth) / 2,
        width: barWidth,
        pendingY: height - pendingHeight,
        pendingHeight,
        unknownY: height - pendingHeight - unknownHeight,
        unknownHeight,
      };
    }),
  };
}

/**
 * The Decisions page listing one bucket's decisions of a type: from its start
 * to the next bucket's.
 */
export function bucketListPath(decisionType: string, start: string, bucketSeconds: number): string {
  const from = Date.parse(start);
  const to = from + bucketSeconds * 1000;
  return `/decisions?${new URLSearchParams({
    decision_type: decisionType,
    from: toInstant(from),
    to: toInstant(to),
  }).toString()}`;
}
