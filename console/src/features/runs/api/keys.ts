import type { RunFilters } from "../logic/filters";

export const runKeys = {
  all: ["runs"] as const,
  list: (filters: RunFilters, cursor: string, limit: number) => [...runKeys.all, "list", filters, cursor, limit] as const,
  facets: () => [...runKeys.all, "facets"] as const,
  detail: (agentId: string, taskId: string) => [...runKeys.all, "detail", agentId, taskId] as const,
};
