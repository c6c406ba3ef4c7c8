import { describe, expect, it } from "vitest";
import { isSearchShortcut } from "./shortcuts";

const press = (key: string, target: object | null = { tagName: "BODY" }, mods: Partial<Record<"ctrlKey" | "metaKey" | "altKey", boolean>> = {}) => ({
  key,
  ctrlKey: false,
  metaKey: false,
  altKey: false,
  ...mods,
  target: target as EventTarget | null,
});

describe("isSearchShortcut", () => {
  it("takes a bare slash typed on the page", () => {
    expect(isSearchShortcut(press("/"))).toBe(true);
    expect(isSearchShortcut(press("/", { tagName: "A" }))).toBe(true);
    expect(isSearchShortcut(press("/", null))).toBe(true);
  });
  it("leaves a slash typed into a field to the field", () => {
    for (const tagName of ["INPUT", "TEXTAREA", "SELECT"]) expect(isSearchShortcut(press("/", { tagName }))).toBe(false);
    expect(isSearchShortcut(press("/", { tagName: "DIV", isContentEditable: true }))).toBe(false);
  });
  it("ignores other keys and a slash with a modifier", () => {
    expect(isSearchShortcut(press("?"))).toBe(false);
    expect(isSearchShortcut(press("/", undefined, { ctrlKey: true }))).toBe(false);
    expect(isSearchShortcut(press("/", undefined, { metaKey: true }))).toBe(false);
    expect(isSearchShortcut(press("/", undefined, { altKey: true }))).toBe(false);
  });
});
