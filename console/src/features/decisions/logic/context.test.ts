import { describe, expect, it } from "vitest";
import { redactionNote } from "./context";

describe("redaction note", () => {
  it("counts each kind in words, in a stable order", () => {
    expect(redactionNote({ phone: 2, person: 1, email: 1 }, false)).toBe(
      "Replaced: 1 e-mail address, 1 name, 2 phone numbers.",
    );
  });

  it("names a kind it has no words for by its own name", () => {
    expect(redactionNote({ aadhaar: 1, vehicle_plate: 3 }, false)).toBe("Replaced: 1 aadhaar, 3 vehicle plate.");
  });

  it("says when nothing was replaced", () => {
    expect(redactionNote({}, false)).toBe("Nothing in it reads as personal data: nothing was replaced.");
    expect(redactionNote({ phone: 0 }, false)).toBe("Nothing in it reads as personal data: nothing was replaced.");
  });

  it("says an erased context is gone, whatever the counts", () => {
    expect(redactionNote({ phone: 1 }, true)).toMatch(/erased/);
  });
});
