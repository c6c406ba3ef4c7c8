// How the evidence before a switch (DESIGN §10) reads in Agent Studio.
import type { AutonomyEvidence } from "../../../api/resources";
import { formatRate } from "../../../lib/format";

/** A rate with its 95 % interval, "62 % (55 – 69 %)"; a dash without a judged decision. */
export function rateWithInterval(mean: number | null | undefined, low: number | null | undefined, high: number | null | undefined): string {
  if (mean === null || mean === undefined) return "—";
  if (low === null || low === undefined || high === null || high === undefined) return formatRate(mean, 1);
  return `${formatRate(mean, 1)} (${(low * 100).toFixed(1)} – ${formatRate(high, 1)})`;
}

export type Recommendation = AutonomyEvidence["recommendation"];

/** The recommendation in words, and the tone the badge takes. */
export function recommendationInWords(recommendation: Recommendation): { label: string; tone: "good" | "warn" | "bad" | "neutral" } {
  switch (recommendation) {
    case "ready":
      return { label: "Ready to act alone", tone: "good" };
    case "keep_off":
      return { label: "Keep autonomy off", tone: "warn" };
    case "demote":
      return { label: "Turn autonomy off", tone: "bad" };
    case "not_enough_evidence":
      return { label: "Not enough evidence", tone: "neutral" };
  }
}

type Execution = keyof AutonomyEvidence["by_execution"];

/** Executions in a fixed order, with a word an operator uses for each. */
export const EXECUTION_WORDS: Record<Execution, string> = {
  autonomous: "Acted alone",
  confirmed: "Confirmed by a person",
  overridden: "Overridden by a person",
  proposed: "Proposed, not acted on",
};

export const EXECUTIONS = Object.keys(EXECUTION_WORDS) as Execution[];
