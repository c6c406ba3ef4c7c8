import { describe, expect, it } from "vitest";
import {
  updatedAgo,
  formatCount,
  formatCredit,
  formatLocal,
  formatMs,
  formatRate,
  formatTick,
  formatUtc,
  instantToZoneInput,
  toInstant,
  urlInstant,
  zoneInputToInstant,
} from "./format";

describe("numbers", () => {
  it("formats counts, rates, credit and durations", () => {
    expect(formatCount(1234)).toMatch(/1.234/);
    expect(formatCount(null)).toBe("—");
    expect(formatRate(0.756)).toBe("76 %");
    expect(formatRate(0.756, 1)).toBe("75.6 %");
    expect(formatRate(null)).toBe("—");
    expect(formatCredit(3)).toBe("3");
    expect(formatCredit(2.25)).toBe("2.3");
    expect(formatCredit(0.04)).toBe("0");
    expect(formatMs(850.4)).toBe("850 ms");
    expect(formatMs(1250)).toBe("1.3 s");
    expect(formatMs(90_000)).toBe("1.5 min");
    expect(formatMs(null)).toBe("—");
  });
});

describe("times", () => {
  const iso = "2026-09-29T15:27:00+00:00";
  it("shows the operator's zone and keeps UTC for the hover", () => {
    expect(formatLocal(iso, "Asia/Kolkata")).toBe("29 Sept 2026, 20:57:00 GMT+5:30");
    expect(formatLocal(iso, "UTC")).toBe("29 Sept 2026, 15:27:00 UTC");
    expect(formatUtc("2026-09-29T20:57:00+05:30")).toBe("2026-09-29 15:27:00 UTC");
    expect(formatLocal("not a time")).toBe("not a time");
    expect(formatLocal(null)).toBe("—");
  });
  it("runs the clock from 00 to 23, never 12-hour or 24:00", () => {
    expect(formatLocal("2026-09-29T00:05:00Z", "UTC")).toBe("29 Sept 2026, 00:05:00 UTC");
    expect(formatLocal("2026-09-29T13:05:00Z", "UTC")).toBe("29 Sept 2026, 13:05:00 UTC");
    expect(formatTick("2026-09-29T00:00:00Z", 3600, "UTC")).toBe("00:00");
  });
  it("labels chart ticks by hour or by day", () => {
    expect(formatTick(iso, 3600, "UTC")).toBe("15:27");
    expect(formatTick(iso, 86_400, "Asia/Kolkata")).toBe("29 Sept");
    expect(formatTick(null, 3600)).toBe("—");
  });
  it("reads a form's wall time in the zone chosen, not the browser's", () => {
    expect(zoneInputToInstant("2026-09-29T10:00", "UTC")).toBe("2026-09-29T10:00:00Z");
    expect(zoneInputToInstant("2026-09-29T10:00", "Asia/Kolkata")).toBe("2026-09-29T04:30:00Z");
    expect(zoneInputToInstant("2026-09-29T10:00", "America/New_York")).toBe("2026-09-29T14:00:00Z");
    expect(instantToZoneInput("2026-09-29T04:30:00Z", "Asia/Kolkata")).toBe("2026-09-29 10:00");
    expect(instantToZoneInput("2026-09-29T04:30:00Z", "UTC")).toBe("2026-09-29 04:30");
    expect(instantToZoneInput("2026-09-29T15:45:00Z", "UTC")).toBe("2026-09-29 15:45");
    expect(zoneInputToInstant("", "UTC")).toBe("");
    expect(zoneInputToInstant("garbage", "UTC")).toBe("");
  });
  it("takes a typed time with a space or a T, seconds or none, a date alone as its midnight", () => {
    expect(zoneInputToInstant("2026-09-29 10:00", "Asia/Kolkata")).toBe("2026-09-29T04:30:00Z");
    expect(zoneInputToInstant(" 2026-09-29 10:00:30 ", "UTC")).toBe("2026-09-29T10:00:30Z");
    expect(zoneInputToInstant("2026-09-29", "UTC")).toBe("2026-09-29T00:00:00Z");
  });
  it("refuses a wall time no clock shows rather than rolling it over", () => {
    for (const typed of ["2026-02-30 10:00", "2026-09-29 24:00", "2026-09-29 10:60", "2026-13-01", "2026-09-29 10", "10:00 2026-09-29", "2026-09-29 2:30 PM"]) {
      expect(zoneInputToInstant(typed, "UTC")).toBe("");
    }
    expect(instantToZoneInput("", "UTC")).toBe("");
  });
  it("keeps a wall time next to a clock change on its own side of it", () => {
    // New York left daylight time at 02:00 on 1 November 2026.
    expect(zoneInputToInstant("2026-11-01T00:30", "America/New_York")).toBe("2026-11-01T04:30:00Z");
    expect(zoneInputToInstant("2026-11-01T03:30", "America/New_York")).toBe("2026-11-01T08:30:00Z");
    expect(zoneInputToInstant("2026-03-29T03:30", "Europe/Berlin")).toBe("2026-03-29T01:30:00Z");
  });
  it("round-trips every hour of a year in a zone with a half-hour offset and in one with clock changes", () => {
    for (const zone of ["Asia/Kolkata", "Europe/Berlin", "America/New_York", "UTC"]) {
      for (let hour = 0; hour < 365 * 24; hour += 7) {
        const instant = toInstant(Date.UTC(2026, 0, 1) + hour * 3_600_000);
        const wall = instantToZoneInput(instant, zone);
        const back = zoneInputToInstant(wall, zone);
        // The hour a clock change repeats has two instants; either reads back to the same wall time.
        expect(instantToZoneInput(back, zone)).toBe(wall);
      }
    }
  });
  it("reads a URL's time as an instant, and an offset-less one as the browser's wall time", () => {
    expect(urlInstant("2026-09-29T10:00:00Z")).toBe("2026-09-29T10:00:00Z");
    expect(urlInstant("2026-09-29T15:30:00+05:30")).toBe("2026-09-29T10:00:00Z");
    expect(urlInstant("2026-09-29T10:00")).toBe(toInstant(new Date(2026, 8, 29, 10, 0).getTime()));
    expect(urlInstant("nonsense")).toBe("");
    expect(urlInstant(null)).toBe("");
  });
});

describe("updatedAgo", () => {
  it("says how fresh the page is in seconds, then minutes", () => {
    expect(updatedAgo(1_000, 1_500)).toBe("updated just now");
    expect(updatedAgo(1_000, 13_900)).toBe("updated 12 s ago");
    expect(updatedAgo(0, 185_000)).toBe("updated 3 min ago");
    expect(updatedAgo(5_000, 1_000)).toBe("updated just now");
  });
});
