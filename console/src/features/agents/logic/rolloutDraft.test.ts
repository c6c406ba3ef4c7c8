import { describe, expect, it } from "vitest";
import { emptyRolloutForm, parseSteps, rolloutDraft } from "./rolloutDraft";

describe("parseSteps", () => {
  it("reads the safe default", () => {
    expect(parseSteps("5, 25, 50, 100")).toEqual([5, 25, 50, 100]);
  });
  it("refuses steps that fall, repeat, stop short of 100 or leave the range", () => {
    for (const text of ["25, 5, 100", "5, 5, 100", "5, 50", "0, 100", "5, 100, 150", "5.5, 100", ""]) expect(parseSteps(text)).toBeNull();
  });
});

describe("rolloutDraft", () => {
  it("sends the defaults as the registry's guard settings", () => {
    const { draft, problems } = rolloutDraft("EXCEPTION_AGENT", { model: "m" }, emptyRolloutForm("stall_response"));
    expect(problems).toEqual({});
    expect(draft).toEqual({
      agent_id: "EXCEPTION_AGENT",
      decision_type: "stall_response",
      change: { model: "m" },
      steps: [5, 25, 50, 100],
      guard: { max_drop: 0.05, confidence: 0.95, min_judged: 50 },
    });
  });
  it("names each field at fault and sends nothing", () => {
    const form = { ...emptyRolloutForm("Stall Response"), maxDrop: "1", confidenceLevel: "0.5", minJudged: "2.5", steps: "5, 50" };
    const { draft, problems } = rolloutDraft("A", { model: "m" }, form);
    expect(draft).toBeNull();
    expect(Object.keys(problems).sort()).toEqual(["confidenceLevel", "decisionType", "maxDrop", "minJudged", "steps"]);
  });
});
