import { describe, expect, it } from "vitest";
import { draftProblems, emptyDraft } from "./newSkill";

describe("draftProblems", () => {
  it("asks for an id, a title and a tool", () => {
    expect(Object.keys(draftProblems(emptyDraft("CONSOLE_OPS_AGENT")))).toEqual(["id", "title", "tool_names"]);
  });
  it("holds the id to the registry's pattern", () => {
    const base = { ...emptyDraft("A"), title: "T", tool_names: ["scan_bookings"] };
    expect(draftProblems({ ...base, id: "late_pickups" })).toEqual({});
    expect(draftProblems({ ...base, id: "Late-Pickups" }).id).toMatch(/snake_case/);
    expect(draftProblems({ ...base, id: "double__underscore" }).id).toMatch(/snake_case/);
    expect(draftProblems({ ...base, id: "x".repeat(65) }).id).toMatch(/at most 64/);
  });
});
