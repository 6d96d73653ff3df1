/**
 * Ordinary least squares with non-negative costs (docs/calibration.md): fit with
 * `ml-regression-multivariate-linear`; when a coefficient (or the intercept, which is a cost
 * too) comes out negative, fix the most negative one at 0, say so, and refit the rest. Repeat
 * until every coefficient left is >= 0. Deterministic: the order of the terms breaks ties.
 */
import MultivariateLinearRegression from 'ml-regression-multivariate-linear';

export interface NnlsInput {
  /** One row of feature values per observation. */
  x: readonly (readonly number[])[];
  y: readonly number[];
  names: readonly string[];
  /** Fit a free (but non-negative) intercept; false fixes it at 0. */
  intercept: boolean;
  /** Terms fixed at 0 before fitting (not identifiable from the data), by index. */
  fixedAtZero?: readonly number[];
}

export interface NnlsResult {
  /** Per-feature coefficients, in `names` order (0 for fixed terms). */
  coefficients: number[];
  intercept: number;
  /** Terms fixed at 0 because their unconstrained value came out negative, in drop order. */
  negativeDropped: string[];
  /** Whether the intercept was fixed at 0 because it came out negative. */
  interceptDropped: boolean;
}

function solve(
  x: readonly (readonly number[])[],
  y: readonly number[],
  active: number[],
  intercept: boolean,
): { coef: number[]; b0: number } {
  const n = y.length;
  if (active.length === 0) {
    const b0 = intercept && n > 0 ? y.reduce((s, v) => s + v, 0) / n : 0;
    return { coef: [], b0 };
  }
  const rows = x.map((row) => active.map((index) => row[index]));
  const model = new MultivariateLinearRegression(
    rows,
    y.map((v) => [v]),
    { intercept, statistics: false },
  );
  const coef = active.map((_, k) => model.weights[k][0]);
  const b0 = intercept ? model.weights[active.length][0] : 0;
  return { coef, b0 };
}

export function fitNonNegative(input: NnlsInput): NnlsResult {
  const fixed = new Set(input.fixedAtZero ?? []);
  let active = input.names.map((_, index) => index).filter((index) => !fixed.has(index));
  let intercept = input.intercept;
  const negativeDropped: string[] = [];
  let interceptDropped = false;
  for (;;) {
    const { coef, b0 } = solve(input.x, input.y, active, intercept);
    // Tolerance: a coefficient that is negative only by rounding is 0.
    const scale = Math.max(1e-300, ...input.y.map((v) => Math.abs(v)));
    let worst = -1;
    let worstValue = 0;
    for (let k = 0; k < active.length; k++) {
      const contribution = coef[k] * Math.max(...input.x.map((row) => Math.abs(row[active[k]])), 0);
      if (coef[k] < 0 && contribution < -1e-12 * scale && contribution < worstValue) {
        worst = k;
        worstValue = contribution;
      }
    }
    const interceptNegative = intercept && b0 < -1e-12 * scale;
    if (worst < 0 && !interceptNegative) {
      const coefficients = input.names.map(() => 0);
      active.forEach((index, k) => (coefficients[index] = Math.max(0, coef[k])));
      return { coefficients, intercept: Math.max(0, b0), negativeDropped, interceptDropped };
    }
    if (worst >= 0 && (!interceptNegative || worstValue < -Math.abs(b0))) {
      negativeDropped.push(input.names[active[worst]]);
      active = active.filter((_, k) => k !== worst);
    } else {
      intercept = false;
      interceptDropped = true;
    }
  }
}
