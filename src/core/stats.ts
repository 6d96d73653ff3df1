/**
 * Statistics of a metric (spec replay.md §7): avg, min, max, numpy-linear percentiles
 * (rank h = (n - 1) q, interpolated between the closest ranks) and the population standard
 * deviation.
 *
 * Percentiles need only the order statistics at the ranks around each h, so instead of
 * sorting (V8's typed-array sort takes ~60 ms for half a million values) the values are
 * partially ordered by a multi-position quickselect with a three-way partition (pooled token
 * gaps repeat the same few pass times millions of times). Sums run in the order the values
 * come in, which the simulation makes deterministic.
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
  return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
}

const EMPTY: Stats = { avg: NaN, min: NaN, max: NaN, p1: NaN, p5: NaN, p10: NaN, p25: NaN, p50: NaN, p75: NaN, p90: NaN, p95: NaN, p99: NaN, std: NaN, count: 0 };

/** Statistics of the values; `count` 0 gives NaN everywhere else. Does not modify the input. */
export function summarize(values: ArrayLike<number>): Stats {
  return summarizeInPlace(Float64Array.from(values as ArrayLike<number>));
}

/** As `summarize`, reordering `values` in place (no copy). */
export function summarizeInPlace(values: Float64Array): Stats {
  const n = values.length;
  if (n === 0) return { ...EMPTY };
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < n; i++) {
    const x = values[i];
    sum += x;
    if (x < min) min = x;
    if (x > max) max = x;
  }
  const avg = sum / n;
  let squares = 0;
  for (let i = 0; i < n; i++) {
    const d = values[i] - avg;
    squares += d * d;
  }
  // Ranks needed: floor(h) and floor(h) + 1 for every percentile.
  const ranks: number[] = [];
  for (const q of PERCENTILES) {
    const lo = Math.floor((n - 1) * (q / 100));
    ranks.push(lo, Math.min(lo + 1, n - 1));
  }
  selectRanks(values, Array.from(new Set(ranks)).sort((a, b) => a - b));
  const p = (q: number) => percentileSorted(values, q);
  return {
    avg,
    min,
    max,
    p1: p(1),
    p5: p(5),
    p10: p(10),
    p25: p(25),
    p50: p(50),
    p75: p(75),
    p90: p(90),
    p95: p(95),
    p99: p(99),
    std: Math.sqrt(squares / n),
    count: n,
  };
}

/**
 * Reorders `a` so that a[r] is the r-th smallest value for every r in `ranks` (ascending),
 * with every element left of r no larger and every element right of it no smaller.
 */
export function selectRanks(a: Float64Array, ranks: number[]): void {
  // Work items: [lo, hi, firstRank, lastRank) over the ranks array.
  const stack: number[] = [0, a.length - 1, 0, ranks.length];
  while (stack.length > 0) {
    const rEnd = stack.pop() as number;
    const rStart = stack.pop() as number;
    const hi = stack.pop() as number;
    const lo = stack.pop() as number;
    if (rStart >= rEnd || lo >= hi) continue;
    if (hi - lo < 16) {
      insertionSort(a, lo, hi);
      continue;
    }
    // Median of three as the pivot, then a three-way partition:
    // [lo, lt) < pivot, [lt, gt] == pivot, (gt, hi] > pivot.
    const mid = lo + ((hi - lo) >> 1);
    const x = a[lo];
    const y = a[mid];
    const z = a[hi];
    const pivot = x < y ? (y < z ? y : x < z ? z : x) : x < z ? x : y < z ? z : y;
    let lt = lo;
    let gt = hi;
    let i = lo;
    while (i <= gt) {
      const v = a[i];
      if (v < pivot) {
        a[i++] = a[lt];
        a[lt++] = v;
      } else if (v > pivot) {
        a[i] = a[gt];
        a[gt--] = v;
      } else i++;
    }
    // Split the ranks around the equal block.
    let left = rStart;
    while (left < rEnd && ranks[left] < lt) left++;
    let right = left;
    while (right < rEnd && ranks[right] <= gt) right++;
    stack.push(lo, lt - 1, rStart, left);
    stack.push(gt + 1, hi, right, rEnd);
  }
}

function insertionSort(a: Float64Array, lo: number, hi: number): void {
  for (let i = lo + 1; i <= hi; i++) {
    const v = a[i];
    let j = i - 1;
    while (j >= lo && a[j] > v) {
      a[j + 1] = a[j];
      j--;
    }
    a[j + 1] = v;
  }
}
