/**
 * One linear cost model fitted to measured rows (docs/calibration.md): `y = base + sum_k c_k x_k`
 * with every cost >= 0 (`nnls.ts`). Reports each coefficient in its own unit, n, RMSE, MAE,
 * R^2, the residuals by input bucket, and, when asked, the error on held-out rows. A term whose
 * feature barely varies over the rows cannot be told apart from the base: it is left out and
 * the output says so (rather than printing a slope fitted to noise).
 */
import { errorStats, splitHoldout, type ErrorStats } from './holdout.js';
import { fitNonNegative } from './nnls.js';

export interface FitRow {
  /** Feature values, one per term. */
  x: number[];
  y: number;
  /** Label of the input bucket the residual tables group by (e.g. `outputs 1-4`). */
  bucket: string;
  /** Where the row came from (`file:line`), for the residual file. */
  source: string;
}

export interface LinearTerm {
  /** Coefficient name as the run config spells it (`per_output_us`). */
  name: string;
  unit: string;
  /** Coefficient value in its unit = (fitted y-units per feature unit) x `toUnit`. */
  toUnit: number;
  /** What the feature is, for messages (`output tokens`). */
  feature: string;
}

export interface LinearModelSpec {
  /** The intercept's name and unit (`base_ms`, `ms`); its y-unit is the coefficient's unit. */
  base: { name: string; unit: string };
  terms: LinearTerm[];
  yName: string;
  yUnit: string;
  /** A term whose feature's (max - min) / mean is below this is not identifiable (default 0.1). */
  minRelativeSpread?: number;
}

export type CoefficientStatus = 'fitted' | 'negative: fixed at 0' | 'not identifiable: fixed at 0';

export interface FittedCoefficient {
  value: number;
  unit: string;
  status: CoefficientStatus;
}

export interface BucketResidual {
  bucket: string;
  n: number;
  /** Mean of fitted - measured. */
  mean_residual: number;
  rmse: number;
  mae: number;
}

export interface LinearFit {
  coefficients: Record<string, FittedCoefficient>;
  /** Fit statistics on the rows used to fit. */
  n: number;
  rmse: number;
  mae: number;
  r2: number | null;
  y: { name: string; unit: string };
  holdout: (ErrorStats & { fraction: number }) | null;
  residuals_by_bucket: BucketResidual[];
  notes: string[];
  /**
   * Why the fit cannot be trusted (fewer rows than constants, features that are linear
   * combinations of each other); empty when it can. Callers refuse such a fit unless forced.
   */
  untrusted: string[];
  /** Every row with its fit and whether it was held out (for residual files and charts). */
  rows: Array<{ source: string; bucket: string; x: number[]; measured: number; fitted: number; heldOut: boolean }>;
}

export interface FitOptions {
  /** Share of rows held out and scored, in [0, 1). */
  holdout?: number;
  /** The input column of each term's feature, to name in messages (the term's feature otherwise). */
  columns?: readonly string[];
}

/**
 * The first of `columns` (in order; null stands for the constant) that is a linear combination of
 * the ones before it over `rows`, with the ones it combines; null when they are independent.
 * Modified Gram-Schmidt on the columns scaled to unit length, with a relative tolerance.
 */
export function dependentColumn(
  rows: readonly (readonly number[])[],
  columns: ReadonlyArray<number | null>,
): { column: number | null; of: Array<number | null> } | null {
  const basis: Array<{ vector: number[]; column: number | null }> = [];
  for (const column of columns) {
    const v = rows.map((row) => (column === null ? 1 : row[column]));
    const norm = Math.hypot(...v);
    if (norm === 0) continue;
    const u = v.map((value) => value / norm);
    const of: Array<number | null> = [];
    for (const b of basis) {
      let dot = 0;
      for (let i = 0; i < u.length; i++) dot += u[i] * b.vector[i];
      if (Math.abs(dot) > 1e-6) of.push(b.column);
      for (let i = 0; i < u.length; i++) u[i] -= dot * b.vector[i];
    }
    const rest = Math.hypot(...u);
    if (rest < 1e-9) return { column, of };
    basis.push({ vector: u.map((value) => value / rest), column });
  }
  return null;
}

function relativeSpread(values: readonly number[]): number {
  if (values.length === 0) return 0;
  let min = Infinity;
  let max = -Infinity;
  let sum = 0;
  for (const v of values) {
    min = Math.min(min, v);
    max = Math.max(max, v);
    sum += v;
  }
  const mean = sum / values.length;
  if (max === min) return 0;
  return mean > 0 ? (max - min) / mean : Infinity;
}

function format(value: number): string {
  return Number(value.toPrecision(4)).toString();
}

/** The model's prediction for one row from coefficients in their units. */
export function predictLinear(spec: LinearModelSpec, coefficients: Record<string, FittedCoefficient>, x: readonly number[]): number {
  let y = coefficients[spec.base.name].value;
  spec.terms.forEach((term, k) => (y += (coefficients[term.name].value / term.toUnit) * x[k]));
  return y;
}

