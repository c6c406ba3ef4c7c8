import { keepPreviousData, useQueries, useQuery } from "@tanstack/react-query";
import { apiGet } from "../../../api/client";
import { agentKeys } from "./keys";

/** The off-policy estimate of each candidate model for one decision type. */
export function useEvaluations(decisionType: string, models: string[]) {
  return useQueries({
    queries: models.map((model) => ({
      queryKey: [...agentKeys.all, "evaluate", decisionType, model],
      queryFn: () => apiGet("/admin/ai/evaluate", { query: { decision_type: decisionType, model } }),
      enabled: decisionType !== "",
      staleTime: 30_000,
    })),
  });
}

export function useAutonomyEvidence(agentId: string, decisionType: string) {
  return useQuery({
    queryKey: [...agentKeys.all, "evidence", agentId, decisionType],
    queryFn: () =>
      apiGet("/admin/ai/agents/{agent_id}/evidence", {
        path: { agent_id: agentId },
        query: decisionType ? { decision_type: decisionType } : {},
      }),
    placeholderData: keepPreviousData,
    staleTime: 30_000,
  });
}
