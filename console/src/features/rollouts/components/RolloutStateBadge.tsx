const STATE_HELP: Record<string, string> = {
  running: "The guard watches it and advances it step by step",
  paused: "Its share stays as it is; the guard does not advance it",
  halted: "The guard found the candidate worse; every subject is back on the baseline",
  aborted: "Stopped by a person; every subject is back on the baseline",
  completed: "The change reached every subject and is now the baseline",
};

export function RolloutStateBadge({ state }: { state: string }) {
  return (
    <span className={`badge rollout-${state}`} title={STATE_HELP[state] ?? state}>
      {state}
    </span>
  );
}
