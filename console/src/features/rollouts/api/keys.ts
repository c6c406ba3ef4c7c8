import type { RolloutFilters } from "../logic/rollouts";

export const rolloutKeys = {
  all: ["rollouts"] as const,
  list: (filters: RolloutFilters, cursor: string) => [...rolloutKeys.all, "list", filters, cursor] as const,
  detail: (id: string) => [...rolloutKeys.all, "detail", id] as const,
};
