import type { SeriesPoint } from "../../../api/resources";
import { AgentName, useAgentNames } from "../../../components/AgentName";
import { agentLabel } from "../../../lib/agentNames";
import { formatCount, formatLocal, formatTick } from "../../../lib/format";
import { useShownZone } from "../../../lib/timeZone";
import { barLayout, niceCeiling, seriesTotals } from "../logic/chart";

const WIDTH = 600;
const HEIGHT = 120;
const AXIS = 22;

/** Runs per bucket as bars, the failed share in red at the foot of each bar. */
export function RunChart({ agentId, points, bucketSeconds }: { agentId: string; points: SeriesPoint[]; bucketSeconds: number }) {
  const zone = useShownZone();
  const label = agentLabel(useAgentNames(), agentId);
  const totals = seriesTotals(points);
  const max = niceCeiling(totals.peak);
  const bars = barLayout(points, WIDTH, HEIGHT, max);
  const first = points[0];
  const last = points[points.length - 1];
  const middle = points[Math.floor(points.length / 2)];
  const summary = `${label}: ${formatCount(totals.runs)} runs, ${formatCount(totals.failures)} failed, busiest bucket ${formatCount(
    totals.peak,
  )} runs${first && last ? `, from ${formatLocal(first.start, zone)} to the bucket starting ${formatLocal(last.start, zone)}` : ""}.`;
  return (
    <figure className="chart">
      <figcaption>
        <strong>
          <AgentName id={agentId} />
        </strong>{" "}
        · {formatCount(totals.runs)} runs · {formatCount(totals.failures)} failed
      </figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT + AXIS}`} role="img" aria-label={summary}>
        <line x1={0} x2={WIDTH} y1={HEIGHT} y2={HEIGHT} className="axis" />
        <text x={2} y={11} className="tick">
          {max}
        </text>
        {bars.map((bar, index) => (
          <g key={index}>
            <title>
              {points[index] ? `${formatLocal(points[index].start, zone)}: ${points[index].runs} runs, ${points[index].failures} failed` : ""}
            </title>
            <rect x={bar.x} y={bar.runsY} width={bar.width} height={bar.runsHeight} className="bar-runs" />
            <rect x={bar.x} y={bar.failuresY} width={bar.width} height={bar.failuresHeight} className="bar-failures" />
          </g>
        ))}
        {first ? (
          <text x={0} y={HEIGHT + 16} className="tick">
            {formatTick(first.start, bucketSeconds, zone)}
          </text>
        ) : null}
        {middle ? (
          <text x={WIDTH / 2} y={HEIGHT + 16} className="tick" textAnchor="middle">
            {formatTick(middle.start, bucketSeconds, zone)}
          </text>
        ) : null}
        {last ? (
          <text x={WIDTH} y={HEIGHT + 16} className="tick" textAnchor="end">
            {formatTick(last.start, bucketSeconds, zone)}
          </text>
        ) : null}
      </svg>
    </figure>
  );
}
