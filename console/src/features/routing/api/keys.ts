export type RoutingKey = { by: "decision_type" | "skill"; value: string };

export const routingKeys = {
  all: ["routing"] as const,
  key: (key: RoutingKey) => [...routingKeys.all, "key", key.by, key.value] as const,
  choices: () => [...routingKeys.all, "choices"] as const,
  metrics: (model: string) => [...routingKeys.all, "metrics", model] as const,
};
