import type { ModelCall, TaskRun } from "../../../api/resources";
import { formatMs } from "../../../lib/format";
import { timeline } from "../logic/timeline";

const WIDTH = 600;
const ROW = 18;
const GAP = 6;
const AXIS = 20;

/** The run as a bar on top and each model call below it where it happened, failed ones in red. */
export function SpanTimeline({ run, calls }: { run: TaskRun; calls: ModelCall[] }) {
  const drawn = timeline(run, calls, WIDTH);
  const height = (calls.length + 1) * (ROW + GAP) + AXIS;
  const failed = calls.filter((call) => call.status === "failed").length;
  const summary = `Run of ${formatMs(run.duration_ms)} with ${calls.length} model calls${failed ? `, ${failed} failed` : ""}, over ${formatMs(
    drawn.spanMs,
  )}.`;
  return (
    <figure className="chart chart-spans">
      <figcaption>
        <strong>Timeline</strong> · {formatMs(drawn.spanMs)} from the first span’s start
      </figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${height}`} role="img" aria-label={summary}>
        <g>
          <title>{`The run: ${formatMs(run.duration_ms)}, ${run.status}`}</title>
          <rect x={drawn.run.x} y={0} width={drawn.run.width} height={ROW} className={drawn.run.failed ? "span-run span-failed" : "span-run"} />
        </g>
        {drawn.calls.map((bar, index) => {
          const call = calls[index];
          return (
            <g key={call ? call.span_id : index}>
              <title>{call ? `${call.model ?? call.operation}: ${formatMs(call.duration_ms)}, ${call.status}` : ""}</title>
              <rect
                x={bar.x}
                y={(index + 1) * (ROW + GAP)}
                width={bar.width}
                height={ROW}
                className={bar.failed ? "span-call span-failed" : "span-call"}
              />
            </g>
          );
        })}
        <line x1={0} x2={WIDTH} y1={height - AXIS} y2={height - AXIS} className="axis" />
        <text x={0} y={height - 4} className="tick">
          0
        </text>
        <text x={WIDTH} y={height - 4} className="tick" textAnchor="end">
          {formatMs(drawn.spanMs)}
        </text>
      </svg>
      <ul className="legend">
        <li>
          <span className="swatch span-run" aria-hidden="true" /> the run
        </li>
        <li>
          <span className="swatch span-call" aria-hidden="true" /> a model call
        </li>
        <li>
          <span className="swatch span-failed" aria-hidden="true" /> failed
        </li>
      </ul>
    </figure>
  );
}
