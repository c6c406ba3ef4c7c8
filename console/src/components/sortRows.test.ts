import { describe, expect, it } from "vitest";
import { nextSort, sortFromSearch, sortRows, sortToSearch } from "./sortRows";

type Row = { id: string; runs: number | null; name: string };
const rows: Row[] = [
  { id: "a", runs: 10, name: "agent-10" },
  { id: "b", runs: null, name: "Agent-2" },
  { id: "c", runs: 2, name: "bravo" },
  { id: "d", runs: 10, name: "agent-1" },
  { id: "e", runs: Number.NaN, name: "Éclair" },
];
const ids = (list: Row[]) => list.map((r) => r.id).join("");

describe("sortRows", () => {
  it("orders numbers by size, not as text", () => {
    expect(ids(sortRows(rows, (r) => r.runs, "ascending"))).toBe("cadbe");
    expect(ids(sortRows(rows, (r) => r.runs, "descending"))).toBe("adcbe");
  });
  it("puts missing values last in both directions", () => {
    const asc = sortRows(rows, (r) => r.runs, "ascending");
    const desc = sortRows(rows, (r) => r.runs, "descending");
    expect(asc.slice(-2).map((r) => r.id)).toEqual(["b", "e"]);
    expect(desc.slice(-2).map((r) => r.id)).toEqual(["b", "e"]);
  });
  it("keeps equal rows in the order they came", () => {
    expect(ids(sortRows(rows, (r) => r.runs, "descending")).slice(0, 2)).toBe("ad");
    const reversed = [...rows].reverse();
    expect(ids(sortRows(reversed, (r) => r.runs, "descending")).slice(0, 2)).toBe("da");
  });
  it("orders strings by the locale, ignoring case and reading digits as numbers", () => {
    expect(sortRows(rows, (r) => r.name, "ascending").map((r) => r.name)).toEqual(["agent-1", "Agent-2", "agent-10", "bravo", "Éclair"]);
    expect(sortRows(rows, (r) => r.name, "descending").map((r) => r.name)[0]).toBe("Éclair");
  });
  it("leaves its input alone", () => {
    const before = ids(rows);
    sortRows(rows, (r) => r.runs, "ascending");
    expect(ids(rows)).toBe(before);
  });
});

describe("sort state", () => {
  it("turns the same column around and starts another at its first direction", () => {
    expect(nextSort(null, "runs", "descending")).toEqual({ key: "runs", direction: "descending" });
    expect(nextSort({ key: "runs", direction: "descending" }, "runs", "descending")).toEqual({ key: "runs", direction: "ascending" });
    expect(nextSort({ key: "runs", direction: "ascending" }, "name", "ascending")).toEqual({ key: "name", direction: "ascending" });
  });
  it("round-trips through the URL and ignores an unknown column", () => {
    const keys = ["runs", "name"] as const;
    const sort = { key: "runs", direction: "descending" } as const;
    expect(sortFromSearch(new URLSearchParams(sortToSearch(sort)), keys)).toEqual(sort);
    expect(sortFromSearch(new URLSearchParams("sort=name"), keys)).toEqual({ key: "name", direction: "ascending" });
    expect(sortFromSearch(new URLSearchParams("sort=secret&order=desc"), keys)).toBeNull();
    expect(sortToSearch(null)).toEqual({ sort: "", order: "" });
  });
});
