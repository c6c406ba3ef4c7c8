// Badges carry their meaning in words as well as colour. A simulation is
// drawn hatched and grey so it can never be mistaken for a live agent, and no
// badge pulses: a pulsing dot claims liveness the data may not have.

export const STATUS_HELP: Record<string, string> = {
  live: "Runs for real and acts on real bookings",
  partial: "Runs, but part of it is known not to work",
  simulation: "Runs on invented data; nothing it shows is real",
  broken: "Known not to work",
  unmerged: "Code exists but is not merged",
  retired: "No longer runs",
};

// What an agent's live state says, from its last reported run.
export const STATE_HELP: Record<string, string> = {
  running: "A run is under way now",
  idle: "Reported recently, nothing running now",
  silent: "Nothing reported for a while: it may have stopped",
};

export const OUTCOME_HELP: Record<string, string> = {
  success: "What the decision was for happened",
  failure: "It did not happen",
  unknown: "Judged, but the facts could not say either way",
  pending: "Not judged yet",
};

export function StatusBadge({ status }: { status: string }) {
  return (
    <span className={`badge badge-status badge-${status}`} title={STATUS_HELP[status] ?? status}>
      {status}
    </span>
  );
}

export function StateBadge({ state }: { state: string }) {
  return (
    <span className={`badge badge-state state-${state}`} title={STATE_HELP[state] ?? state}>
      {state}
    </span>
  );
}

export function OutcomeBadge({ outcome }: { outcome: string | null }) {
  const word = outcome ?? "pending";
  return (
    <span className={`badge badge-outcome outcome-${word}`} title={OUTCOME_HELP[word] ?? word}>
      {word}
    </span>
  );
}

export function KindBadge({ kind }: { kind: string }) {
  return <span className={`badge badge-kind kind-${kind}`}>{kind}</span>;
}
