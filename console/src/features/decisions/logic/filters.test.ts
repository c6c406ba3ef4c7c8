import { describe, expect, it } from "vitest";
import { activeFilterCount, isDecisionId, filtersFromSearch, filtersToQuery, filtersToSearch, presetRange, RANGE_PRESETS, subjectListPath } from "./filters";

describe("decision filters", () => {
  it("round-trip through the URL", () => {
    const filters = filtersFromSearch(new URLSearchParams("decision_type=stall_response&outcome=pending&from=2026-09-29T10:00:00Z"));
    expect(filters).toEqual({ decision_type: "stall_response", agent_id: "", subject_id: "", outcome: "pending", model: "", from: "2026-09-29T10:00:00Z", to: "" });
    expect(filtersToSearch(filters, "abc")).toMatchObject({ decision_type: "stall_response", cursor: "abc" });
    expect(activeFilterCount(filters)).toBe(3);
  });
  it("send times as instants, and no bound when a time is empty", () => {
    const query = filtersToQuery({ decision_type: "", agent_id: "", outcome: "", model: "m", from: "2026-09-29T10:00:00Z", to: "", subject_id: "BK-1" });
    expect(query.decided_from).toBe("2026-09-29T10:00:00Z");
    expect(query.decided_to).toBeUndefined();
    expect(query.model_contains).toBe("m");
    expect(query.subject_id).toBe("BK-1");
  });
  it("read the window Insights links with as the lower bound", () => {
    const filters = filtersFromSearch(new URLSearchParams("decision_type=stall_response&outcome=failure&from=2026-09-22T15:30:00%2B05:30"));
    expect(filters).toMatchObject({ decision_type: "stall_response", outcome: "failure" });
    expect(filtersToQuery(filters).decided_from).toBe("2026-09-22T10:00:00Z");
  });
  it("read a link's wall time without an offset as the browser's, as such links meant", () => {
    const filters = filtersFromSearch(new URLSearchParams("from=2026-09-22T10:00"));
    expect(filters.from).toBe(new Date(2026, 8, 22, 10, 0).toISOString().replace(".000", ""));
    expect(filtersFromSearch(new URLSearchParams("from=yesterday")).from).toBe("");
  });
  it("open one subject's decisions", () => {
    const path = new URL(subjectListPath("BK 1/2"), "http://console");
    expect(filtersFromSearch(path.searchParams).subject_id).toBe("BK 1/2");
  });
});

describe("subject search", () => {
  it("keeps the subject in the URL and sends it trimmed", () => {
    const filters = filtersFromSearch(new URLSearchParams("subject_id=booking-4711"));
    expect(filters.subject_id).toBe("booking-4711");
    expect(activeFilterCount(filters)).toBe(1);
    expect(filtersToQuery({ ...filters, subject_id: "  booking-4711 " }).subject_id).toBe("booking-4711");
  });
});

describe("presetRange", () => {
  it("reaches back the preset's hours from now and leaves the top open", () => {
    const now = new Date("2026-09-29T10:30:00").getTime();
    for (const preset of RANGE_PRESETS) {
      const range = presetRange(preset.hours, now);
      expect(now - new Date(range.from).getTime()).toBe(preset.hours * 3_600_000);
      expect(range.to).toBe("");
    }
  });
});

describe("isDecisionId", () => {
  it("takes a UUID and nothing else", () => {
    expect(isDecisionId("795b0262-887a-468b-8d07-e1e403180cae")).toBe(true);
    expect(isDecisionId("not-a-uuid")).toBe(false);
    expect(isDecisionId("795b0262-887a-468b-8d07-e1e403180cae0")).toBe(false);
  });
});
