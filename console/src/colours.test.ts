// Dark mode works only while every colour is a variable that the scheme sets:
// a colour written into a rule or a component stays light in the dark. The
// top bar is dark in both schemes and keeps its own colours.
import { describe, expect, it } from "vitest";
import styles from "./styles.css?raw";

const sources = import.meta.glob<string>(["./**/*.tsx", "./**/*.ts", "!./**/*.test.ts", "!./api/schema.d.ts"], {
  query: "?raw",
  import: "default",
  eager: true,
});

const HEX = /#[0-9a-fA-F]{3,8}\b/;
// Rules whose colours are the same in both schemes, on purpose.
const SCHEME_FREE = [/^\.topbar\b/, /^\.who-role\b/, /^\.switch-thumb\b/];

/** Each rule outside the :root blocks, as "selector { body }", one per line. */
function rules(css: string): string[] {
  const withoutRoots = css.replace(/:root\s*\{[^}]*\}/g, "").replace(/\/\*[\s\S]*?\*\//g, "");
  return [...withoutRoots.matchAll(/([^{}]+)\{([^{}]*)\}/g)].map((match) => `${(match[1] ?? "").trim()} { ${(match[2] ?? "").trim()} }`);
}

describe("colours", () => {
  it("are variables in every stylesheet rule but the top bar's", () => {
    const written = rules(styles).filter((rule) => HEX.test(rule) && !SCHEME_FREE.some((free) => free.test(rule)));
    expect(written).toEqual([]);
  });
  it("are never written into a component", () => {
    const written = Object.entries(sources).filter(([, text]) => HEX.test(text.replace(/&#\d+;/g, ""))).map(([path]) => path);
    expect(written).toEqual([]);
  });
  it("would be found if they were", () => {
    expect(rules(".chart .axis { stroke: #8a96a8; }").filter((rule) => HEX.test(rule))).toHaveLength(1);
  });
});
