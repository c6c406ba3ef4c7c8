import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { listRefresh } from "../../../components/pageSize";
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
    refetchInterval: listRefresh(cursor),
  });
}

/**
 * What the filters offer: the registry's agents and those that decided in
 * the last 30 days, and the decision types and models of those days (a
 * probe per distinct value on the server, not a read of the window).
 */
export function useFilterChoices() {
  return useQuery({
    queryKey: decisionKeys.choices(),
    queryFn: async () => {
      const [agents, facets] = await Promise.all([apiGet("/admin/ai/agents"), apiGet("/admin/ai/decisions/facets")]);
      return {
        agents: [...new Set([...agents.items.map((a) => a.id), ...facets.agent_ids])].sort(),
        types: facets.decision_types,
        models: facets.models,
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
