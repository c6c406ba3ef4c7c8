import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { apiGet } from "../../../api/client";

export const PAGE_SIZE = 25;
// Firing alerts are few (one per rule and subject at most); a page this size
// holds every one of them, so the firing section needs no pager.
const FIRING_LIMIT = 200;
// The header's badge is one cheap query; half a minute is fresh enough for a
// person glancing at it, and the pages themselves refetch on focus.
const BADGE_POLL_MS = 30_000;

export const alertKeys = {
  all: ["alerts"] as const,
  firing: () => [...alertKeys.all, "firing"] as const,
  resolved: (cursor: string) => [...alertKeys.all, "resolved", cursor] as const,
};

export function useFiringAlerts(poll = false) {
  return useQuery({
    queryKey: alertKeys.firing(),
    queryFn: () => apiGet("/admin/ai/alerts", { query: { state: "firing", limit: FIRING_LIMIT } }),
    refetchInterval: poll ? BADGE_POLL_MS : false,
  });
}

export function useResolvedAlerts(cursor: string) {
  return useQuery({
    queryKey: alertKeys.resolved(cursor),
    queryFn: () => apiGet("/admin/ai/alerts", { query: { state: "resolved", cursor, limit: PAGE_SIZE } }),
    placeholderData: keepPreviousData,
  });
}
