import { describe, expect, it } from "vitest";
import { insightsRunsPath, runPath } from "./runLinks";

describe("run links", () => {
  it("escape the agent and the task id", () => {
    expect(runPath("DISPATCH_AGENT", "run 7/a")).toBe("/runs/DISPATCH_AGENT/run%207%2Fa");
  });
  it("open the runs an Insights count stands for, from the window's start", () => {
    const now = Date.UTC(2026, 8, 29, 10, 30, 45);
    const runs = new URLSearchParams(insightsRunsPath("HUB_AGENT", 7, now).split("?")[1]);
    expect(Object.fromEntries(runs)).toEqual({ agent_id: "HUB_AGENT", from: "2026-09-22T10:30:00Z" });
    const failures = new URLSearchParams(insightsRunsPath("HUB_AGENT", 1, now, true).split("?")[1]);
    expect(Object.fromEntries(failures)).toEqual({ agent_id: "HUB_AGENT", status: "failed", from: "2026-09-28T10:30:00Z" });
  });
});
