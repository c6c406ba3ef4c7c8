import type { RolloutEvent } from "../../../api/resources";
import { formatLocal, formatRate } from "../../../lib/format";
import { useShownZone } from "../../../lib/timeZone";
import { harmPath, harmSeries } from "../logic/rollouts";

const WIDTH = 600;
const HEIGHT = 120;
// Room above the plot for its "100 %" tick, clear of the halt line near the top.
const TOP = 14;

/** p_harm at each of the guard's looks, with the confidence at which it halts drawn across. */
export function HarmChart({ history, confidence }: { history: RolloutEvent[]; confidence: number }) {
  const zone = useShownZone();
  const points = harmSeries(history);
  if (points.length === 0) return <p className="hint">The guard has not looked at this rollout yet.</p>;
  const first = points[0];
  const last = points[points.length - 1];
  const haltY = HEIGHT - confidence * HEIGHT;
  const label = `p_harm over ${points.length} looks of the guard${
    first && last ? `, from ${formatRate(first.pHarm, 1)} at ${formatLocal(first.iso, zone)} to ${formatRate(last.pHarm, 1)} at ${formatLocal(last.iso, zone)}` : ""
  }; the guard halts at ${formatRate(confidence)}.`;
  return (
    <figure className="chart chart-harm">
      <figcaption>p_harm over time: P(candidate worse than control by more than the allowed drop)</figcaption>
      <svg viewBox={`0 ${-TOP} ${WIDTH} ${HEIGHT + 22 + TOP}`} role="img" aria-label={label}>
        <line x1={0} x2={WIDTH} y1={HEIGHT} y2={HEIGHT} className="axis" />
        <line x1={0} x2={WIDTH} y1={haltY} y2={haltY} className="halt-line" />
        <text x={WIDTH - 2} y={haltY + 14} className="tick" textAnchor="end">
          halts at {formatRate(confidence)}
        </text>
        <text x={2} y={-3} className="tick">
          100 %
        </text>
        <path d={harmPath(points, WIDTH, HEIGHT)} fill="none" className="harm-line" strokeWidth={2} />
        {first ? (
          <text x={0} y={HEIGHT + 16} className="tick">
            {formatLocal(first.iso, zone)}
          </text>
        ) : null}
        {last && points.length > 1 ? (
          <text x={WIDTH} y={HEIGHT + 16} className="tick" textAnchor="end">
            {formatLocal(last.iso, zone)}
          </text>
        ) : null}
      </svg>
    </figure>
  );
}
