import { describe, expect, it } from "vitest";
import { entityPath, filtersFromSearch, filtersToQuery, filtersToSearch, rangeProblem } from "./audit";

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
    const filters = filtersFromSearch(new URLSearchParams("entity=skill&actor=lead%40example.com&from=2026-09-29T10:00:00Z"));
    expect(filters).toEqual({ entity: "skill", entity_id: "", actor: "lead@example.com", from: "2026-09-29T10:00:00Z", to: "" });
    expect(filtersToSearch(filters, "c")).toEqual({ entity: "skill", actor: "lead@example.com", from: "2026-09-29T10:00:00Z", cursor: "c" });
  });
  it("send times as instants and drop an entity the gateway does not know", () => {
    const query = filtersToQuery({ entity: "tool", entity_id: "", actor: "", from: "2026-09-29T10:00:00Z", to: "" });
    expect(query.from).toBe("2026-09-29T10:00:00Z");
    expect(query.to).toBeUndefined();
    expect(query.entity).toBeUndefined();
  });
  it("refuse a range that ends before it starts", () => {
    const base = { entity: "", entity_id: "", actor: "" };
    expect(rangeProblem({ ...base, from: "2026-09-29T10:00:00Z", to: "2026-09-28T10:00:00Z" })).toMatch(/later than/);
    expect(rangeProblem({ ...base, from: "2026-09-29T10:00:00Z", to: "2026-09-29T10:00:00Z" })).toMatch(/later than/);
    // Compared as instants, not as text: 12:00 in Kolkata is 06:30 UTC.
    expect(rangeProblem({ ...base, from: "2026-09-29T10:00:00Z", to: "2026-09-29T12:00:00+05:30" })).toMatch(/later than/);
    expect(rangeProblem({ ...base, from: "2026-09-29T10:00:00Z", to: "" })).toBeNull();
  });
});
