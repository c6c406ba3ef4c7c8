import { describe, expect, it } from "vitest";
import type { Agent } from "../../../api/resources";
import { firstAgentWithSkills, MODEL_CHOICES, modelOptions } from "./agents";

const agent = (id: string, skills: number) => ({ id, skill_count: skills }) as Agent;

describe("firstAgentWithSkills", () => {
  it("skips agents with nothing to configure", () => {
    expect(firstAgentWithSkills([agent("JARVIS", 0), agent("DISPATCH_AGENT", 1), agent("X", 3)])).toBe("DISPATCH_AGENT");
    expect(firstAgentWithSkills([agent("JARVIS", 0)])).toBe("JARVIS");
    expect(firstAgentWithSkills([])).toBeUndefined();
  });
});

describe("modelOptions", () => {
  it("keeps a pin the list does not know, so saving never drops it", () => {
    expect(modelOptions(null)).toEqual(MODEL_CHOICES);
    expect(modelOptions("claude-opus-5-5")).toEqual(MODEL_CHOICES);
    expect(modelOptions("claude-haiku-4-5")).toEqual([...MODEL_CHOICES, "claude-haiku-4-5"]);
  });
});
