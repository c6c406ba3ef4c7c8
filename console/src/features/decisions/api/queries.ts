import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { apiGet, apiPatch } from "../../../api/client";
import type { OutcomeIn } from "../../../api/resources";
import { filtersToQuery, type DecisionFilters } from "../logic/filters";
import { decisionKeys, keysChangedByRejudge } from "./keys";

export const PAGE_SIZE = 25;

export function useDecisions(filters: DecisionFilters, cursor: string, limit: number) {
  return useQuery({
    queryKey: decisionKeys.list(filters, cursor, limit),
    queryFn: () =>
      apiGet("/admin/ai/decisions", { query: { ...filtersToQuery(filters), cursor, limit } }),
    placeholderData: keepPreviousData,
  });
}

/** What the filters offer: agents from the registry, decision types seen in the last 30 days. */
export function useFilterChoices() {
  return useQuery({
    queryKey: decisionKeys.choices(),
    queryFn: async () => {
      const [agents, insights] = await Promise.all([
        apiGet("/admin/ai/agents"),
        apiGet("/admin/ai/insights", { query: { days: 30 } }),
      ]);
      return {
        agents: agents.items.map((a) => a.id),
        types: [...new Set(insights.decisions.map((d) => d.decision_type))].sort(),
      };
    },
    staleTime: 60_000,
  });
}

export function useDecision(id: string, enabled = true) {
  return useQuery({
    queryKey: decisionKeys.detail(id),
    queryFn: () => apiGet("/admin/ai/decisions/{decision_id}", { path: { decision_id: id } }),
    enabled,
  });
}

/** One decision's context, redacted; read only once asked for (each read is audited). */
export function useDecisionContext(id: string, asked: boolean) {
  return useQuery({
    queryKey: decisionKeys.context(id),
    queryFn: () => apiGet("/admin/ai/decisions/{decision_id}/context", { path: { decision_id: id } }),
    enabled: asked,
    staleTime: Infinity,
    refetchOnWindowFocus: false,
    retry: false,
  });
}

export function useRejudge(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (verdict: OutcomeIn) =>
      apiPatch("/admin/ai/decisions/{decision_id}/outcome", verdict, { path: { decision_id: id } }),
    onSuccess: () => Promise.all(keysChangedByRejudge(id).map((queryKey) => client.invalidateQueries({ queryKey }))),
  });
}
