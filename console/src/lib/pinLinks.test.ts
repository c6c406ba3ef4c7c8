import { describe, expect, it } from "vitest";
import { pinAsked, pinPath } from "./pinLinks";

describe("pin links", () => {
  it("open the agent's studio with the model asked for, both escaped", () => {
    const path = pinPath("EXPRESS DISPATCH", "claude-sonnet-4-5@2026/10");
    expect(path).toBe("/agents/EXPRESS%20DISPATCH?pin=claude-sonnet-4-5%402026%2F10");
    expect(pinAsked(new URLSearchParams(path.split("?")[1]))).toBe("claude-sonnet-4-5@2026/10");
    expect(pinAsked(new URLSearchParams(""))).toBe("");
  });
});
