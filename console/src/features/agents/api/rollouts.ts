import { useMutation, useQuery } from "@tanstack/react-query";
import { apiGet, apiPost } from "../../../api/client";
import type { RolloutDraft } from "../../../api/resources";
import { agentKeys } from "./keys";

export function useCreateRollout() {
  return useMutation({ mutationFn: (draft: RolloutDraft) => apiPost("/admin/ai/rollouts", draft) });
}

/** Decision types seen in the last 30 days, offered as the ones a rollout can gate. */
export function useDecisionTypes(enabled: boolean) {
  return useQuery({
    queryKey: [...agentKeys.all, "decision-types"],
    queryFn: async () => {
      const insights = await apiGet("/admin/ai/insights", { query: { days: 30 } });
      return [...new Set(insights.decisions.map((d) => d.decision_type))].sort();
    },
    staleTime: 60_000,
    enabled,
  });
}
