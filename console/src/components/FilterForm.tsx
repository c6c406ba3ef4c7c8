// One filter form for every listing: a draft the operator edits, applied
// together (so each keystroke is not a request), and the fields listings
// share. Times are shown and typed on the wall clock of the zone chosen in
// the header and kept as instants, so a link means the same span to a
// colleague in another zone.
import { useEffect, useRef, useState, type ReactNode, type SubmitEvent } from "react";
import { instantToZoneInput, zoneInputToInstant } from "../lib/format";
import { useShownZone } from "../lib/timeZone";

const WALL_TIME_EXAMPLE = "2026-03-02 14:30";

export type FilterDraft<T> = {
  draft: T;
  /** Change one field of the draft. */
  set: <K extends keyof T>(field: K, value: T[K]) => void;
  /** Change the draft and apply it at once (a preset, a quick pick). */
  applyNow: (next: T) => void;
};

export function FilterForm<T>({
  label,
  filters,
  empty,
  onApply,
  children,
}: {
  label: string;
  filters: T;
  /** What Clear applies; without it there is no Clear button. */
  empty?: T;
  onApply: (next: T) => void;
  children: (form: FilterDraft<T>) => ReactNode;
}) {
  const [draft, setDraft] = useState(filters);
  const applyNow = (next: T) => {
    setDraft(next);
    onApply(next);
  };
  const set = <K extends keyof T>(field: K, value: T[K]) => setDraft((current) => ({ ...current, [field]: value }));
  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    onApply(draft);
  };
  return (
    <form className="filters" onSubmit={submit} aria-label={label}>
      {children({ draft, set, applyNow })}
      <div className="form-actions">
        <button type="submit" className="button button-primary">
          Apply filters
        </button>
        {empty !== undefined && (
          <button type="button" className="button" onClick={() => applyNow(empty)}>
            Clear
          </button>
        )}
      </div>
    </form>
  );
}

/** A choice among known values; the current value stays offered even when the list does not hold it. */
export function ChoiceField({
  id,
  label,
  value,
  anyLabel,
  choices,
  labelOf = (choice) => choice,
  onChange,
}: {
  id: string;
  label: string;
  value: string;
  anyLabel: string;
  choices: readonly string[];
  /** How a choice reads, when not as its value. */
  labelOf?: (choice: string) => string;
  onChange: (value: string) => void;
}) {
  const offered = [...new Set([...choices, ...(value ? [value] : [])])];
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(event) => onChange(event.target.value)}>
        <option value="">{anyLabel}</option>
        {offered.map((choice) => (
          <option key={choice} value={choice}>
            {labelOf(choice)}
          </option>
        ))}
      </select>
    </div>
  );
}

/** Free text; `suggestions` become a datalist the browser offers as the operator types. */
export function TextField({
  id,
  label,
  value,
  placeholder,
  suggestions,
  search = false,
  onChange,
}: {
  id: string;
  label: string;
  value: string;
  placeholder?: string;
  suggestions?: readonly string[];
  /** The page's search box: `/` focuses it. */
  search?: boolean;
  onChange: (value: string) => void;
}) {
  const listId = suggestions ? `${id}-suggestions` : undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type={search ? "search" : "text"}
        value={value}
        onChange={(event) => onChange(event.target.value)}
        placeholder={placeholder}
        autoComplete="off"
        spellCheck={false}
        list={listId}
        {...(search ? { "aria-keyshortcuts": "/", "data-page-search": "" } : {})}
      />
      {suggestions && (
        <datalist id={listId}>
          {suggestions.map((suggestion) => (
            <option key={suggestion} value={suggestion} />
          ))}
        </datalist>
      )}
    </div>
  );
}

/**
 * An instant, typed on the chosen zone's wall clock (the label says which
 * zone) as "2026-03-02 14:30": a text field rather than the browser's date
 * picker, which follows the browser's language and shows AM/PM where the
 * tables use a 24-hour clock. A text no clock shows holds the form back.
 */
export function InstantField({
  id,
  label,
  value,
  onChange,
}: {
  id: string;
  label: string;
  /** An RFC 3339 instant, or "" for no bound. */
  value: string;
  onChange: (instant: string) => void;
}) {
  const zone = useShownZone();
  const input = useRef<HTMLInputElement>(null);
  // The typed text is kept as typed: a half-typed time has no instant yet,
  // and turning it into "" would wipe what the operator is typing.
  const [typed, setTyped] = useState(() => instantToZoneInput(value, zone));
  const [typedIn, setTypedIn] = useState({ value, zone });
  if (typedIn.value !== value || typedIn.zone !== zone) {
    setTypedIn({ value, zone });
    setTyped(instantToZoneInput(value, zone));
  }
  const unreadable = typed.trim() !== "" && zoneInputToInstant(typed, zone) === "";
  const problem = `Not a time: type it as ${WALL_TIME_EXAMPLE}, on a 24-hour clock.`;
  useEffect(() => input.current?.setCustomValidity(unreadable ? problem : ""), [unreadable, problem]);
  return (
    <div className="field">
      <label htmlFor={id}>
        {label} <span className="hint">({zone})</span>
      </label>
      <input
        ref={input}
        id={id}
        type="text"
        value={typed}
        placeholder="YYYY-MM-DD HH:MM"
        autoComplete="off"
        spellCheck={false}
        aria-invalid={unreadable || undefined}
        aria-describedby={unreadable ? `${id}-problem` : undefined}
        onChange={(event) => {
          const instant = zoneInputToInstant(event.target.value, zone);
          setTyped(event.target.value);
          setTypedIn({ value: instant, zone });
          onChange(instant);
        }}
      />
      {unreadable && (
        <span id={`${id}-problem`} className="field-error">
          {problem}
        </span>
      )}
    </div>
  );
}

/** Buttons that set a range reaching back a fixed time, each applied at once. */
export function RangePresets({
  id,
  presets,
  onPick,
}: {
  id: string;
  presets: readonly { label: string; hours: number }[];
  onPick: (hours: number) => void;
}) {
  return (
    <div className="field">
      <span className="label-like" id={id}>
        Range
      </span>
      <div className="range-presets" role="group" aria-labelledby={id}>
        {presets.map((preset) => (
          <button key={preset.label} type="button" className="button button-small" onClick={() => onPick(preset.hours)}>
            {preset.label}
          </button>
        ))}
      </div>
    </div>
  );
}
