import type { Rollout } from "../../../api/resources";
import { curvePath, densityCurve } from "../../../lib/beta";
import { formatRate } from "../../../lib/format";
import { armPosterior } from "../logic/rollouts";

const WIDTH = 600;
const HEIGHT = 160;
const ARMS = [
  { key: "control", label: "Control (baseline)", colour: "var(--series-1)", dash: undefined },
  // Dashed, so a candidate level with control still shows beneath it.
  { key: "candidate", label: "Candidate (the change, dashed)", colour: "var(--series-2)", dash: "7 5" },
] as const;

/** Both arms' Beta posteriors on one axis, each 95 % interval marked beneath its curve. */
export function ArmsChart({ arms }: { arms: Rollout["arms"] }) {
  const drawn = ARMS.map((arm) => {
    const posterior = armPosterior(arms[arm.key]);
    return { ...arm, posterior, curve: densityCurve(posterior.alpha, posterior.beta, 240) };
  });
  // Headroom above the peak, so a flat Beta(1, 1) is not drawn along the frame.
  const maxY = Math.max(...drawn.flatMap((arm) => arm.curve.map((p) => p.y)), 1) * 1.15;
  const label = drawn
    .map(({ label, posterior }) => `${label}: mean ${formatRate(posterior.mean, 1)}, 95 % between ${formatRate(posterior.low, 1)} and ${formatRate(posterior.high, 1)}`)
    .join("; ");
  return (
    <figure className="chart chart-posterior">
      <figcaption>Posterior success rate per arm (Beta density, 95 % interval beneath)</figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT + 42}`} role="img" aria-label={label}>
        <line x1={0} x2={WIDTH} y1={HEIGHT} y2={HEIGHT} className="axis" />
        {drawn.map((arm) => (
          <path key={arm.key} d={curvePath(arm.curve, WIDTH, HEIGHT, maxY)} fill="none" style={{ stroke: arm.colour }} strokeWidth={2.5} strokeDasharray={arm.dash} />
        ))}
        {drawn.map((arm, index) => (
          <line
            key={`${arm.key}-interval`}
            x1={arm.posterior.low * WIDTH}
            x2={arm.posterior.high * WIDTH}
            y1={HEIGHT + 6 + index * 6}
            y2={HEIGHT + 6 + index * 6}
            style={{ stroke: arm.colour }}
            strokeWidth={4}
          />
        ))}
        {[0, 0.25, 0.5, 0.75, 1].map((x) => (
          <text key={x} x={x * WIDTH} y={HEIGHT + 36} className="tick" textAnchor={x === 0 ? "start" : x === 1 ? "end" : "middle"}>
            {x * 100} %
          </text>
        ))}
      </svg>
      <ul className="legend">
        {drawn.map((arm) => (
          <li key={arm.key}>
            <span className="swatch" style={{ background: arm.colour }} aria-hidden="true" /> {arm.label}
          </li>
        ))}
      </ul>
    </figure>
  );
}
