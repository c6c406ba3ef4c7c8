// A Beta posterior of a success rate (a routing model's, a rollout arm's),
// drawn and summarised in the browser from the (alpha, beta) it comes from.

// Lanczos approximation (g = 7, n = 9): log Γ to about 15 significant digits.
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];

export function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
  const z = x - 1;
  let sum = LANCZOS[0] as number;
  for (let i = 1; i < LANCZOS.length; i += 1) sum += (LANCZOS[i] as number) / (z + i);
  const t = z + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(sum);
}

export function betaDensity(x: number, alpha: number, beta: number): number {
  if (x <= 0 || x >= 1) return 0;
  const logB = logGamma(alpha) + logGamma(beta) - logGamma(alpha + beta);
  return Math.exp((alpha - 1) * Math.log(x) + (beta - 1) * Math.log(1 - x) - logB);
}

/** The density sampled at `samples` points strictly inside (0, 1). */
export function densityCurve(alpha: number, beta: number, samples = 200): { x: number; y: number }[] {
  return Array.from({ length: samples }, (_, i) => {
    const x = (i + 0.5) / samples;
    return { x, y: betaDensity(x, alpha, beta) };
  });
}

/** The central interval holding `mass` of the distribution, by integrating the density numerically. */
export function credibleInterval(alpha: number, beta: number, mass = 0.95, samples = 4000): [number, number] {
  const tail = (1 - mass) / 2;
  const step = 1 / samples;
  let total = 0;
  const cumulative: number[] = [];
  for (let i = 0; i < samples; i += 1) {
    total += betaDensity((i + 0.5) * step, alpha, beta) * step;
    cumulative.push(total);
  }
  const at = (p: number) => {
    const index = cumulative.findIndex((value) => value / total >= p);
    return index === -1 ? 1 : (index + 1) * step;
  };
  return [at(tail) - step, at(1 - tail)];
}

/** An SVG path for curves drawn in a `width` × `height` box, shared y scale `maxY`. */
export function curvePath(points: { x: number; y: number }[], width: number, height: number, maxY: number): string {
  return points
    .map((p, i) => `${i === 0 ? "M" : "L"}${(p.x * width).toFixed(1)},${(height - (maxY > 0 ? (p.y / maxY) * height : 0)).toFixed(1)}`)
    .join(" ");
}
