import { describe, expect, it } from "vitest";
import { activeFilterCount, filtersFromSearch, filtersToQuery, filtersToSearch } from "./filters";

describe("run filters", () => {
  it("round-trip through the URL", () => {
    const filters = filtersFromSearch(new URLSearchParams("agent_id=DISPATCH_AGENT&status=failed&from=2026-09-29T10:00:00Z"));
    expect(filters).toEqual({ agent_id: "DISPATCH_AGENT", status: "failed", task_type: "", from: "2026-09-29T10:00:00Z", to: "", order: "" });
    expect(filtersToSearch(filters, "abc")).toMatchObject({ agent_id: "DISPATCH_AGENT", cursor: "abc" });
    expect(activeFilterCount(filters)).toBe(3);
  });
  it("send times as instants, no bound for an empty time, and no status the gateway would refuse", () => {
    const query = filtersToQuery({ agent_id: "", status: "done", task_type: "sweep", from: "2026-09-29T10:00:00Z", to: "", order: "" });
    expect(query.from).toBe("2026-09-29T10:00:00Z");
    expect(query.to).toBeUndefined();
    expect(query.status).toBeUndefined();
    expect(filtersToQuery({ agent_id: "", status: "failed", task_type: "", from: "", to: "", order: "" }).status).toBe("failed");
  });
  it("keep the order apart from the filters: asked of the gateway, not counted, anything else newest first", () => {
    const slowest = filtersFromSearch(new URLSearchParams("order=slowest&agent_id=HUB_AGENT"));
    expect(filtersToQuery(slowest).order).toBe("slowest");
    expect(activeFilterCount(slowest)).toBe(1);
    expect(filtersFromSearch(new URLSearchParams("order=fastest")).order).toBe("");
    expect(filtersToQuery(filtersFromSearch(new URLSearchParams(""))).order).toBeUndefined();
  });
});
