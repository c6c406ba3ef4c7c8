import { describe, expect, it } from "vitest";
import { rowCounter } from "./export";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("rowCounter", () => {
  it("counts CSV rows after the header, a quoted line break inside a row not among them", () => {
    const counter = rowCounter("csv");
    expect(counter.add(bytes('id,reasoning\r\n1,"rider late\r\nrebooked"\r\n2,"said ""ok"""'))).toBe(1);
    expect(counter.add(bytes('\r\n3,plain\r\n'))).toBe(3);
  });
  it("counts JSON Lines by their lines, a chunk boundary anywhere", () => {
    const counter = rowCounter("jsonl");
    expect(counter.add(bytes('{"reason":"a \\"quoted\\" word"}\n{"id"'))).toBe(1);
    expect(counter.add(bytes(':2}\n'))).toBe(2);
  });
});
