import { describe, expect, it } from "vitest";
import { formatLocal } from "./format";
import { otherZoneOf, parseZoneChoice, zoneOf } from "./timeZone";

describe("the zone choice", () => {
  it("is the operator's own zone unless UTC was stored", () => {
    expect(parseZoneChoice("utc")).toBe("utc");
    expect(parseZoneChoice("local")).toBe("local");
    expect(parseZoneChoice(null)).toBe("local");
    expect(parseZoneChoice("Europe/Paris")).toBe("local");
  });
  it("shows times in the chosen zone and the other one on hover", () => {
    expect(zoneOf("local", "Asia/Kolkata")).toBe("Asia/Kolkata");
    expect(zoneOf("utc", "Asia/Kolkata")).toBe("UTC");
    expect(otherZoneOf("local", "Asia/Kolkata")).toBe("UTC");
    expect(otherZoneOf("utc", "Asia/Kolkata")).toBe("Asia/Kolkata");
  });
  it("moves a known instant's wall time by the zone's offset", () => {
    const iso = "2026-09-29T23:40:00Z";
    expect(formatLocal(iso, zoneOf("utc", "Asia/Kolkata"))).toBe("29 Sept 2026, 23:40:00 UTC");
    expect(formatLocal(iso, zoneOf("local", "Asia/Kolkata"))).toBe("30 Sept 2026, 05:10:00 GMT+5:30");
  });
});
