import { describe, expect, it } from "vitest";
import { decisionsLink, ruleInWords, valueAgainstThreshold } from "./alerts";

describe("valueAgainstThreshold", () => {
  it("writes a drop as percentage points of success", () => {
    expect(valueAgainstThreshold("judged_success_drop", 0.25, 0.1)).toBe("25.0 % (threshold 10.0 %)");
  });
  it("writes silence in seconds", () => {
    expect(valueAgainstThreshold("agent_silent", 3600.4, 1800)).toBe("3600 s (threshold 1800 s)");
  });
});

describe("decisionsLink", () => {
  it("filters the decisions to the alert's agent and type", () => {
    expect(decisionsLink("fleet_watch", "stall_response")).toBe("/decisions?decision_type=stall_response&agent_id=fleet_watch");
  });
  it("is absent for an alert about no decision type", () => {
    expect(decisionsLink("fleet_watch", null)).toBeNull();
  });
});

describe("ruleInWords", () => {
  it("keeps an unknown rule's own name", () => {
    expect(ruleInWords("agent_silent")).toBe("Agent silent");
    expect(ruleInWords("new_rule")).toBe("new_rule");
  });
});
