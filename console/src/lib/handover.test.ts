import { afterEach, describe, expect, it } from "vitest";
import { askOpenTabs, serveOpenTabs, type Serving } from "./handover";

const served: Serving[] = [];
afterEach(() => {
  served.splice(0).forEach((serving) => serving.stop());
});

describe("session handover", () => {
  it("hands an open tab's token to a tab that asks", async () => {
    served.push(serveOpenTabs(() => "tok.en.1", () => undefined));
    expect(await askOpenTabs(500)).toBe("tok.en.1");
  });
  it("hands nothing when no open tab holds a session", async () => {
    served.push(serveOpenTabs(() => null, () => undefined));
    expect(await askOpenTabs(50)).toBeNull();
  });
  it("a sign-out reaches the other tabs", async () => {
    let heard = 0;
    const other = serveOpenTabs(() => "t", () => (heard += 1));
    const here = serveOpenTabs(() => "t", () => undefined);
    served.push(other, here);
    here.signOutEverywhere();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(heard).toBe(1);
  });
});
