import { windowKey, type InsightsWindow } from "../logic/window";

export const insightKeys = {
  all: ["insights"] as const,
  window: (window: InsightsWindow) => [...insightKeys.all, "window", windowKey(window)] as const,
  series: (window: InsightsWindow) => [...insightKeys.all, "series", windowKey(window)] as const,
  outcomes: (window: InsightsWindow, decisionType: string) =>
    [...insightKeys.all, "outcomes", windowKey(window), decisionType] as const,
};
