import { describe, expect, it } from "vitest";
import { rangeFrom, readSpan, windowKey, windowOf, windowQuery, withWindow } from "./window";

const search = (text: string) => new URLSearchParams(text);

describe("the Insights window", () => {
  it("is a preset from days, 24 h when unset or not offered", () => {
    expect(windowOf(search("days=7"))).toEqual({ kind: "days", days: 7 });
    expect(windowOf(search(""))).toEqual({ kind: "days", days: 1 });
    expect(windowOf(search("days=12"))).toEqual({ kind: "days", days: 1 });
  });

  it("is a range once the URL names a start, kept as instants", () => {
    expect(windowOf(search("from=2026-09-20T08:00:00%2B02:00&to=2026-09-21T08:00:00Z&days=7"))).toEqual({
      kind: "range",
      from: "2026-09-20T06:00:00Z",
      to: "2026-09-21T08:00:00Z",
    });
    expect(windowOf(search("from=2026-09-20T06:00:00Z"))).toEqual({ kind: "range", from: "2026-09-20T06:00:00Z", to: "" });
    expect(windowOf(search("from=yesterday&days=30"))).toEqual({ kind: "days", days: 30 });
  });

  it("replaces whichever window the URL held and keeps the rest", () => {
    const range = { kind: "range", from: "2026-09-20T06:00:00Z", to: "2026-09-21T06:00:00Z" } as const;
    expect(withWindow(search("days=7&agent=HUB_AGENT"), range)).toEqual({ agent: "HUB_AGENT", from: range.from, to: range.to });
    expect(withWindow(search("from=a&to=b&judged_type=x"), { kind: "days", days: 30 })).toEqual({ judged_type: "x", days: "30" });
    expect(withWindow(search(""), { kind: "range", from: range.from, to: "" })).toEqual({ from: range.from });
  });

  it("asks the gateway for days or for the range, and keys them apart", () => {
    expect(windowQuery({ kind: "days", days: 7 })).toEqual({ days: 7 });
    expect(windowQuery({ kind: "range", from: "A", to: "" })).toEqual({ from: "A" });
    expect(windowKey({ kind: "days", days: 7 })).not.toBe(windowKey({ kind: "range", from: "A", to: "" }));
  });

  it("hands lists the span read: a range to its end, the last N days on to now", () => {
    const start = "2026-09-22T10:30:45.123456+00:00";
    const end = "2026-09-29T10:30:45.123456+00:00";
    expect(readSpan({ kind: "days", days: 7 }, start, end)).toEqual({ from: "2026-09-22T10:30:45Z", to: "" });
    expect(readSpan({ kind: "range", from: "x", to: "y" }, start, end)).toEqual({
      from: "2026-09-22T10:30:45Z",
      to: "2026-09-29T10:30:45Z",
    });
  });

  it("opens a range on the span just read, to the minute", () => {
    const now = Date.UTC(2026, 8, 29, 10, 30, 45);
    expect(rangeFrom({ from: "2026-09-22T10:30:45Z", to: "" }, now)).toEqual({
      kind: "range",
      from: "2026-09-22T10:30:00Z",
      to: "2026-09-29T10:30:00Z",
    });
  });
});
