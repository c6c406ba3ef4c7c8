import { formatLocal, formatUtc } from "../lib/format";

/** An instant in the operator's zone, with UTC on hover. */
export function Time({ iso, empty = "—" }: { iso: string | null | undefined; empty?: string }) {
  if (!iso) return <span>{empty}</span>;
  return (
    <time dateTime={iso} title={formatUtc(iso)}>
      {formatLocal(iso)}
    </time>
  );
}
