import type { AuditFilters } from "../logic/audit";

export const auditKeys = {
  all: ["audit"] as const,
  page: (filters: AuditFilters, cursor: string, limit: number) => [...auditKeys.all, filters, cursor, limit] as const,
};
