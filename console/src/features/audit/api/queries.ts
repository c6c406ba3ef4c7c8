import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { apiGet } from "../../../api/client";
import type { AuditEntity } from "../../../api/resources";
import { auditKeys, type AuditFilters } from "./keys";

const ENTITIES: AuditEntity[] = ["agent", "skill"];

export function useAudit(filters: AuditFilters, cursor: string) {
  return useQuery({
    queryKey: auditKeys.page(filters, cursor),
    queryFn: () =>
      apiGet("/admin/ai/audit", {
        query: { ...filters, entity: ENTITIES.find((entity) => entity === filters.entity), cursor, limit: 50 },
      }),
    placeholderData: keepPreviousData,
    // Writes elsewhere in the console add rows here; the audit is read-only
    // and always read fresh when opened rather than invalidated from afar.
    staleTime: 0,
  });
}
