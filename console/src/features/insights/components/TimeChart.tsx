import { useEffect, useRef, useState, type KeyboardEvent, type MouseEvent } from "react";
import { formatLocal, formatTick } from "../../../lib/format";
import { bucketAt, linePath, niceTicks, stackSegments, stackedMax, tickIndices, valuesMax, type Series } from "../logic/scales";

const HEIGHT = 180;
const LEFT = 64;
const RIGHT = 12;
const TOP = 10;
const BOTTOM = 26;

export type TimeChartProps = {
  title: string;
  /** What the y axis counts, written beside the title. */
  unit: string;
  starts: (string | null)[];
  bucketSeconds: number;
  series: Series[];
  kind: "bars" | "lines";
  /** A class per series, naming its colour. */
  classes: string[];
  format: (value: number | null) => string;
  /** Whether the values come in whole numbers, so ticks never fall between them. */
  whole?: boolean;
  /** The text alternative: what the chart shows, in a sentence. */
  summary: string;
};

/** The width the chart is laid out at: its box's, so text keeps its size on a phone. */
function useWidth(initial: number) {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(initial);
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

/**
 * Values per time bucket as stacked bars or as lines, with a y axis in round
 * ticks, time ticks in the operator's zone and a legend. The bucket under
 * the pointer, or the one chosen with the arrow keys, is read out below.
 */
export function TimeChart({ title, unit, starts, bucketSeconds, series, kind, classes, format, whole = false, summary }: TimeChartProps) {
  const [boxRef, width] = useWidth(960);
  const [active, setActive] = useState<number | null>(null);
  const buckets = starts.length;
  const plotWidth = width - LEFT - RIGHT;
  const ticks = niceTicks(kind === "bars" ? stackedMax(series) : valuesMax(series), 4, whole);
  const top = ticks[ticks.length - 1] ?? 1;
  const slot = buckets > 0 ? plotWidth / buckets : plotWidth;
  const y = (value: number) => TOP + HEIGHT - (top > 0 ? (value / top) * HEIGHT : 0);
  const x = (index: number) => LEFT + index * slot + slot / 2;
  const labelled = tickIndices(buckets, Math.max(2, Math.floor(plotWidth / 90)));
  const barWidth = Math.max(1, slot * 0.7);

  const readout = (index: number) =>
    `${formatLocal(starts[index] ?? null)}: ${series.map((s) => `${s.name} ${format(s.values[index] ?? null)}`).join(", ")}`;

  const onKey = (event: KeyboardEvent<HTMLDivElement>) => {
    if (buckets === 0) return;
    const current = active ?? buckets - 1;
    const moves: Record<string, number> = { ArrowLeft: current - 1, ArrowRight: current + 1, Home: 0, End: buckets - 1 };
    const next = moves[event.key];
    if (next === undefined) return;
    event.preventDefault();
    setActive(Math.min(buckets - 1, Math.max(0, next)));
  };
  const onPointer = (event: MouseEvent<SVGSVGElement>) => {
    const box = event.currentTarget.getBoundingClientRect();
    const offset = ((event.clientX - box.left) / box.width) * width - LEFT;
    setActive(bucketAt(offset, plotWidth, buckets));
  };

  return (
    <figure className="chart time-chart">
      <figcaption>
        <strong>{title}</strong> <span className="hint">({unit})</span>
      </figcaption>
      <ul className="chart-legend">
        {series.map((s, i) => (
          <li key={s.name}>
            <span className={`swatch ${classes[i % classes.length] ?? ""}`} aria-hidden="true" />
            {s.name}
          </li>
        ))}
      </ul>
      <div
        ref={boxRef}
        className="time-chart-plot"
        tabIndex={0}
        role="group"
        aria-label={`${title}: use the left and right arrow keys to read each bucket`}
        onKeyDown={onKey}
        onFocus={() => setActive((current) => current ?? buckets - 1)}
      >
        <svg
          width={width}
          height={TOP + HEIGHT + BOTTOM}
          viewBox={`0 0 ${width} ${TOP + HEIGHT + BOTTOM}`}
          role="img"
          aria-label={summary}
          onMouseMove={onPointer}
          onMouseLeave={() => setActive(null)}
        >
          {ticks.map((tick) => (
            <g key={tick}>
              <line x1={LEFT} x2={width - RIGHT} y1={y(tick)} y2={y(tick)} className={tick === 0 ? "axis" : "grid"} />
              <text x={LEFT - 6} y={y(tick) + 4} className="tick" textAnchor="end">
                {format(tick)}
              </text>
            </g>
          ))}
          {active !== null ? <rect x={LEFT + active * slot} y={TOP} width={slot} height={HEIGHT} className="chart-cursor" /> : null}
          {kind === "bars"
            ? starts.map((_, index) => (
                <g key={index}>
                  <title>{readout(index)}</title>
                  {stackSegments(series, index, top, HEIGHT).map((segment) => (
                    <rect
                      key={segment.series}
                      x={x(index) - barWidth / 2}
                      y={TOP + segment.y}
                      width={barWidth}
                      height={segment.height}
                      className={classes[segment.series % classes.length]}
                    />
                  ))}
                </g>
              ))
            : series.map((s, si) => (
                <g key={s.name} className={classes[si % classes.length]}>
                  <path d={linePath(s.values, x, y)} className="chart-line" />
                  {s.values.map((value, index) =>
                    value === null ? null : (
                      <circle key={index} cx={x(index)} cy={y(value)} r={active === index ? 4.5 : 2.5}>
                        <title>{`${formatLocal(starts[index] ?? null)}: ${s.name} ${format(value)}`}</title>
                      </circle>
                    ),
                  )}
                </g>
              ))}
          {labelled.map((index) => (
            <text key={index} x={x(index)} y={TOP + HEIGHT + 18} className="tick" textAnchor="middle">
              {formatTick(starts[index] ?? null, bucketSeconds)}
            </text>
          ))}
        </svg>
      </div>
      <p className="chart-readout" aria-live="polite">
        {active !== null && active < buckets ? readout(active) : "Point at a bucket, or focus the chart and use the arrow keys, to read its values."}
      </p>
    </figure>
  );
}
