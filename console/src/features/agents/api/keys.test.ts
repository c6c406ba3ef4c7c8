import { describe, expect, it } from "vitest";
import { agentKeys, keysChangedByAgentUpdate, keysChangedBySkillCreation, keysChangedBySkillUpdate } from "./keys";

describe("agent keys", () => {
  it("nest under one root so the feature can be dropped whole", () => {
    for (const key of [agentKeys.list(), agentKeys.detail("X"), agentKeys.live(), agentKeys.history("skill", "s"), agentKeys.models("X")]) {
      expect(key[0]).toBe("agents");
    }
  });
  it("a skill update touches that agent and that skill only", () => {
    expect(keysChangedBySkillUpdate("EXCEPTION_AGENT", "stall_response")).toEqual([
      ["agents", "detail", "EXCEPTION_AGENT"],
      ["agents", "history", "skill", "stall_response"],
    ]);
  });
  it("an agent update also refreshes the list, which shows autonomy and model", () => {
    expect(keysChangedByAgentUpdate("EXCEPTION_AGENT")).toEqual([
      ["agents", "list"],
      ["agents", "detail", "EXCEPTION_AGENT"],
      ["agents", "history", "agent", "EXCEPTION_AGENT"],
      ["agents", "models", "EXCEPTION_AGENT"],
    ]);
  });
  it("a new skill refreshes the counts and the agent", () => {
    expect(keysChangedBySkillCreation("CONSOLE_OPS_AGENT")).toEqual([
      ["agents", "list"],
      ["agents", "detail", "CONSOLE_OPS_AGENT"],
    ]);
  });
});
