export const insightKeys = {
  all: ["insights"] as const,
  window: (days: number) => [...insightKeys.all, "window", days] as const,
  series: (days: number) => [...insightKeys.all, "series", days] as const,
  outcomes: (days: number, decisionType: string) => [...insightKeys.all, "outcomes", days, decisionType] as const,
};
