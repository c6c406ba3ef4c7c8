import type { AuditFilters } from "../logic/audit";

export const auditKeys = {
  all: ["audit"] as const,
  page: (filters: AuditFilters, cursor: string) => [...auditKeys.all, filters, cursor] as const,
  skillAgents: () => [...auditKeys.all, "skill-agents"] as const,
};
