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

// The parts of an instant's wall time in a zone, read through Intl so any
// IANA zone works, not only the browser's own. A formatter is costly to
// build, so each zone's is kept.
const wallFormats = new Map<string, Intl.DateTimeFormat>();

function wallFormat(timeZone: string): Intl.DateTimeFormat {
  let format = wallFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    wallFormats.set(timeZone, format);
  }
  return format;
}

type WallClock = { year: string; month: string; day: string; hour: string; minute: string; second: string };

function wallClock(instantMs: number, timeZone: string): WallClock {
  const parts = wallFormat(timeZone).formatToParts(new Date(instantMs));
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? "00";
  return { year: part("year"), month: part("month"), day: part("day"), hour: part("hour"), minute: part("minute"), second: part("second") };
}

/** How far a zone's wall clock is ahead of UTC at an instant, in ms. */
function zoneOffsetMs(instantMs: number, timeZone: string): number {
  const wall = wallClock(instantMs, timeZone);
  const asUtc = Date.UTC(+wall.year, +wall.month - 1, +wall.day, +wall.hour, +wall.minute, +wall.second);
  return asUtc - Math.floor(instantMs / 1000) * 1000;
}

// A wall time as the time fields take it: a date, then optionally the time
// on a 24-hour clock, with a space or a "T" between.
const WALL_TIME = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2})(?::(\d{2}))?)?$/;

/**
 * A typed wall time ("2026-03-02 14:30"), read in `timeZone`, as an RFC 3339
 * instant; "" and unreadable values are "". The offset is taken at the
 * instant itself (a second pass), so a wall time just after a clock change
 * lands on the right side of it.
 */
export function zoneInputToInstant(value: string, timeZone: string): string {
  const match = WALL_TIME.exec(value.trim());
  if (!match) return "";
  const wall = `${match[1]}T${match[2] ?? "00:00"}:${match[3] ?? "00"}`;
  const wallMs = Date.parse(`${wall}Z`);
  // Date.parse rolls 30 February over into March: a wall time that does not read back is not one.
  if (Number.isNaN(wallMs) || new Date(wallMs).toISOString().slice(0, 19) !== wall) return "";
  const guess = wallMs - zoneOffsetMs(wallMs, timeZone);
  return toInstant(wallMs - zoneOffsetMs(guess, timeZone));
}

/** An instant as a time field shows it: `timeZone`'s wall clock, 24-hour, to the minute. */
export function instantToZoneInput(iso: string, timeZone: string): string {
  const ms = iso ? Date.parse(iso) : Number.NaN;
  if (Number.isNaN(ms)) return "";
  const wall = wallClock(ms, timeZone);
  return `${wall.year}-${wall.month}-${wall.day} ${wall.hour}:${wall.minute}`;
}

/** An instant as the URL and the gateway take it: RFC 3339 in UTC, to the second. */
export function toInstant(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/**
 * A time from the URL as an instant. Links carry instants, so a range shared
 * across zones means the same span for everyone; a value without an offset
 * (as links once carried) is read as the browser's wall time, as it was then.
 */
export function urlInstant(value: string | null): string {
  if (!value) return "";
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? "" : toInstant(ms);
}

/** How long ago something was fetched, in words: "updated just now", "updated 12 s ago", "updated 3 min ago". */
export function updatedAgo(fetchedAtMs: number, nowMs: number): string {
  const seconds = Math.max(0, Math.floor((nowMs - fetchedAtMs) / 1000));
  if (seconds < 2) return "updated just now";
  if (seconds < 120) return `updated ${seconds} s ago`;
  return `updated ${Math.floor(seconds / 60)} min ago`;
}
