import { describe, expect, it } from "vitest";
import { applyEvent, explainFailure, IDLE, promptBudget, runEnding, startRun } from "./trace";

describe("promptBudget", () => {
  it("counts characters as the server does", () => {
    expect(promptBudget("hello")).toEqual({ used: 5, left: 1995, over: false });
    expect(promptBudget("🚚".repeat(2000)).over).toBe(false);
    expect(promptBudget("x".repeat(2001))).toEqual({ used: 2001, left: -1, over: true });
  });
});

describe("applyEvent", () => {
  const step = { turn: 1, tool: "get_booking_cache", input: {}, outcome: "executed", reason: "", result: "{}", error: null, proposal: null, ms: 3 };
  it("builds the trace step by step", () => {
    let state = startRun();
    state = applyEvent(state, "started", { id: "r1", agent_id: "A", skill_id: "s", model: "m" });
    state = applyEvent(state, "step", step);
    expect(state.status).toBe("running");
    expect(state.steps).toHaveLength(1);
    state = applyEvent(state, "step", { ...step, tool: "notify_customer", outcome: "proposed" });
    state = applyEvent(state, "done", { id: "r1", steps: [step, { ...step, outcome: "proposed" }] });
    expect(state.status).toBe("done");
    expect(state.steps.map((s) => s.outcome)).toEqual(["executed", "proposed"]);
  });
  it("ends on an error event with the gateway's envelope", () => {
    const state = applyEvent(startRun(), "error", { error: { code: "UNAVAILABLE", message: "model down", details: {} } });
    expect(state).toMatchObject({ status: "failed", error: { code: "UNAVAILABLE" } });
    expect(applyEvent(IDLE, "ping", {})).toBe(IDLE);
  });
});

describe("explainFailure", () => {
  it("says plainly what 503 and 429 mean", () => {
    expect(explainFailure({ code: "PLAYGROUND_NOT_CONFIGURED", message: "x", details: {} })).toMatch(/not configured/);
    expect(explainFailure({ code: "RATE_LIMITED", message: "at most 10 runs.", details: { retry_after_s: 90 } })).toBe(
      "Rate limit reached: at most 10 runs. Try again in 2 min.",
    );
  });
});

describe("runEnding", () => {
  it("says plainly when a run did not end on its own", () => {
    expect(runEnding({ status: "finished", stop_reason: "end_turn" })).toMatchObject({ label: "finished", tone: "finished" });
    expect(runEnding({ status: "finished", stop_reason: "max_tokens" })).toMatchObject({ label: "max_tokens", tone: "finished" });
    expect(runEnding({ status: "running", stop_reason: "" })).toMatchObject({ label: "running", tone: "running" });
    for (const stop_reason of ["cancelled", "deadline", "error", "turn_limit"]) {
      const ending = runEnding({ status: "finished", stop_reason });
      expect(ending.tone).toBe("early");
      expect(ending.explanation).not.toBeNull();
    }
    expect(runEnding({ status: "finished", stop_reason: "cancelled" }).explanation).toMatch(/closed its stream/);
    expect(runEnding({ status: "interrupted", stop_reason: "interrupted" })).toMatchObject({ label: "interrupted", tone: "early" });
  });
});
