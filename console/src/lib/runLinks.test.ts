import { describe, expect, it } from "vitest";
import { insightsRunsPath, runPath } from "./runLinks";

describe("run links", () => {
  it("escape the agent and the task id", () => {
    expect(runPath("DISPATCH_AGENT", "run 7/a")).toBe("/runs/DISPATCH_AGENT/run%207%2Fa");
  });
  it("open the runs an Insights count stands for, over the span it was read", () => {
    const lastWeek = { from: "2026-09-22T10:30:45Z", to: "" };
    const runs = new URLSearchParams(insightsRunsPath("HUB_AGENT", lastWeek).split("?")[1]);
    expect(Object.fromEntries(runs)).toEqual({ agent_id: "HUB_AGENT", from: "2026-09-22T10:30:45Z" });
    const range = { from: "2026-09-20T06:00:00Z", to: "2026-09-21T06:00:00Z" };
    const failures = new URLSearchParams(insightsRunsPath("HUB_AGENT", range, true).split("?")[1]);
    expect(Object.fromEntries(failures)).toEqual({ agent_id: "HUB_AGENT", status: "failed", ...range });
  });
});
