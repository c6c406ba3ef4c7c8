// The span Insights reads: one of the presets, or a range of the operator's
// own. The URL carries either (days=7, or from= and to= as instants), so a
// link shows a colleague the same span in any zone.
import { toInstant, urlInstant } from "../../../lib/format";

export const PRESETS = [
  { days: 1, label: "24 h" },
  { days: 7, label: "7 d" },
  { days: 30, label: "30 d" },
] as const;

/** A range's `to` is "" while it runs to now. */
export type InsightsWindow = { kind: "days"; days: number } | { kind: "range"; from: string; to: string };

/** The span a read covered, as the gateway answered it: what a count on the page stands for. */
export type ReadSpan = { from: string; to: string };

const PRESET_DAYS: readonly number[] = PRESETS.map((preset) => preset.days);

/** The window the URL asks for: a range when it names a start, else a preset (24 h when unset or unknown). */
export function windowOf(search: URLSearchParams): InsightsWindow {
  const from = urlInstant(search.get("from"));
  if (from) return { kind: "range", from, to: urlInstant(search.get("to")) };
  const asked = Number(search.get("days") ?? "1");
  return { kind: "days", days: PRESET_DAYS.includes(asked) ? asked : 1 };
}

/** The URL's parameters with `window` in place of whichever window they held. */
export function withWindow(search: URLSearchParams, window: InsightsWindow): Record<string, string> {
  const { days: _days, from: _from, to: _to, ...rest } = Object.fromEntries(search);
  if (window.kind === "days") return { ...rest, days: String(window.days) };
  return { ...rest, from: window.from, ...(window.to ? { to: window.to } : {}) };
}

/** The gateway's query for the window. */
export function windowQuery(window: InsightsWindow): { days: number } | { from: string; to?: string } {
  if (window.kind === "days") return { days: window.days };
  return window.to ? { from: window.from, to: window.to } : { from: window.from };
}

/** One key per window, for the query cache. */
export function windowKey(window: InsightsWindow): string {
  return window.kind === "days" ? `days:${window.days}` : `range:${window.from}/${window.to}`;
}

/**
 * What a count read over the window stands for in a list's filters: from the
 * span's start, and to its end for a range (the last N days run on to now,
 * so a list opened later still holds every run counted).
 */
export function readSpan(window: InsightsWindow, start: string | null, end: string | null): ReadSpan {
  const second = (iso: string | null) => (iso ? toInstant(Date.parse(iso)) : "");
  return { from: second(start), to: window.kind === "range" ? second(end) : "" };
}

/** A range to start editing from: the span just read, to the minute, so the fields open on it. */
export function rangeFrom(span: ReadSpan, nowMs: number): InsightsWindow {
  const minute = (ms: number) => toInstant(Math.floor(ms / 60_000) * 60_000);
  const from = span.from ? minute(Date.parse(span.from)) : minute(nowMs - 86_400_000);
  return { kind: "range", from, to: span.to ? minute(Date.parse(span.to)) : minute(nowMs) };
}
