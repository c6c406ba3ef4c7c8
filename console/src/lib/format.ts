// Numbers and times as an operator reads them. Times are shown in the zone
// the operator chose (lib/timeZone: their own by default, or UTC), with the
// other one kept for a hover title, because an incident is discussed in UTC
// across zones and read locally at a desk. Clocks run 00–23 everywhere.

const integer = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });

export function formatCount(value: number | null | undefined): string {
  return value === null || value === undefined ? "—" : integer.format(value);
}

/** A fraction of 1 as a percentage; null means "no evidence", not 0 %. */
export function formatRate(value: number | null | undefined, digits = 0): string {
  if (value === null || value === undefined || Number.isNaN(value)) return "—";
  return `${(value * 100).toFixed(digits)} %`;
}

/** Fractional credit keeps one decimal only when it has one. */
export function formatCredit(value: number): string {
  const rounded = Math.round(value * 10) / 10;
  return Number.isInteger(rounded) ? rounded.toFixed(0) : rounded.toFixed(1);
}

/** A duration in milliseconds, in the largest unit that keeps it readable. */
export function formatMs(value: number | null | undefined): string {
  if (value === null || value === undefined) return "—";
  if (value < 1000) return `${Math.round(value)} ms`;
  if (value < 60_000) return `${(value / 1000).toFixed(1)} s`;
  return `${(value / 60_000).toFixed(1)} min`;
}

/** An instant in a zone (the operator's own unless one is given); null is "no time". */
export function formatLocal(iso: string | null, timeZone?: string): string {
  if (iso === null) return "—";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return new Intl.DateTimeFormat("en-GB", {
    year: "numeric",
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hourCycle: "h23",
    timeZone,
    timeZoneName: "short",
  }).format(date);
}

/** The same instant in UTC, for the hover title. */
export function formatUtc(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.toISOString().replace("T", " ").replace(/\.\d{3}Z$/, "")} UTC`;
}

/** A bucket edge on a chart axis: the hour for short windows, the day for long ones. */
export function formatTick(iso: string | null, bucketSeconds: number, timeZone?: string): string {
  if (iso === null) return "—";
  const options: Intl.DateTimeFormatOptions =
    bucketSeconds < 86_400 ? { hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone } : { month: "short", day: "numeric", timeZone };
  return new Intl.DateTimeFormat("en-GB", options).format(new Date(iso));
}

/**
 * A `datetime-local` input's value (the operator's wall time) as an RFC 3339
 * instant; "" stays "". The gateway refuses times without an offset.
 */
export function localInputToInstant(value: string): string {
  if (!value) return "";
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? "" : date.toISOString();
}

/** An instant as a `datetime-local` input value in the operator's zone. */
export function instantToLocalInput(iso: string): string {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** How long ago something was fetched, in words: "updated just now", "updated 12 s ago", "updated 3 min ago". */
export function updatedAgo(fetchedAtMs: number, nowMs: number): string {
  const seconds = Math.max(0, Math.floor((nowMs - fetchedAtMs) / 1000));
  if (seconds < 2) return "updated just now";
  if (seconds < 120) return `updated ${seconds} s ago`;
  return `updated ${Math.floor(seconds / 60)} min ago`;
}
