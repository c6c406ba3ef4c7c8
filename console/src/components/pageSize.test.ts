import { describe, expect, it } from "vitest";
import { listRefresh, pageSizeFromSearch, pageSizeToSearch } from "./pageSize";

describe("page size", () => {
  it("reads an offered size from the URL and falls back to the listing's default", () => {
    expect(pageSizeFromSearch(new URLSearchParams("limit=100"), 25)).toBe(100);
    expect(pageSizeFromSearch(new URLSearchParams("limit=200"), 50)).toBe(200);
    expect(pageSizeFromSearch(new URLSearchParams(""), 50)).toBe(50);
    expect(pageSizeFromSearch(new URLSearchParams("limit=500"), 25)).toBe(25);
    expect(pageSizeFromSearch(new URLSearchParams("limit=abc"), 25)).toBe(25);
  });
  it("writes only a size other than the default, and reads back what it wrote", () => {
    expect(pageSizeToSearch(25, 25)).toEqual({ limit: "" });
    expect(pageSizeToSearch(100, 25)).toEqual({ limit: "100" });
    expect(pageSizeFromSearch(new URLSearchParams(pageSizeToSearch(100, 25)), 25)).toBe(100);
  });
});

describe("listRefresh", () => {
  it("reads the first page again every half minute and a page further back never", () => {
    expect(listRefresh("")).toBe(30_000);
    expect(listRefresh("eyJhIjoxfQ")).toBe(false);
  });
});
