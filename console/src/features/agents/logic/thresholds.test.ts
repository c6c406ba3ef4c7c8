import { describe, expect, it } from "vitest";
import type { ThresholdSpec } from "../../../api/resources";
import { checkThreshold, formFromThresholds, serverProblems, thresholdLabel, thresholdPatch } from "./thresholds";

const minutes: ThresholdSpec = { type: "integer", min: 3, max: 60, step: 1, default: 10 };
const confidence: ThresholdSpec = { type: "number", min: 0.5, max: 1, step: 0.05, default: 0.7 };
const schema = { stallMinutes: minutes, reassignConfidence: confidence };

describe("checkThreshold", () => {
  it("accepts values inside the range on the step grid", () => {
    expect(checkThreshold(minutes, "12")).toEqual({ value: 12, problem: null });
    expect(checkThreshold(confidence, "0.85")).toEqual({ value: 0.85, problem: null });
    expect(checkThreshold(confidence, "0.7000000000001")).toEqual({ value: 0.7000000000001, problem: null });
  });
  it("names what is wrong", () => {
    expect(checkThreshold(minutes, "")).toEqual({ value: null, problem: "required" });
    expect(checkThreshold(minutes, "ten").problem).toBe("must be a finite number");
    expect(checkThreshold(minutes, "Infinity").problem).toBe("must be a finite number");
    expect(checkThreshold(minutes, "12.5").problem).toBe("must be a whole number, got 12.5");
    expect(checkThreshold(minutes, "99").problem).toBe("must be between 3 and 60, got 99");
    expect(checkThreshold(minutes, "2").problem).toBe("must be between 3 and 60, got 2");
    expect(checkThreshold(confidence, "0.72").problem).toBe("must be 0.5 plus a multiple of 0.05, got 0.72");
  });
});

describe("thresholdPatch", () => {
  const saved = { stallMinutes: 10, reassignConfidence: 0.7 };
  it("sends only the changed keys", () => {
    expect(thresholdPatch(schema, saved, { stallMinutes: "10", reassignConfidence: "0.8" })).toEqual({
      patch: { reassignConfidence: 0.8 },
      problems: {},
    });
  });
  it("reports every problem at once", () => {
    const result = thresholdPatch(schema, saved, { stallMinutes: "0", reassignConfidence: "2" });
    expect(Object.keys(result.problems)).toEqual(["stallMinutes", "reassignConfidence"]);
  });
  it("fills the form from saved values, defaults for the rest", () => {
    expect(formFromThresholds(schema, { stallMinutes: 15 })).toEqual({ stallMinutes: "15", reassignConfidence: "0.7" });
  });
});

describe("serverProblems", () => {
  it("keeps the reasons the gateway gives for this form's thresholds", () => {
    const details = {
      fields: { "thresholds.stallMinutes": "must be between 3 and 60, got 99", "thresholds.other": "y", version: "z" },
    };
    expect(serverProblems(schema, details)).toEqual({ stallMinutes: "must be between 3 and 60, got 99" });
  });

  it("finds nothing in details without fields", () => {
    expect(serverProblems(schema, { stallMinutes: "not where the gateway puts reasons" })).toEqual({});
  });
});

describe("thresholdLabel", () => {
  it("reads camel case and snake case keys as words", () => {
    expect(thresholdLabel("stallMinutes")).toBe("Stall minutes");
    expect(thresholdLabel("reassignConfidence")).toBe("Reassign confidence");
    expect(thresholdLabel("unassigned_minutes")).toBe("Unassigned minutes");
    expect(thresholdLabel("realertEvery")).toBe("Realert every");
  });
  it("keeps acronyms and numbers as written", () => {
    expect(thresholdLabel("maxETAMinutes")).toBe("Max ETA minutes");
    expect(thresholdLabel("p95LatencyMs")).toBe("P95 latency ms");
  });
  it("falls back to the key when it has no letters to split", () => {
    expect(thresholdLabel("_")).toBe("_");
  });
});
