// Geometry of the runs-over-time bars, kept apart from React so it can be
// tested with plain numbers.
import type { DecisionCount, SeriesPoint } from "../../../api/resources";

export type Bar = { x: number; width: number; runsY: number; runsHeight: number; failuresY: number; failuresHeight: number };

/** The smallest 1, 2 or 5 × 10^n at or above `value`, so an axis reads in round numbers. */
export function niceCeiling(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

/**
 * One bar per bucket across `width`, heights scaled to `max` over `height`.
 * Failures are part of the runs, drawn at the foot of each bar, so a bar's
 * height stays "how busy" and its red share "how badly".
 */
export function barLayout(points: SeriesPoint[], width: number, height: number, max: number): Bar[] {
  if (points.length === 0) return [];
  const slot = width / points.length;
  const barWidth = Math.max(1, slot * 0.75);
  const scale = max > 0 ? height / max : 0;
  return points.map((point, index) => {
    const runsHeight = point.runs * scale;
    const failuresHeight = Math.min(point.failures, point.runs) * scale;
    return {
      x: index * slot + (slot - barWidth) / 2,
      width: barWidth,
      runsY: height - runsHeight,
      runsHeight,
      failuresY: height - failuresHeight,
      failuresHeight,
    };
  });
}

export function seriesTotals(points: SeriesPoint[]): { runs: number; failures: number; peak: number } {
  return points.reduce(
    (acc, p) => ({ runs: acc.runs + p.runs, failures: acc.failures + p.failures, peak: Math.max(acc.peak, p.runs) }),
    { runs: 0, failures: 0, peak: 0 },
  );
}

/** Decision counts folded into a type × outcome grid, with a total per type. */
export function outcomeGrid(rows: DecisionCount[]) {
  const outcomes = ["success", "failure", "unknown", "pending"];
  const byType = new Map<string, Record<string, number>>();
  for (const row of rows) {
    const cells = byType.get(row.decision_type) ?? {};
    cells[row.outcome] = (cells[row.outcome] ?? 0) + row.count;
    byType.set(row.decision_type, cells);
  }
  return {
    outcomes,
    rows: [...byType.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([type, cells]) => ({ type, cells, total: Object.values(cells).reduce((a, b) => a + b, 0) })),
  };
}

/**
 * The Decisions page listing what one cell of the grid counts: one type, one
 * outcome, decided within the span the grid was read over.
 */
export function outcomeListPath(decisionType: string, outcome: string, span: { from: string; to: string }): string {
  const bounds = { ...(span.from ? { from: span.from } : {}), ...(span.to ? { to: span.to } : {}) };
  return `/decisions?${new URLSearchParams({ decision_type: decisionType, outcome, ...bounds }).toString()}`;
}
