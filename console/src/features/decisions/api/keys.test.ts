import { describe, expect, it } from "vitest";
import { decisionKeys, keysChangedByRejudge } from "./keys";

describe("decision keys", () => {
  it("a re-judge refreshes that decision and every listing, nothing else", () => {
    expect(keysChangedByRejudge("d-1")).toEqual([
      ["decisions", "detail", "d-1"],
      ["decisions", "list"],
    ]);
  });
  it("every listing sits under the lists prefix, so one invalidation reaches them all", () => {
    const filters = { decision_type: "x", agent_id: "", subject_id: "", outcome: "", model: "", from: "", to: "" };
    expect(decisionKeys.list(filters, "c", 25).slice(0, 2)).toEqual([...decisionKeys.lists()]);
  });
  it("a re-judge never reads a context again: each read is an audit row", () => {
    const context = decisionKeys.context("d-1");
    for (const key of keysChangedByRejudge("d-1")) {
      expect(context.slice(0, key.length)).not.toEqual([...key]);
    }
  });
});
