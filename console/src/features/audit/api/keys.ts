export type AuditFilters = { entity: string; entity_id: string; actor: string };

export const auditKeys = {
  all: ["audit"] as const,
  page: (filters: AuditFilters, cursor: string) => [...auditKeys.all, filters, cursor] as const,
};
