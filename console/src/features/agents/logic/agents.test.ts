import { describe, expect, it } from "vitest";
import type { Agent } from "../../../api/resources";
import { agentsMatching, evidenceNote, firstAgentWithSkills, modelIdProblem, routingPath } from "./agents";

const agent = (id: string, skills: number) => ({ id, skill_count: skills }) as Agent;

describe("firstAgentWithSkills", () => {
  it("skips agents with nothing to configure", () => {
    expect(firstAgentWithSkills([agent("JARVIS", 0), agent("DISPATCH_AGENT", 1), agent("X", 3)])).toBe("DISPATCH_AGENT");
    expect(firstAgentWithSkills([agent("JARVIS", 0)])).toBe("JARVIS");
    expect(firstAgentWithSkills([])).toBeUndefined();
  });
});

describe("modelIdProblem", () => {
  it("accepts what the allowed patterns match, as fnmatch does", () => {
    expect(modelIdProblem("claude-haiku-4-5", ["claude-*"])).toBeNull();
    expect(modelIdProblem("house-model-7", ["claude-*", "house-model-?"])).toBeNull();
    expect(modelIdProblem("house-model-77", ["house-model-?"])).toMatch(/only allows models matching house-model-\?/);
    expect(modelIdProblem("m-b", ["m-[abc]"])).toBeNull();
    expect(modelIdProblem("m-d", ["m-[!abc]"])).toBeNull();
    expect(modelIdProblem("m-a", ["m-[!abc]"])).not.toBeNull();
    // A dot in a pattern is a dot, not any character.
    expect(modelIdProblem("gpt-4x1", ["gpt-4.1"])).not.toBeNull();
  });

  it("refuses what the registry refuses before any pattern is tried", () => {
    expect(modelIdProblem("", ["*"])).toBe("Type a model id.");
    expect(modelIdProblem("claude *", ["*"])).toMatch(/letters, digits/);
    expect(modelIdProblem("-claude", ["*"])).toMatch(/starting with a letter/);
  });
});

describe("evidenceNote", () => {
  it("says where a model was seen in words", () => {
    expect(evidenceNote(["decisions", "routing", "telemetry"])).toBe("in its decisions, in routing, in model calls");
    expect(evidenceNote(["pin"])).toBe("pinned now");
  });
});

describe("agentsMatching", () => {
  const named = (id: string, name: string) => ({ id, name }) as Agent;
  const fleet = [named("DISPATCH_AGENT", "Dispatch"), named("EXPRESS_DISPATCH_AGENT", "Express dispatch"), named("CUSTOMER_AGENT", "Customer care")];
  it("finds every word in the name or id, in any case and order", () => {
    expect(agentsMatching(fleet, "dispatch express").map((a) => a.id)).toEqual(["EXPRESS_DISPATCH_AGENT"]);
    expect(agentsMatching(fleet, "CARE").map((a) => a.id)).toEqual(["CUSTOMER_AGENT"]);
    expect(agentsMatching(fleet, "express_dispatch").map((a) => a.id)).toEqual(["EXPRESS_DISPATCH_AGENT"]);
  });
  it("keeps every agent for an empty search and none for a word nobody has", () => {
    expect(agentsMatching(fleet, "  ")).toHaveLength(3);
    expect(agentsMatching(fleet, "rider")).toHaveLength(0);
  });
});

describe("routingPath", () => {
  it("opens an engine agent's routing by decision type and a console agent's by skill", () => {
    expect(routingPath({ runtime: "engine", skills: [{ id: "stall_response" }] })).toBe("/routing?decision_type=stall_response");
    expect(routingPath({ runtime: "console", skills: [{ id: "refund check" }, { id: "other" }] })).toBe("/routing?skill=refund+check");
  });
  it("opens the routing page itself for an agent without skills", () => {
    expect(routingPath({ runtime: "engine", skills: [] })).toBe("/routing");
  });
});
