import { describe, expect, it } from "vitest";
import { sseParser } from "./sse";

describe("sseParser", () => {
  it("returns events as they complete, across chunk boundaries", () => {
    const feed = sseParser();
    expect(feed('event: started\ndata: {"id":')).toEqual([]);
    expect(feed('"r1"}\n\nevent: step\ndata: {"tool":"a"}\n\n')).toEqual([
      { event: "started", data: '{"id":"r1"}' },
      { event: "step", data: '{"tool":"a"}' },
    ]);
    expect(feed("event: done\r\ndata: {}\r\n\r\n")).toEqual([{ event: "done", data: "{}" }]);
  });
  it("joins multi-line data and skips comments", () => {
    const feed = sseParser();
    expect(feed(": keep-alive\n\ndata: one\ndata: two\n\n")).toEqual([{ event: "message", data: "one\ntwo" }]);
  });
});
