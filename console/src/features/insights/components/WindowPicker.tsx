// The span Insights reads: a preset, or a range typed on the chosen zone's
// wall clock. Choosing "Range" opens it on the span just read, so the
// operator edits from what they were looking at.
import { FilterForm, InstantField } from "../../../components/FilterForm";
import { formatLocal } from "../../../lib/format";
import { useShownZone } from "../../../lib/timeZone";
import { PRESETS, rangeFrom, windowKey, type InsightsWindow, type ReadSpan } from "../logic/window";

export function WindowPicker({
  window,
  span,
  onChange,
}: {
  window: InsightsWindow;
  span: ReadSpan;
  onChange: (window: InsightsWindow) => void;
}) {
  return (
    <fieldset className="segmented">
      <legend className="visually-hidden">Window</legend>
      {PRESETS.map((preset) => {
        const on = window.kind === "days" && window.days === preset.days;
        return (
          <label key={preset.days} className={on ? "segment segment-on" : "segment"}>
            <input
              type="radio"
              name="window"
              value={preset.days}
              checked={on}
              onChange={() => onChange({ kind: "days", days: preset.days })}
            />
            {preset.label}
          </label>
        );
      })}
      <label className={window.kind === "range" ? "segment segment-on" : "segment"}>
        <input
          type="radio"
          name="window"
          value="range"
          checked={window.kind === "range"}
          onChange={() => onChange(rangeFrom(span, Date.now()))}
        />
        Range
      </label>
    </fieldset>
  );
}

/** The range's two ends, applied together; an empty "To" runs to now. */
export function RangeForm({
  window,
  onApply,
}: {
  window: Extract<InsightsWindow, { kind: "range" }>;
  onApply: (window: InsightsWindow) => void;
}) {
  return (
    <FilterForm
      key={windowKey(window)}
      label="Range"
      filters={{ from: window.from, to: window.to }}
      onApply={(range) => onApply({ kind: "range", ...range })}
    >
      {({ draft, set }) => (
        <>
          <InstantField id="range-from" label="From" value={draft.from} onChange={(value) => set("from", value)} />
          <InstantField id="range-to" label="To" value={draft.to} onChange={(value) => set("to", value)} />
        </>
      )}
    </FilterForm>
  );
}

/** How the window reads in a heading: "last 7 d", or the range on the chosen zone's clock. */
export function useWindowTitle(window: InsightsWindow): string {
  const zone = useShownZone();
  if (window.kind === "days") return `last ${PRESETS.find((preset) => preset.days === window.days)?.label ?? `${window.days} d`}`;
  return `${formatLocal(window.from, zone)} to ${window.to ? formatLocal(window.to, zone) : "now"}`;
}
