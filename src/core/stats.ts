/**
 * Statistics of a metric (spec replay.md §7): avg, min, max, numpy-linear percentiles
 * (rank h = (n - 1) q, interpolated between the closest ranks) and the population standard
 * deviation. Values are sorted as a Float64Array (numeric sort, no comparator) and summed in
 * sorted order, so the result does not depend on the order values were collected in.
 */

export const PERCENTILES = [1, 5, 10, 25, 50, 75, 90, 95, 99] as const;

export interface Stats {
  avg: number;
  min: number;
  max: number;
  p1: number;
  p5: number;
  p10: number;
  p25: number;
  p50: number;
  p75: number;
  p90: number;
  p95: number;
  p99: number;
  std: number;
  count: number;
}

/** numpy.percentile(x, q) with the default 'linear' method, on an ascending array. */
export function percentileSorted(sorted: ArrayLike<number>, q: number): number {
  const n = sorted.length;
  if (n === 0) return NaN;
  const h = (n - 1) * (q / 100);
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, n - 1);
  const frac = h - lo;
  return sorted[lo] + frac * (sorted[hi] - sorted[lo]);
}

/** Statistics of the values; `count` 0 gives NaN everywhere else. Does not modify the input. */
export function summarize(values: ArrayLike<number>): Stats {
  const sorted = Float64Array.from(values as ArrayLike<number>);
  sorted.sort();
  return summarizeSorted(sorted);
}

/** As `summarize`, on an ascending Float64Array (sorted in place by the caller). */
export function summarizeSorted(sorted: Float64Array): Stats {
  const n = sorted.length;
  if (n === 0) {
    return { avg: NaN, min: NaN, max: NaN, p1: NaN, p5: NaN, p10: NaN, p25: NaN, p50: NaN, p75: NaN, p90: NaN, p95: NaN, p99: NaN, std: NaN, count: 0 };
  }
  let sum = 0;
  for (let i = 0; i < n; i++) sum += sorted[i];
  const avg = sum / n;
  let squares = 0;
  for (let i = 0; i < n; i++) {
    const d = sorted[i] - avg;
    squares += d * d;
  }
  return {
    avg,
    min: sorted[0],
    max: sorted[n - 1],
    p1: percentileSorted(sorted, 1),
    p5: percentileSorted(sorted, 5),
    p10: percentileSorted(sorted, 10),
    p25: percentileSorted(sorted, 25),
    p50: percentileSorted(sorted, 50),
    p75: percentileSorted(sorted, 75),
    p90: percentileSorted(sorted, 90),
    p95: percentileSorted(sorted, 95),
    p99: percentileSorted(sorted, 99),
    std: Math.sqrt(squares / n),
    count: n,
  };
}
