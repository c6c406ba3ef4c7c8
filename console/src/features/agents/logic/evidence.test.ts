import { describe, expect, it } from "vitest";
import { rateWithInterval, recommendationInWords } from "./evidence";

describe("rateWithInterval", () => {
  it("writes the mean and both ends of the interval", () => {
    expect(rateWithInterval(0.625, 0.5512, 0.6934)).toBe("62.5 % (55.1 – 69.3 %)");
  });
  it("keeps the mean alone when the interval is missing", () => {
    expect(rateWithInterval(0.5, null, null)).toBe("50.0 %");
  });
  it("shows a dash, not 0 %, without a judged decision", () => {
    expect(rateWithInterval(null, null, null)).toBe("—");
  });
});

describe("recommendationInWords", () => {
  it("names every recommendation differently", () => {
    const labels = (["ready", "keep_off", "demote", "not_enough_evidence"] as const).map((r) => recommendationInWords(r).label);
    expect(new Set(labels).size).toBe(4);
    expect(recommendationInWords("demote").tone).toBe("bad");
  });
});
