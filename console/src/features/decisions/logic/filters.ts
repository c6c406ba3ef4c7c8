import { toInstant, urlInstant } from "../../../lib/format";

export const OUTCOMES = ["success", "failure", "unknown", "pending"] as const;

/** The listing's filters as the URL keeps them: times as RFC 3339 instants. */
export type DecisionFilters = {
  decision_type: string;
  agent_id: string;
  subject_id: string;
  outcome: string;
  model: string;
  from: string;
  to: string;
};

const FIELDS: (keyof DecisionFilters)[] = ["decision_type", "agent_id", "subject_id", "outcome", "model", "from", "to"];

export const NO_FILTERS: DecisionFilters = { decision_type: "", agent_id: "", subject_id: "", outcome: "", model: "", from: "", to: "" };

export function filtersFromSearch(search: URLSearchParams): DecisionFilters {
  const filters = Object.fromEntries(FIELDS.map((field) => [field, search.get(field) ?? ""])) as DecisionFilters;
  return { ...filters, from: urlInstant(filters.from), to: urlInstant(filters.to) };
}

export function filtersToSearch(filters: DecisionFilters, cursor = ""): Record<string, string> {
  return { ...filters, cursor };
}

/** The gateway's query. */
export function filtersToQuery(filters: DecisionFilters) {
  return {
    decision_type: filters.decision_type,
    agent_id: filters.agent_id,
    subject_id: filters.subject_id.trim(),
    outcome: OUTCOMES.find((outcome) => outcome === filters.outcome),
    // The field is a search box: part of a name finds every model holding it.
    model_contains: filters.model.trim(),
    decided_from: filters.from || undefined,
    decided_to: filters.to || undefined,
  };
}

/** The ranges an operator picks most, by how far back they reach. */
export const RANGE_PRESETS = [
  { label: "Last hour", hours: 1 },
  { label: "Last 24 h", hours: 24 },
  { label: "Last 7 days", hours: 24 * 7 },
] as const;

/**
 * A preset as the filters keep it: from that far back, open-ended at the top,
 * so decisions recorded after the page opened still show on the next page load.
 */
export function presetRange(hours: number, nowMs: number): Pick<DecisionFilters, "from" | "to"> {
  return { from: toInstant(nowMs - hours * 3_600_000), to: "" };
}

/** The listing of one subject's decisions. */
export function subjectListPath(subjectId: string): string {
  return `/decisions?${new URLSearchParams({ subject_id: subjectId }).toString()}`;
}

export function activeFilterCount(filters: DecisionFilters): number {
  return FIELDS.filter((field) => filters[field] !== "").length;
}

/** A decision id is a UUID, as the gateway's decision routes take it. */
export function isDecisionId(id: string): boolean {
  return /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(id);
}
