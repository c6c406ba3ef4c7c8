import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { listRefresh } from "../../../components/pageSize";
import { apiGet } from "../../../api/client";
import { filtersToQuery, type RunFilters } from "../logic/filters";
import { runKeys } from "./keys";

export const PAGE_SIZE = 25;

export function useRuns(filters: RunFilters, cursor: string, limit: number) {
  return useQuery({
    queryKey: runKeys.list(filters, cursor, limit),
    queryFn: () => apiGet("/admin/ai/runs", { query: { ...filtersToQuery(filters), cursor, limit } }),
    placeholderData: keepPreviousData,
    refetchInterval: listRefresh(cursor),
  });
}

export function useRun(agentId: string, taskId: string) {
  return useQuery({
    queryKey: runKeys.detail(agentId, taskId),
    queryFn: () => apiGet("/admin/ai/runs/{agent_id}/{task_id}", { path: { agent_id: agentId, task_id: taskId } }),
  });
}

/** The agents that reported runs in the last 30 days, registered or not: what the agent filter offers beside the registry's. */
export function useReportingAgents() {
  return useQuery({
    queryKey: runKeys.facets(),
    queryFn: async () => (await apiGet("/admin/ai/runs/facets")).agent_ids,
    staleTime: 60_000,
  });
}