export function fitLinearModel(spec: LinearModelSpec, rows: readonly FitRow[], options: FitOptions = {}): LinearFit {
  const fraction = options.holdout ?? 0;
  if (rows.length === 0) throw new Error(`no rows to fit ${spec.yName} on`);
  const split = splitHoldout(rows.length, fraction);
  const train = split.train.map((i) => rows[i]);
  if (train.length === 0) throw new Error('every row is held out; lower --holdout');
  const notes: string[] = [];
  const minSpread = spec.minRelativeSpread ?? 0.1;
  const fixedAtZero: number[] = [];
  spec.terms.forEach((term, k) => {
    const values = train.map((row) => row.x[k]);
    const spread = relativeSpread(values);
    const allZero = values.every((v) => v === 0);
    if (!allZero && spread < minSpread) {
      fixedAtZero.push(k);
      notes.push(
        `${term.name} is not identifiable: ${term.feature} barely vary over the rows (${format(Math.min(...values))} to ${format(Math.max(...values))}), ` +
          `so a slope cannot be told apart from ${spec.base.name}; fitted ${spec.base.name} alone and fixed ${term.name} at 0`,
      );
    } else if (allZero) {
      fixedAtZero.push(k);
      notes.push(`${term.name} is not identifiable: ${term.feature} are 0 in every row; fixed at 0`);
    }
  });
  const fit = fitNonNegative({
    x: train.map((row) => row.x),
    y: train.map((row) => row.y),
    names: spec.terms.map((term) => term.name),
    intercept: true,
    fixedAtZero,
  });
  for (const name of fit.negativeDropped) notes.push(`${name} came out negative; fixed at 0 and the other coefficients refitted`);

  // A fit with fewer rows than constants, or with features the rows cannot tell apart, returns
  // coefficients all the same (a perfect "fit" of one row): say why it cannot be trusted.
  const untrusted: string[] = [];
  const freeTerms = spec.terms.map((_, k) => k).filter((k) => !fixedAtZero.includes(k));
  const constants = [spec.base.name, ...freeTerms.map((k) => spec.terms[k].name)];
  if (train.length <= constants.length) {
    untrusted.push(
      `fitted on ${train.length} row${train.length === 1 ? '' : 's'} for ${constants.length} constants (${constants.join(', ')}): ` +
        'with no more rows than constants any values fit exactly, and nothing checks them',
    );
  } else {
    const columnName = (k: number | null) => (k === null ? 'a constant' : (options.columns?.[k] ?? spec.terms[k].feature));
    const dependent = dependentColumn(
      train.map((row) => row.x),
      [null, ...freeTerms],
    );
    if (dependent !== null) {
      untrusted.push(
        `${columnName(dependent.column)} is a linear combination of ${dependent.of.map(columnName).join(' and ')} in every row` +
          ' (duplicated or proportional columns): the fit cannot tell their costs apart',
      );
    }
  }
  if (fit.interceptDropped) notes.push(`${spec.base.name} came out negative; fixed at 0 and the other coefficients refitted`);

  const coefficients: Record<string, FittedCoefficient> = {
    [spec.base.name]: { value: fit.intercept, unit: spec.base.unit, status: fit.interceptDropped ? 'negative: fixed at 0' : 'fitted' },
  };
  spec.terms.forEach((term, k) => {
    const status: CoefficientStatus = fixedAtZero.includes(k)
      ? 'not identifiable: fixed at 0'
      : fit.negativeDropped.includes(term.name)
        ? 'negative: fixed at 0'
        : 'fitted';
    coefficients[term.name] = { value: fit.coefficients[k] * term.toUnit, unit: term.unit, status };
  });

  const heldOut = new Set(split.holdout);
  const out = rows.map((row, i) => ({
    source: row.source,
    bucket: row.bucket,
    x: row.x,
    measured: row.y,
    fitted: predictLinear(spec, coefficients, row.x),
    heldOut: heldOut.has(i),
  }));
  const used = out.filter((row) => !row.heldOut);
  const stats = errorStats(
    used.map((row) => row.measured),
    used.map((row) => row.fitted),
  );
  const held = out.filter((row) => row.heldOut);
  const buckets = new Map<string, typeof out>();
  for (const row of used) {
    const list = buckets.get(row.bucket) ?? [];
    list.push(row);
    buckets.set(row.bucket, list);
  }
  const bucketOrder = (label: string): number => Number(/\d+(\.\d+)?/.exec(label)?.[0] ?? Infinity);
  const ordered = [...buckets.entries()].sort((a, b) => bucketOrder(a[0]) - bucketOrder(b[0]) || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const residuals_by_bucket: BucketResidual[] = ordered.map(([bucket, list]) => {
    const s = errorStats(
      list.map((row) => row.measured),
      list.map((row) => row.fitted),
    );
    const mean = list.reduce((sum, row) => sum + (row.fitted - row.measured), 0) / list.length;
    // Least squares leaves the residuals of an intercept-only bucket summing to 0 up to rounding
    // (3.8e-17 ms): below a billionth of the bucket's RMSE, the mean is 0.
    return { bucket, n: list.length, mean_residual: Math.abs(mean) <= 1e-9 * s.rmse ? 0 : mean, rmse: s.rmse, mae: s.mae };
  });
  return {
    coefficients,
    n: stats.n,
    rmse: stats.rmse,
    mae: stats.mae,
    r2: stats.r2,
    y: { name: spec.yName, unit: spec.yUnit },
    holdout:
      held.length > 0
        ? {
            fraction,
            ...errorStats(
              held.map((row) => row.measured),
              held.map((row) => row.fitted),
            ),
          }
        : null,
    residuals_by_bucket,
    notes,
    untrusted,
    rows: out,
  };
}

/** Buckets of a count feature: powers of two (`1`, `2-3`, `4-7`, ...). */
export function log2Bucket(label: string, value: number): string {
  if (value <= 0) return `${label} 0`;
  const low = 2 ** Math.floor(Math.log2(value));
  const high = low * 2 - 1;
  return low === high ? `${label} ${low}` : `${label} ${low}-${high}`;
}
