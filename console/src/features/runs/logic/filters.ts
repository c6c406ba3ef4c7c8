import { urlInstant } from "../../../lib/format";

export const STATUSES = ["succeeded", "failed"] as const;

/** The run list's filters as the URL keeps them: times as RFC 3339 instants. */
export type RunFilters = {
  agent_id: string;
  status: string;
  task_type: string;
  from: string;
  to: string;
  /** "" for newest first, "slowest" for longest first: an order, not a filter. */
  order: RunOrder;
};

export type RunOrder = "" | "slowest";

const FIELDS = ["agent_id", "status", "task_type", "from", "to"] as const;

export const NO_FILTERS: RunFilters = { agent_id: "", status: "", task_type: "", from: "", to: "", order: "" };

export function filtersFromSearch(search: URLSearchParams): RunFilters {
  const filters = Object.fromEntries(FIELDS.map((field) => [field, search.get(field) ?? ""])) as Omit<RunFilters, "order">;
  const order: RunOrder = search.get("order") === "slowest" ? "slowest" : "";
  return { ...filters, from: urlInstant(filters.from), to: urlInstant(filters.to), order };
}

export function filtersToSearch(filters: RunFilters, cursor = ""): Record<string, string> {
  return { ...filters, cursor };
}

/** The gateway's query. */
export function filtersToQuery(filters: RunFilters) {
  return {
    agent_id: filters.agent_id,
    status: STATUSES.find((status) => status === filters.status),
    task_type: filters.task_type,
    from: filters.from || undefined,
    to: filters.to || undefined,
    order: filters.order === "slowest" ? ("slowest" as const) : undefined,
  };
}

export function activeFilterCount(filters: RunFilters): number {
  return FIELDS.filter((field) => filters[field] !== "").length;
}
