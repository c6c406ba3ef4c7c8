// How a rollout reads to an operator: its change in words, its arms as Beta
// posteriors, its step timeline and its guard's p_harm over time. Kept apart
// from React so each can be tested with plain values.
import type { ArmEvidence, Rollout, RolloutEvent, RolloutState } from "../../../api/resources";
import { credibleInterval } from "../../../lib/beta";

export const ROLLOUT_STATES: RolloutState[] = ["running", "paused", "halted", "aborted", "completed"];

export type RolloutFilters = { agent: string; state: string };

export function filtersFromSearch(search: URLSearchParams): RolloutFilters {
  const state = search.get("state") ?? "";
  return { agent: search.get("agent") ?? "", state: (ROLLOUT_STATES as string[]).includes(state) ? state : "" };
}

export function filtersToSearch(filters: RolloutFilters, cursor = ""): Record<string, string> {
  return { agent: filters.agent, state: filters.state, cursor };
}

function word(value: unknown): string {
  if (value === null || value === undefined || value === "") return "the engine default";
  if (typeof value === "boolean") return value ? "on" : "off";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** The change as a sentence: "model claude-opus-4-8 → claude-opus-5-5". */
export function changeInWords(change: Record<string, unknown>, baseline: Record<string, unknown> = {}): string {
  if ("model" in change) return `model ${word(baseline.model)} → ${word(change.model)}`;
  if ("autonomous" in change) return `autonomy ${word(baseline.autonomous)} → ${word(change.autonomous)}`;
  if ("skill_id" in change) {
    const parts: string[] = [];
    if ("enabled" in change) parts.push(`${change.enabled ? "enable" : "disable"} ${word(change.skill_id)}`);
    const thresholds = change.thresholds;
    if (typeof thresholds === "object" && thresholds !== null) {
      const before = (typeof baseline.thresholds === "object" && baseline.thresholds !== null ? baseline.thresholds : {}) as Record<
        string,
        unknown
      >;
      for (const [key, value] of Object.entries(thresholds as Record<string, unknown>)) {
        parts.push(`${word(change.skill_id)} ${key} ${key in before ? `${word(before[key])} → ` : "→ "}${word(value)}`);
      }
    }
    return parts.length > 0 ? parts.join(", ") : `skill ${word(change.skill_id)}`;
  }
  return JSON.stringify(change);
}

/** An arm's posterior: Beta(1 + successes, 1 + failures), unknowns counted apart. */
export function armPosterior(arm: ArmEvidence): { alpha: number; beta: number; low: number; high: number; mean: number } {
  const alpha = 1 + arm.successes;
  const beta = 1 + arm.failures;
  const [low, high] = credibleInterval(alpha, beta);
  return { alpha, beta, low, high, mean: alpha / (alpha + beta) };
}

export type Step = RolloutEvent & { event: Exclude<RolloutEvent["event"], "observed"> };

/** The state changes of a rollout's history; the guard's quiet looks are drawn as p_harm instead. */
export function stepTimeline(history: RolloutEvent[]): Step[] {
  return history.filter((event): event is Step => event.event !== "observed");
}

export type HarmPoint = { at: number; iso: string; pHarm: number };

/** Every look of the guard that carried a p_harm, in time order. */
export function harmSeries(history: RolloutEvent[]): HarmPoint[] {
  return history
    .flatMap((event) =>
      event.p_harm === null || event.at === null ? [] : [{ at: Date.parse(event.at), iso: event.at, pHarm: event.p_harm }],
    )
    .filter((point) => !Number.isNaN(point.at))
    .sort((a, b) => a.at - b.at);
}

/** A polyline of the series in a `width` × `height` box: time across, p_harm 0–1 up. */
export function harmPath(points: HarmPoint[], width: number, height: number): string {
  if (points.length === 0) return "";
  const first = (points[0] as HarmPoint).at;
  const span = (points[points.length - 1] as HarmPoint).at - first;
  return points
    .map((p, i) => {
      const x = span > 0 ? ((p.at - first) / span) * width : width / 2;
      const y = height - Math.min(1, Math.max(0, p.pHarm)) * height;
      return `${i === 0 ? "M" : "L"}${x.toFixed(1)},${y.toFixed(1)}`;
    })
    .join(" ");
}

/** What a person may do to a rollout in each state; the registry refuses the rest with a 409. */
export function allowedActions(state: Rollout["state"]): ("pause" | "resume" | "abort")[] {
  if (state === "running") return ["pause", "abort"];
  if (state === "paused") return ["resume", "abort"];
  return [];
}

// A rollout still moving is watched: the guard may advance or halt it after
// any sweep, and the page is where an operator waits for that. One that has
// ended never changes again.
export const WATCHED_ROLLOUT_MS = 10_000;

/** How often an open rollout's page asks again: while it runs or is paused, and never once it has ended. */
export function rolloutRefresh(state: RolloutState | undefined): number | false {
  return state === "running" || state === "paused" ? WATCHED_ROLLOUT_MS : false;
}
