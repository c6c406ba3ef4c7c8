import { formatLocal, formatUtc } from "../lib/format";
import { browserZone, otherZoneOf, useZoneChoice, zoneOf } from "../lib/timeZone";

/** An instant in the zone the operator chose, with the other zone on hover. */
export function Time({ iso, empty = "—" }: { iso: string | null | undefined; empty?: string }) {
  const choice = useZoneChoice();
  if (!iso) return <span>{empty}</span>;
  const local = browserZone();
  const other = otherZoneOf(choice, local);
  return (
    <time dateTime={iso} title={other === "UTC" ? formatUtc(iso) : formatLocal(iso, other)}>
      {formatLocal(iso, zoneOf(choice, local))}
    </time>
  );
}
