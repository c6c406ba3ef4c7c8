import { describe, expect, it } from "vitest";
import { auditDiff, valueInWords } from "./diff";

describe("auditDiff", () => {
  it("shows only the threshold that changed, under a dotted key", () => {
    expect(auditDiff("thresholds", { stallMinutes: 10, reassignConfidence: 0.7 }, { stallMinutes: 12, reassignConfidence: 0.7 })).toEqual([
      { key: "thresholds.stallMinutes", before: "10", after: "12" },
    ]);
  });
  it("flattens objects nested more than once", () => {
    const before = { change: { thresholds: { stallMinutes: 10 }, model: "a" } };
    const after = { change: { thresholds: { stallMinutes: 15 }, model: "a" } };
    expect(auditDiff("plan", before, after)).toEqual([{ key: "plan.change.thresholds.stallMinutes", before: "10", after: "15" }]);
  });
  it("names a plain value by its field", () => {
    expect(auditDiff("enabled", true, false)).toEqual([{ key: "enabled", before: "true", after: "false" }]);
    expect(auditDiff("model", null, "claude-x")).toEqual([{ key: "model", before: "—", after: "claude-x" }]);
  });
  it("shows added and removed keys against nothing", () => {
    expect(auditDiff("verdict", { outcome: "success" }, { outcome: "failure", reason: "came back" })).toEqual([
      { key: "verdict.outcome", before: "success", after: "failure" },
      { key: "verdict.reason", before: "—", after: "came back" },
    ]);
    expect(auditDiff("thresholds", { a: 1, b: 2 }, { a: 1 })).toEqual([{ key: "thresholds.b", before: "2", after: "—" }]);
  });
  it("keeps a list whole and says nothing for a value that stayed", () => {
    expect(auditDiff("tools", { names: ["a"] }, { names: ["a", "b"] })).toEqual([{ key: "tools.names", before: '["a"]', after: '["a","b"]' }]);
    expect(auditDiff("status", "active", "active")).toEqual([]);
  });
  it("writes an empty text so it can be told from none", () => {
    expect(valueInWords("")).toBe("“”");
    expect(valueInWords(undefined)).toBe("—");
  });
});
