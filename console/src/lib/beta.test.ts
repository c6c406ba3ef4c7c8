import { describe, expect, it } from "vitest";
import { betaDensity, credibleInterval, curvePath, densityCurve, logGamma } from "./beta";

describe("logGamma", () => {
  it("matches factorials", () => {
    expect(Math.exp(logGamma(5))).toBeCloseTo(24, 9);
    expect(Math.exp(logGamma(0.5))).toBeCloseTo(Math.sqrt(Math.PI), 9);
  });
});

describe("betaDensity", () => {
  it("is flat for Beta(1, 1) and peaks at the mode otherwise", () => {
    expect(betaDensity(0.3, 1, 1)).toBeCloseTo(1, 9);
    expect(betaDensity(0.5, 2, 2)).toBeCloseTo(1.5, 9);
    expect(betaDensity(0, 2, 2)).toBe(0);
    const curve = densityCurve(9, 3, 100);
    const mode = curve.reduce((best, p) => (p.y > best.y ? p : best));
    expect(mode.x).toBeCloseTo(0.8, 1);
  });
  it("integrates to one", () => {
    const curve = densityCurve(30.5, 12.25, 2000);
    expect(curve.reduce((sum, p) => sum + p.y / 2000, 0)).toBeCloseTo(1, 4);
  });
});

describe("credibleInterval", () => {
  it("gives the central 95 %", () => {
    const [low, high] = credibleInterval(1, 1);
    expect(low).toBeCloseTo(0.025, 3);
    expect(high).toBeCloseTo(0.975, 3);
    // Beta(2, 2): quantiles 0.0943 and 0.9057.
    const [a, b] = credibleInterval(2, 2);
    expect(a).toBeCloseTo(0.0943, 3);
    expect(b).toBeCloseTo(0.9057, 3);
  });
  it("narrows as evidence grows", () => {
    const [a, b] = credibleInterval(3, 2);
    const [c, d] = credibleInterval(300, 200);
    expect(d - c).toBeLessThan((b - a) / 5);
  });
});

describe("curvePath", () => {
  it("maps the unit square onto the box", () => {
    expect(curvePath([{ x: 0, y: 0 }, { x: 1, y: 2 }], 100, 50, 2)).toBe("M0.0,50.0 L100.0,0.0");
  });
});
