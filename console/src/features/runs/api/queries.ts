import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { apiGet } from "../../../api/client";
import { filtersToQuery, type RunFilters } from "../logic/filters";
import { runKeys } from "./keys";

export const PAGE_SIZE = 25;

export function useRuns(filters: RunFilters, cursor: string, limit: number) {
  return useQuery({
    queryKey: runKeys.list(filters, cursor, limit),
    queryFn: () => apiGet("/admin/ai/runs", { query: { ...filtersToQuery(filters), cursor, limit } }),
    placeholderData: keepPreviousData,
  });
}

/** The agents the filter offers: those that reported in the last 30 days, and the registry's. */
export function useRunAgents() {
  return useQuery({
    queryKey: runKeys.agents(),
    queryFn: async () => {
      const insights = await apiGet("/admin/ai/insights", { query: { days: 30 } });
      return insights.agents.map((a) => a.agent_id);
    },
    staleTime: 60_000,
  });
}

export function useRun(agentId: string, taskId: string) {
  return useQuery({
    queryKey: runKeys.detail(agentId, taskId),
    queryFn: () => apiGet("/admin/ai/runs/{agent_id}/{task_id}", { path: { agent_id: agentId, task_id: taskId } }),
  });
}
