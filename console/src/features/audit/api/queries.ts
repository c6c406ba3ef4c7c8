import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { listRefresh } from "../../../components/pageSize";
import { apiGet } from "../../../api/client";
import { filtersToQuery, type AuditFilters } from "../logic/audit";
import { auditKeys } from "./keys";

export const PAGE_SIZE = 50;

export function useAudit(filters: AuditFilters, cursor: string, limit: number, enabled: boolean) {
  return useQuery({
    queryKey: auditKeys.page(filters, cursor, limit),
    queryFn: () => apiGet("/admin/ai/audit", { query: { ...filtersToQuery(filters), cursor, limit } }),
    placeholderData: keepPreviousData,
    enabled,
    refetchInterval: listRefresh(cursor),
    // Writes elsewhere in the console add rows here; the audit is read-only
    // and always read fresh when opened rather than invalidated from afar.
    staleTime: 0,
  });
}
