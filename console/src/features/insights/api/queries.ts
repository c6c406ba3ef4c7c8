import { useQuery } from "@tanstack/react-query";
import { apiGet } from "../../../api/client";
import { insightKeys } from "./keys";

// Insights are live figures; they are read again every half minute while shown.
const REFRESH_MS = 30_000;

export function useInsights(days: number) {
  return useQuery({
    queryKey: insightKeys.window(days),
    queryFn: () => apiGet("/admin/ai/insights", { query: { days } }),
    refetchInterval: REFRESH_MS,
  });
}

export function useRunSeries(days: number) {
  return useQuery({
    queryKey: insightKeys.series(days),
    queryFn: () => apiGet("/admin/ai/insights/series", { query: { days } }),
    refetchInterval: REFRESH_MS,
  });
}

export function useOutcomeSeries(days: number, decisionType: string) {
  return useQuery({
    queryKey: insightKeys.outcomes(days, decisionType),
    queryFn: () => apiGet("/admin/ai/insights/outcomes", { query: { days, decision_type: decisionType } }),
    refetchInterval: REFRESH_MS,
    enabled: decisionType !== "",
  });
}
