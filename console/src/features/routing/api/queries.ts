import { useQueries, useQuery } from "@tanstack/react-query";
import { apiGet } from "../../../api/client";
import { routingKeys, type RoutingKey } from "./keys";

export function useRoutingChoices() {
  return useQuery({
    queryKey: routingKeys.choices(),
    queryFn: async () => {
      const [insights, skills] = await Promise.all([
        apiGet("/admin/ai/insights", { query: { days: 30 } }),
        apiGet("/admin/ai/skills"),
      ]);
      return {
        decisionTypes: [...new Set(insights.decisions.map((d) => d.decision_type))].sort(),
        skills: skills.items.map((s) => s.id).sort(),
      };
    },
    staleTime: 60_000,
  });
}

export function useRouting(key: RoutingKey | null) {
  return useQuery({
    queryKey: key ? routingKeys.key(key) : routingKeys.all,
    queryFn: () => apiGet("/admin/ai/routing", { query: key ? { [key.by]: key.value } : {} }),
    enabled: key !== null,
  });
}

/** Conversation metrics for each model, one request each (the route takes one model). */
export function useConversationMetrics(models: string[]) {
  return useQueries({
    queries: models.map((model) => ({
      queryKey: routingKeys.metrics(model),
      queryFn: () => apiGet("/admin/ai/conversation-metrics", { query: { model } }),
    })),
  });
}
