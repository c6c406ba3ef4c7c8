export const playgroundKeys = {
  all: ["playground"] as const,
  status: () => [...playgroundKeys.all, "status"] as const,
  runs: () => [...playgroundKeys.all, "runs"] as const,
  run: (id: string) => [...playgroundKeys.all, "run", id] as const,
  agents: () => [...playgroundKeys.all, "agents"] as const,
  skills: (agentId: string) => [...playgroundKeys.all, "skills", agentId] as const,
};

/** A finished run adds one row to the list of past runs; nothing else changes. */
export function keysChangedByRun(): (readonly unknown[])[] {
  return [playgroundKeys.runs()];
}
