import { describe, expect, it } from "vitest";
import { agentLabel, nameOf, namesById } from "./agentNames";

describe("agent names", () => {
  const names = namesById({
    items: [
      { id: "dispatch-v2", name: "Dispatch agent" },
      { id: "rider-eta", name: "rider-eta" },
      { id: "blank", name: "  " },
    ],
  });

  it("names a known agent", () => {
    expect(nameOf(names, "dispatch-v2")).toBe("Dispatch agent");
  });

  it("shows the id alone for an agent the registry does not know", () => {
    expect(nameOf(names, "retired-agent")).toBeNull();
  });

  it("does not repeat an id that is its own name, nor show a blank name", () => {
    expect(nameOf(names, "rider-eta")).toBeNull();
    expect(nameOf(names, "blank")).toBeNull();
  });

  it("labels an agent in plain text by its name with its id, or by its id alone", () => {
    expect(agentLabel(names, "dispatch-v2")).toBe("Dispatch agent (dispatch-v2)");
    expect(agentLabel(names, "rider-eta")).toBe("rider-eta");
    expect(agentLabel(names, "retired-agent")).toBe("retired-agent");
  });

  it("is not fooled by an id that is a property of every object", () => {
    expect(nameOf(names, "constructor")).toBeNull();
    expect(nameOf(names, "toString")).toBeNull();
  });
});
