import { Link } from "../../../lib/router";
import { useFiringAlerts } from "../api/queries";

/** In the header while any alert fires; nothing otherwise, nor while unknown. */
export function AlertsBadge() {
  const firing = useFiringAlerts(true);
  const count = firing.data?.items.length ?? 0;
  if (count === 0) return null;
  return (
    <Link to="/alerts" className="alerts-badge">
      {count} {count === 1 ? "alert" : "alerts"} firing
    </Link>
  );
}
