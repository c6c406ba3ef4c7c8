import { useQuery } from "@tanstack/react-query";
import { apiGet } from "../../../api/client";
import { windowQuery, type InsightsWindow } from "../logic/window";
import { insightKeys } from "./keys";

// Insights are live figures; they are read again every half minute while
// shown. A range that has ended reads the same every time, so it is not.
const REFRESH_MS = 30_000;

function refresh(window: InsightsWindow): number | false {
  return window.kind === "range" && window.to !== "" && Date.parse(window.to) < Date.now() ? false : REFRESH_MS;
}

export function useInsights(window: InsightsWindow) {
  return useQuery({
    queryKey: insightKeys.window(window),
    queryFn: () => apiGet("/admin/ai/insights", { query: windowQuery(window) }),
    refetchInterval: refresh(window),
  });
}

export function useRunSeries(window: InsightsWindow) {
  return useQuery({
    queryKey: insightKeys.series(window),
    queryFn: () => apiGet("/admin/ai/insights/series", { query: windowQuery(window) }),
    refetchInterval: refresh(window),
  });
}

export function useOutcomeSeries(window: InsightsWindow, decisionType: string) {
  return useQuery({
    queryKey: insightKeys.outcomes(window, decisionType),
    queryFn: () =>
      apiGet("/admin/ai/insights/outcomes", { query: { ...windowQuery(window), decision_type: decisionType } }),
    refetchInterval: refresh(window),
    enabled: decisionType !== "",
  });
}
