import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { listRefresh } from "../../../components/pageSize";
import { apiGet, apiPost } from "../../../api/client";
import { rolloutRefresh, type RolloutFilters } from "../logic/rollouts";
import type { RolloutState } from "../../../api/resources";
import { rolloutKeys } from "./keys";

export const PAGE_SIZE = 25;

export function useRollouts(filters: RolloutFilters, cursor: string, limit: number) {
  return useQuery({
    queryKey: rolloutKeys.list(filters, cursor, limit),
    queryFn: () =>
      apiGet("/admin/ai/rollouts", {
        query: { agent_id: filters.agent, state: (filters.state || undefined) as RolloutState | undefined, cursor, limit },
      }),
    placeholderData: keepPreviousData,
    refetchInterval: listRefresh(cursor),
  });
}

export function useRollout(id: string) {
  return useQuery({
    queryKey: rolloutKeys.detail(id),
    queryFn: () => apiGet("/admin/ai/rollouts/{rollout_id}", { path: { rollout_id: id } }),
    refetchInterval: (query) => rolloutRefresh(query.state.data?.state),
  });
}

export type RolloutMove = { action: "pause" | "resume" | "abort"; reason: string };

export function useRolloutAction(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ action, reason }: RolloutMove) => {
      const body = reason ? { reason } : {};
      const path = { path: { rollout_id: id } };
      if (action === "pause") return apiPost("/admin/ai/rollouts/{rollout_id}/pause", body, path);
      if (action === "resume") return apiPost("/admin/ai/rollouts/{rollout_id}/resume", body, path);
      return apiPost("/admin/ai/rollouts/{rollout_id}/abort", body, path);
    },
    // Also after a refusal: a 409 means the rollout moved on (the guard or a
    // colleague), and the page must show where it is now.
    onSettled: () => client.invalidateQueries({ queryKey: rolloutKeys.all }),
  });
}
