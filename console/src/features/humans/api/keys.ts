export const humanKeys = {
  all: ["humans"] as const,
  subject: (subjectId: string, cursor: string) => [...humanKeys.all, "subject", subjectId, cursor] as const,
};
