import { browserZone, chooseZone, parseZoneChoice, useZoneChoice } from "../lib/timeZone";

/** The header's choice of the zone every time is shown in. */
export function ZoneControl() {
  const choice = useZoneChoice();
  return (
    <label className="zone-control">
      Times in
      <select value={choice} onChange={(event) => chooseZone(parseZoneChoice(event.target.value))}>
        <option value="local">{browserZone()}</option>
        <option value="utc">UTC</option>
      </select>
    </label>
  );
}
