import { describe, expect, it } from "vitest";
import { auditDiff, entityPath, filtersFromSearch, filtersToQuery, filtersToSearch, rangeProblem, valueInWords } from "./audit";

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

describe("entityPath", () => {
  const skills = { stall_response: "EXCEPTION_AGENT" };
  it("opens each changed thing where it is shown", () => {
    expect(entityPath("agent", "HUB AGENT", skills)).toBe("/agents/HUB%20AGENT");
    expect(entityPath("skill", "stall_response", skills)).toBe("/agents/EXCEPTION_AGENT");
    expect(entityPath("rollout", "r-1", skills)).toBe("/rollouts/r-1");
    expect(entityPath("decision", "d-1", skills)).toBe("/decisions/d-1");
    expect(entityPath("subject", "BK/1", skills)).toBe("/decisions?subject_id=BK%2F1");
    expect(entityPath("run", "u-1", skills)).toBe("/playground/runs/u-1");
  });
  it("links nothing it cannot place", () => {
    expect(entityPath("skill", "gone", skills)).toBeNull();
    expect(entityPath("tool", "x", skills)).toBeNull();
  });
});

describe("audit filters", () => {
  it("round-trip through the URL, leaving out what is not set", () => {
    const filters = filtersFromSearch(new URLSearchParams("entity=skill&actor=lead%40example.com&from=2026-09-29T10:00"));
    expect(filters).toEqual({ entity: "skill", entity_id: "", actor: "lead@example.com", from: "2026-09-29T10:00", to: "" });
    expect(filtersToSearch(filters, "c")).toEqual({ entity: "skill", actor: "lead@example.com", from: "2026-09-29T10:00", cursor: "c" });
  });
  it("send times as instants and drop an entity the gateway does not know", () => {
    const query = filtersToQuery({ entity: "tool", entity_id: "", actor: "", from: "2026-09-29T10:00", to: "" });
    expect(query.from).toBe(new Date("2026-09-29T10:00").toISOString());
    expect(query.to).toBeUndefined();
    expect(query.entity).toBeUndefined();
  });
  it("refuse a range that ends before it starts", () => {
    const base = { entity: "", entity_id: "", actor: "" };
    expect(rangeProblem({ ...base, from: "2026-09-29T10:00", to: "2026-09-28T10:00" })).toMatch(/later than/);
    expect(rangeProblem({ ...base, from: "2026-09-29T10:00", to: "2026-09-29T10:00" })).toMatch(/later than/);
    expect(rangeProblem({ ...base, from: "2026-09-29T10:00", to: "" })).toBeNull();
  });
});
