// Badges carry their meaning in words as well as colour. A simulation is
// drawn hatched and grey so it can never be mistaken for a live agent, and no
// badge pulses: a pulsing dot claims liveness the data may not have.

const STATUS_HELP: Record<string, string> = {
  live: "Runs for real and acts on real bookings",
  partial: "Runs, but part of it is known not to work",
  simulation: "Runs on invented data; nothing it shows is real",
  broken: "Known not to work",
  unmerged: "Code exists but is not merged",
  retired: "No longer runs",
};

export function StatusBadge({ status }: { status: string }) {
  return (
    <span className={`badge badge-status badge-${status}`} title={STATUS_HELP[status] ?? status}>
      {status}
    </span>
  );
}

export function StateBadge({ state }: { state: string }) {
  return <span className={`badge badge-state state-${state}`}>{state}</span>;
}

export function OutcomeBadge({ outcome }: { outcome: string | null }) {
  const word = outcome ?? "pending";
  return <span className={`badge badge-outcome outcome-${word}`}>{word}</span>;
}

export function KindBadge({ kind }: { kind: string }) {
  return <span className={`badge badge-kind kind-${kind}`}>{kind}</span>;
}
