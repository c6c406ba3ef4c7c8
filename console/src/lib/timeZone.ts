// Which zone the console shows times in: the operator's own (the default) or
// UTC, chosen in the header and remembered in this browser, so an incident
// read in UTC stays in UTC from page to page and after a reload.
import { useSyncExternalStore } from "react";

export type ZoneChoice = "local" | "utc";

export const ZONE_KEY = "outrider.console.timeZone";
const CHANGE = "outrider:time-zone";

/** A stored choice; anything else (nothing stored, an old value) is the operator's own zone. */
export function parseZoneChoice(stored: string | null | undefined): ZoneChoice {
  return stored === "utc" ? "utc" : "local";
}

/** The IANA zone a choice shows times in; `local` is the browser's own zone. */
export function zoneOf(choice: ZoneChoice, localZone: string = browserZone()): string {
  return choice === "utc" ? "UTC" : localZone;
}

/** The zone a time's hover title shows: the one not chosen. */
export function otherZoneOf(choice: ZoneChoice, localZone: string = browserZone()): string {
  return zoneOf(choice === "utc" ? "local" : "utc", localZone);
}

export function browserZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

function storage(): Storage | null {
  try {
    return typeof localStorage === "undefined" ? null : localStorage;
  } catch {
    // Storage can be switched off; the choice then lasts as long as the page.
    return null;
  }
}

let memory: ZoneChoice | null = null;

function snapshot(): ZoneChoice {
  return memory ?? parseZoneChoice(storage()?.getItem(ZONE_KEY));
}

function subscribe(notify: () => void): () => void {
  // "storage" carries a choice made in another tab of the console.
  window.addEventListener(CHANGE, notify);
  window.addEventListener("storage", notify);
  return () => {
    window.removeEventListener(CHANGE, notify);
    window.removeEventListener("storage", notify);
  };
}

export function chooseZone(choice: ZoneChoice): void {
  const store = storage();
  if (store) {
    memory = null;
    store.setItem(ZONE_KEY, choice);
  } else {
    memory = choice;
  }
  window.dispatchEvent(new Event(CHANGE));
}

export function useZoneChoice(): ZoneChoice {
  return useSyncExternalStore(subscribe, snapshot);
}

/** The zone every time on the page is shown in. */
export function useShownZone(): string {
  return zoneOf(useZoneChoice());
}
