import { useEffect, useId, useRef, useState } from "react";
import { Empty, ErrorNotice, Loading } from "../../../components/States";
import { formatCount, formatLocal, formatRate, formatTick } from "../../../lib/format";
import { Link, useSearch } from "../../../lib/router";
import { useOutcomeSeries } from "../api/queries";
import type { InsightsWindow } from "../logic/window";
import {
  RATE_TICKS,
  bandPath,
  bucketListPath,
  bucketX,
  judgedPoints,
  judgedTotals,
  rateY,
  ratePath,
  timeTickIndices,
  unjudgedBars,
  type JudgedPoint,
} from "../logic/judged";

// Drawn at the width it is shown at, so its text stays at reading size
// from a phone to a wide screen instead of scaling with a fixed view box.
const FALLBACK_WIDTH = 760;
const LEFT = 44;
const RIGHT = 22;
const RATE_HEIGHT = 170;
const GAP = 30;
const STRIP_HEIGHT = 44;
const STRIP_TOP = RATE_HEIGHT + GAP;
const HEIGHT = STRIP_TOP + STRIP_HEIGHT + 24;
// About one time label per 90 px.
const TICK_SPACING = 90;

function useShownWidth() {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(FALLBACK_WIDTH);
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    const observer = new ResizeObserver(([entry]) => {
      if (entry) setWidth(Math.max(240, Math.floor(entry.contentRect.width)));
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  return [ref, width] as const;
}

function bucketText(point: JudgedPoint): string {
  const rate =
    point.rate === null
      ? "nothing judged"
      : `${formatRate(point.rate)} judged success (${formatCount(point.successes)} of ${formatCount(point.judged)}; 95 % ${formatRate(
          point.low,
        )} to ${formatRate(point.high)})`;
  return `${formatLocal(point.start)}: ${rate}; ${formatCount(point.unknown)} unknown, ${formatCount(point.pending)} pending`;
}

/**
 * Per bucket of decision time, the share of judged decisions of one type
 * that succeeded, with its 95 % Wilson interval; unknown and pending ones
 * are drawn in a strip of their own below, never counted as failures.
 */
export function JudgedSuccessChart({ window, decisionTypes }: { window: InsightsWindow; decisionTypes: string[] }) {
  const [search, setSearch] = useSearch();
  const selectId = useId();
  const types = [...new Set(decisionTypes)].sort();
  const asked = search.get("judged_type") ?? "";
  const decisionType = types.includes(asked) ? asked : (types[0] ?? "");
  const series = useOutcomeSeries(window, decisionType);

  if (types.length === 0) return <Empty>Nothing to chart: no decision was recorded in this window.</Empty>;
  return (
    <>
      <p className="chart-picker">
        <label htmlFor={selectId}>Decision type</label>{" "}
        <select
          id={selectId}
          value={decisionType}
          onChange={(event) => setSearch({ ...Object.fromEntries(search), judged_type: event.target.value })}
        >
          {types.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
      </p>
      {series.isPending ? (
        <Loading what="the judged decisions over time" />
      ) : series.error ? (
        <ErrorNotice error={series.error} retry={() => void series.refetch()} />
      ) : (
        <SuccessFigureOrEmpty
          decisionType={decisionType}
          buckets={series.data.types.find((s) => s.decision_type === decisionType)?.buckets ?? []}
          bucketSeconds={series.data.bucket_seconds}
        />
      )}
    </>
  );
}

type FigureProps = { decisionType: string; buckets: Parameters<typeof judgedPoints>[0]; bucketSeconds: number };

function SuccessFigureOrEmpty(props: FigureProps) {
  if (props.buckets.length === 0) return <Empty>No {props.decisionType} decision was made in this window.</Empty>;
  return <SuccessFigure {...props} />;
}

function SuccessFigure({ decisionType, buckets, bucketSeconds }: FigureProps) {
  const [ref, width] = useShownWidth();
  const plotWidth = width - LEFT - RIGHT;
  const points = judgedPoints(buckets);
  const totals = judgedTotals(points);
  const strip = unjudgedBars(points, plotWidth, STRIP_HEIGHT);
  const slot = plotWidth / points.length;
  const summary = `${decisionType}: ${formatRate(totals.rate)} judged success over the window (${formatCount(totals.successes)} of ${formatCount(
    totals.judged,
  )} judged), ${formatCount(totals.unknown)} unknown and ${formatCount(totals.pending)} pending apart. Each bucket is a link to its decisions.`;
  return (
    <figure className="chart chart-judged">
      <figcaption>
        <strong>{decisionType}</strong> · {formatRate(totals.rate)} judged success · {formatCount(totals.judged)} judged ·{" "}
        {formatCount(totals.unknown)} unknown · {formatCount(totals.pending)} pending
      </figcaption>
      <ul className="legend legend-judged">
        <li>
          <span className="swatch swatch-rate" aria-hidden="true" /> success ÷ (success + failure)
        </li>
        <li>
          <span className="swatch swatch-band" aria-hidden="true" /> 95 % interval (Wilson)
        </li>
        <li>
          <span className="swatch swatch-unknown" aria-hidden="true" /> unknown
        </li>
        <li>
          <span className="swatch swatch-pending" aria-hidden="true" /> pending
        </li>
      </ul>
      <div ref={ref}>
        <svg width={width} height={HEIGHT} viewBox={`0 0 ${width} ${HEIGHT}`} role="group" aria-label={summary}>
          <g transform={`translate(${LEFT} 0)`}>
            {RATE_TICKS.map((tick) => (
              <g key={tick}>
                <line x1={0} x2={plotWidth} y1={rateY(tick, RATE_HEIGHT) + 6} y2={rateY(tick, RATE_HEIGHT) + 6} className="grid" />
                <text x={-6} y={rateY(tick, RATE_HEIGHT) + 10} className="tick" textAnchor="end">
                  {formatRate(tick)}
                </text>
              </g>
            ))}
            <g transform="translate(0 6)">
              <path d={bandPath(points, plotWidth, RATE_HEIGHT)} className="judged-band" />
              <path d={ratePath(points, plotWidth, RATE_HEIGHT)} className="judged-rate" />
              {points.map((p, i) =>
                p.rate === null ? null : (
                  <circle key={i} cx={bucketX(i, points.length, plotWidth)} cy={rateY(p.rate, RATE_HEIGHT)} r={2.5} className="judged-dot" />
                ),
              )}
            </g>
            {strip.peak > 0 ? (
              <text x={-6} y={STRIP_TOP + 10} className="tick" textAnchor="end">
                {formatCount(strip.peak)}
              </text>
            ) : null}
            <text x={0} y={STRIP_TOP - 6} className="tick">
              unknown and pending{strip.peak === 0 ? ": none" : ""}
            </text>
            <g transform={`translate(0 ${STRIP_TOP})`}>
              {strip.bars.map((bar, i) => (
                <g key={i}>
                  <rect x={bar.x} y={bar.unknownY} width={bar.width} height={bar.unknownHeight} className="bar-unknown" />
                  <rect x={bar.x} y={bar.pendingY} width={bar.width} height={bar.pendingHeight} className="bar-pending" />
                </g>
              ))}
              <line x1={0} x2={plotWidth} y1={STRIP_HEIGHT} y2={STRIP_HEIGHT} className="axis" />
            </g>
            {timeTickIndices(points.length, Math.max(2, Math.floor(plotWidth / TICK_SPACING))).map((i) => (
              <text key={i} x={bucketX(i, points.length, plotWidth)} y={HEIGHT - 6} className="tick" textAnchor="middle">
                {formatTick(points[i]?.start ?? null, bucketSeconds)}
              </text>
            ))}
            {points.map((p, i) => (
              <Link key={i} to={bucketListPath(decisionType, p.start, bucketSeconds)} aria-label={`${bucketText(p)}: open these decisions`} className="bucket-link">
                <title>{bucketText(p)}</title>
                <rect x={i * slot} y={0} width={slot} height={STRIP_TOP + STRIP_HEIGHT} className="bucket-hit" />
              </Link>
            ))}
          </g>
        </svg>
      </div>
    </figure>
  );
}
