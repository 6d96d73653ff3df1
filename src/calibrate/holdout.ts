/**
 * The held-out part of a fit's input (docs/calibration.md: "an option holds out part of the input
 * and reports the error on it"). Deterministic: row i is held out when its position in a fixed
 * stride falls in the held-out share, so the same file and fraction always hold out the same
 * rows, spread evenly over the file rather than taken from its end.
 */

export interface HoldoutSplit {
  train: number[];
  holdout: number[];
}

/** Splits row indices 0..n-1; `fraction` in [0, 1) is the share held out (0 = none). */
export function splitHoldout(n: number, fraction: number): HoldoutSplit {
  if (!(fraction >= 0 && fraction < 1)) throw new RangeError(`holdout fraction must be in [0, 1), got ${fraction}`);
  const train: number[] = [];
  const holdout: number[] = [];
  let carried = 0;
  for (let i = 0; i < n; i++) {
    // Bresenham-style: hold out a row each time the running share crosses an integer.
    const before = Math.floor(carried);
    carried += fraction;
    if (Math.floor(carried) > before) holdout.push(i);
    else train.push(i);
  }
  return { train, holdout };
}

export interface ErrorStats {
  n: number;
  rmse: number;
  mae: number;
  /** Mean absolute percentage error over rows whose measured value is not 0. */
  mape: number | null;
  r2: number | null;
}

export function errorStats(measured: readonly number[], fitted: readonly number[]): ErrorStats {
  const n = measured.length;
  if (n === 0) return { n: 0, rmse: NaN, mae: NaN, mape: null, r2: null };
  let se = 0;
  let ae = 0;
  let ape = 0;
  let apeCount = 0;
  let mean = 0;
  for (let i = 0; i < n; i++) mean += measured[i];
  mean /= n;
  let ss = 0;
  for (let i = 0; i < n; i++) {
    const e = fitted[i] - measured[i];
    se += e * e;
    ae += Math.abs(e);
    ss += (measured[i] - mean) ** 2;
    if (measured[i] !== 0) {
      ape += Math.abs(e / measured[i]);
      apeCount++;
    }
  }
  return {
    n,
    rmse: Math.sqrt(se / n),
    mae: ae / n,
    mape: apeCount > 0 ? (ape / apeCount) * 100 : null,
    r2: ss > 0 ? 1 - se / ss : null,
  };
}
