import { localInputToInstant } from "../../../lib/format";

export const STATUSES = ["succeeded", "failed"] as const;

/** The run list's filters as the URL keeps them: times as local input values. */
export type RunFilters = {
  agent_id: string;
  status: string;
  task_type: string;
  from: string;
  to: string;
};

const FIELDS: (keyof RunFilters)[] = ["agent_id", "status", "task_type", "from", "to"];

export const NO_FILTERS: RunFilters = { agent_id: "", status: "", task_type: "", from: "", to: "" };

export function filtersFromSearch(search: URLSearchParams): RunFilters {
  return Object.fromEntries(FIELDS.map((field) => [field, search.get(field) ?? ""])) as RunFilters;
}

export function filtersToSearch(filters: RunFilters, cursor = ""): Record<string, string> {
  return { ...filters, cursor };
}

/** The gateway's query: the operator's wall times become instants with an offset. */
export function filtersToQuery(filters: RunFilters) {
  return {
    agent_id: filters.agent_id,
    status: STATUSES.find((status) => status === filters.status),
    task_type: filters.task_type,
    from: localInputToInstant(filters.from) || undefined,
    to: localInputToInstant(filters.to) || undefined,
  };
}

export function activeFilterCount(filters: RunFilters): number {
  return FIELDS.filter((field) => filters[field] !== "").length;
}
