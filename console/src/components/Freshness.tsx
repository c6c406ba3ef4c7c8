import { useEffect, useState } from "react";
import { updatedAgo } from "../lib/format";

/** "updated N s ago", ticking each second: how old what the page shows is. */
export function Freshness({ fetchedAt }: { fetchedAt: number }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const tick = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(tick);
  }, []);
  return <span className="freshness">{updatedAgo(fetchedAt, now)}</span>;
}
