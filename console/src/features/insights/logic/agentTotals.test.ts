import { describe, expect, it } from "vitest";
import { agentTotals } from "./agentTotals";

describe("agentTotals", () => {
  it("adds runs and failures and averages over every run", () => {
    const totals = agentTotals([
      { runs: 3, failures: 1, avg_ms: 100, last_run_at: "2026-09-29T10:00:00Z" },
      { runs: 1, failures: 0, avg_ms: 500, last_run_at: "2026-09-29T16:00:00+05:30" },
      { runs: 0, failures: 0, avg_ms: null, last_run_at: null },
    ]);
    expect(totals).toEqual({ runs: 4, failures: 1, avgMs: 200, lastRunAt: "2026-09-29T16:00:00+05:30" });
  });
  it("takes the latest instant, not the largest text", () => {
    const totals = agentTotals([
      { runs: 1, failures: 0, avg_ms: 10, last_run_at: "2026-09-29T12:00:00Z" },
      { runs: 1, failures: 0, avg_ms: 10, last_run_at: "2026-09-29T16:00:00+05:30" },
    ]);
    expect(totals.lastRunAt).toBe("2026-09-29T12:00:00Z");
  });
  it("has no average when no agent ran", () => {
    expect(agentTotals([{ runs: 0, failures: 0, avg_ms: null, last_run_at: null }])).toEqual({ runs: 0, failures: 0, avgMs: null, lastRunAt: null });
    expect(agentTotals([]).avgMs).toBeNull();
  });
});
