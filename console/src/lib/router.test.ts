import { describe, expect, it } from "vitest";
import { consolePath, matchRoute } from "./router";

describe("matchRoute", () => {
  it("matches fixed and named segments", () => {
    expect(matchRoute("/agents", "/agents")).toEqual({});
    expect(matchRoute("/agents/:id", "/agents/EXCEPTION_AGENT")).toEqual({ id: "EXCEPTION_AGENT" });
    expect(matchRoute("/subjects/:id", "/subjects/BK%2F1042")).toEqual({ id: "BK/1042" });
    expect(matchRoute("/agents/:id", "/agents")).toBeNull();
    expect(matchRoute("/agents/:id", "/decisions/x")).toBeNull();
    expect(matchRoute("/agents/:id", "/agents/%E0%A4%A")).toBeNull();
  });
  it("strips the console prefix", () => {
    expect(consolePath("/console/agents/X")).toBe("/agents/X");
    expect(consolePath("/console")).toBe("/");
    expect(consolePath("/console/")).toBe("/");
  });
});
