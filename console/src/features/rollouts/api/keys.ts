import type { RolloutFilters } from "../logic/rollouts";

export const rolloutKeys = {
  all: ["rollouts"] as const,
  list: (filters: RolloutFilters, cursor: string, limit: number) => [...rolloutKeys.all, "list", filters, cursor, limit] as const,
  detail: (id: string) => [...rolloutKeys.all, "detail", id] as const,
};
