/**
 * Statistics of a metric (docs/replay-model.md, "Report"): avg, min, max, numpy-linear percentiles
 * (rank h = (n - 1) q, interpolated between the closest ranks) and the population standard
 * deviation.
 *
 * Percentiles need only the order statistics at the ranks around each h, so instead of
 * sorting (V8's typed-array sort takes ~60 ms for half a million values) they are found by a
 * radix select (`orderStatistics`). Sums run in the order the values come in, which the
 * simulation makes deterministic.
 */
import { giveSelectBuffer, giveUint16, takeSelectBuffer, takeUint16 } from './scratch.js';

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

const EMPTY: Stats = {
  avg: NaN,
  min: NaN,
  max: NaN,
  p1: NaN,
  p5: NaN,
  p10: NaN,
  p25: NaN,
  p50: NaN,
  p75: NaN,
  p90: NaN,
  p95: NaN,
  p99: NaN,
  std: NaN,
  count: 0,
};

/** Statistics of the values; `count` 0 gives NaN everywhere else. Does not modify the input. */
export function summarize(values: ArrayLike<number>): Stats {
  return summarizeValues(values instanceof Float64Array ? values : Float64Array.from(values));
}

/** As `summarize`, on a Float64Array (read, not modified or copied). */
export function summarizeValues(values: Float64Array): Stats {
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
  const ranks = percentileRanks(n);
  const found = orderStatisticsWithin(values, ranks, min, max);
  return {
    avg,
    min,
    max,
    p1: percentileAt(n, 1, ranks, found),
    p5: percentileAt(n, 5, ranks, found),
    p10: percentileAt(n, 10, ranks, found),
    p25: percentileAt(n, 25, ranks, found),
    p50: percentileAt(n, 50, ranks, found),
    p75: percentileAt(n, 75, ranks, found),
    p90: percentileAt(n, 90, ranks, found),
    p95: percentileAt(n, 95, ranks, found),
    p99: percentileAt(n, 99, ranks, found),
    std: Math.sqrt(squares / n),
    count: n,
  };
}

/** The ranks numpy's linear percentiles read (floor(h) and floor(h) + 1 of each), ascending, once each. */
function percentileRanks(n: number): number[] {
  const ranks: number[] = [];
  for (const q of PERCENTILES) {
    const lo = Math.floor((n - 1) * (q / 100));
    const hi = Math.min(lo + 1, n - 1);
    if (ranks.length === 0 || ranks[ranks.length - 1] < lo) ranks.push(lo);
    if (ranks[ranks.length - 1] < hi) ranks.push(hi);
  }
  return ranks;
}

/** Percentile q from the order statistics `found` at `ranks` (percentileRanks(n)). */
function percentileAt(n: number, q: number, ranks: readonly number[], found: readonly number[]): number {
  const h = (n - 1) * (q / 100);
  const lo = Math.floor(h);
  const i = ranks.indexOf(lo);
  const x = found[i];
  return lo + 1 < n ? x + (h - lo) * (found[i + 1] - x) : x;
}

/** Bits per radix digit of the 64-bit sortable key: 6 levels, 2,048 buckets a level. */
const DIGIT_BITS = 11;
const BUCKETS = 1 << DIGIT_BITS;
/** Below this many candidates a plain sort finishes the job. */
const SMALL = 256;

/**
 * The order statistics of `a` at the given ascending `ranks` (0-based), without sorting it:
 * a most-significant-digit radix select over the IEEE-754 bits of the values, mapped to keys
 * that sort like the numbers (flip the sign bit of non-negative values, every bit of negative
 * ones). Each level histograms one 11-bit digit of the candidates, copies the values of the
 * buckets that hold a wanted rank into one contiguous buffer, and goes on with those; a bucket
 * whose values are all equal, or small, ends early. Every level reads its candidates in order
 * (no index indirection), about two passes over the data in all, whatever the values'
 * distribution (pooled token gaps repeat a few pass times millions of times). `a` is not
 * modified.
 */
export function orderStatistics(a: Float64Array, ranks: readonly number[]): number[] {
  if (a.length === 0 || ranks.length === 0) return new Array<number>(ranks.length);
  let min = a[0];
  let max = a[0];
  for (let k = 1; k < a.length; k++) {
    const x = a[k];
    if (x < min) min = x;
    else if (x > max) max = x;
  }
  return orderStatisticsWithin(a, ranks, min, max);
}

/**
 * As `orderStatistics`, given the smallest and the largest value (by `<`, so a -0 or 0 among the
 * values may stand for either: both are kept apart here).
 */
function orderStatisticsWithin(a: Float64Array, ranks: readonly number[], min: number, max: number): number[] {
  const out = new Array<number>(ranks.length);
  if (a.length === 0 || ranks.length === 0) return out;
  // -0 sorts below 0 but compares equal: an extreme that is a zero becomes -0 (smallest) or 0
  // (largest), so the digits the two share are shared by every value between them.
  if (min === 0) min = -0;
  if (max === 0) max = 0;
  const level = firstDifferingLevel(min, max);
  if (level === 6)
    out.fill(min); // every value is the same number, bit for bit
  else selectLevel(a, ranks, 0, ranks.length, 0, level, out);
  return out;
}

const keyScratch = new Float64Array(1);
const keyBits = new Uint32Array(keyScratch.buffer);

/** Digit `level` of the sortable key of x (as histogramDigits computes it). */
function digitOf(x: number, level: number): number {
  keyScratch[0] = x;
  const hi = keyBits[1];
  const word = level < 3 ? hi : keyBits[0];
  const key = (hi | 0) < 0 ? ~word : level < 3 ? word | 0x80000000 : word;
  return (key >>> DIGIT_SHIFT[level]) & DIGIT_MASK[level];
}

/**
 * The first digit level at which the smallest and the largest value differ (6: they are equal
 * bit for bit). Every value between them shares the digits above it, so the selection starts
 * there: values close together (the token gaps of a steady run are one pass time give or take a
 * few microseconds) skip most levels instead of histogramming and copying the data at each.
 */
function firstDifferingLevel(min: number, max: number): number {
  let level = 0;
  while (level < 6 && digitOf(min, level) === digitOf(max, level)) level++;
  return level;
}

/** Where each 11-bit digit (level 0 = most significant) sits in the 64-bit key: 11 + 11 + 10 bits of the high word, then of the low word. */
const DIGIT_SHIFT = [21, 10, 0, 21, 10, 0];
const DIGIT_MASK = [0x7ff, 0x7ff, 0x3ff, 0x7ff, 0x7ff, 0x3ff];

/**
 * One pass over the candidates: writes the digit `level` of every value's sortable key into
 * `digits`, counts the digits into `counts`, and returns whether the values are all equal.
 */
function histogramDigits(values: Float64Array, level: number, digits: Uint16Array, counts: Int32Array): boolean {
  const n = values.length;
  const bits = new Uint32Array(values.buffer, values.byteOffset, n * 2);
  const shift = DIGIT_SHIFT[level];
  const mask = DIGIT_MASK[level];
  const fromHigh = level < 3 ? 1 : 0;
  const firstValue = values[0];
  let allEqual = true;
  for (let k = 0; k < n; k++) {
    const hi = bits[2 * k + 1];
    const word = fromHigh === 1 ? hi : bits[2 * k];
    // Sortable key: flip every bit of a negative value, only the sign bit of the others.
    const key = (hi | 0) < 0 ? ~word : fromHigh === 1 ? word | 0x80000000 : word;
    const digit = (key >>> shift) & mask;
    digits[k] = digit;
    counts[digit]++;
    if (allEqual && values[k] !== firstValue) allEqual = false;
  }
  // 0 and -0 compare equal but sort apart: let such a bucket go on to the next digit.
  return allEqual && firstValue !== 0;
}

/**
 * Copies each value whose digit's bucket belongs to a group into that group's segment of
 * `gathered` (`fill[g]`: the segment's next free index). The hot loop of the selection, in a
 * function of its own: small, with one set of argument types, it is optimized once and early on
 * a fresh thread (in the body of selectLevel its optimized code was thrown away again and again
 * as new branches of the recursion were first taken).
 */
function gatherGroups(values: Float64Array, digits: Uint16Array, groupOf: Int16Array, gathered: Float64Array, fill: Int32Array): void {
  const n = values.length;
  for (let k = 0; k < n; k++) {
    const g = groupOf[digits[k]];
    if (g >= 0) gathered[fill[g]++] = values[k];
  }
}

/**
 * Walks the buckets in key order and makes a group of each that holds some of
 * ranks[rFirst .. rEnd): `groupOf[bucket]` its group, and per group where its segment starts in
 * the gather buffer, how many values lie below it (rank offset) and its range of ranks. Returns
 * the number of values to gather.
 */
function groupBuckets(
  counts: Int32Array,
  ranks: readonly number[],
  rFirst: number,
  rEnd: number,
  offset: number,
  groupOf: Int16Array,
  groupStart: number[],
  groupBelow: number[],
  groupRanks: number[],
): number {
  let below = offset;
  let r = rFirst;
  let wanted = 0;
  for (let b = 0; b < BUCKETS && r < rEnd; b++) {
    const size = counts[b];
    if (size === 0) continue;
    let rStop = r;
    while (rStop < rEnd && ranks[rStop] < below + size) rStop++;
    if (rStop > r) {
      groupOf[b] = groupStart.length;
      groupStart.push(wanted);
      groupBelow.push(below);
      groupRanks.push(r, rStop);
      wanted += size;
      r = rStop;
    }
    below += size;
  }
  return wanted;
}

/** ranks[rFirst .. rEnd) (each minus `offset`) of a few values, by sorting a copy. */
function selectBySorting(
  values: Float64Array,
  ranks: readonly number[],
  rFirst: number,
  rEnd: number,
  offset: number,
  out: number[],
): void {
  const sorted = values.slice();
  sorted.sort();
  for (let r = rFirst; r < rEnd; r++) out[r] = sorted[ranks[r] - offset];
}

/**
 * Finds ranks[rFirst .. rEnd) (each minus `offset`) among `values`. Kept small: the loops over
 * values and buckets are in functions of their own (gatherGroups, histogramDigits, groupBuckets)
 * that are optimized once with stable types, so a fresh thread does not compile and throw away
 * this recursive body as its branches are first taken.
 */
function selectLevel(
  values: Float64Array,
  ranks: readonly number[],
  rFirst: number,
  rEnd: number,
  offset: number,
  level: number,
  out: number[],
): void {
  const n = values.length;
  if (n <= SMALL || level === 6) {
    selectBySorting(values, ranks, rFirst, rEnd, offset, out);
    return;
  }
  // The digits are the largest scratch of the selection: reused between calls.
  const digits = takeUint16(n);
  const counts = new Int32Array(BUCKETS);
  if (histogramDigits(values, level, digits, counts)) {
    giveUint16(digits);
    for (let r = rFirst; r < rEnd; r++) out[r] = values[0];
    return;
  }
  // Buckets that hold wanted ranks, in key order, with the ranks each holds; their values are
  // gathered into consecutive segments of one buffer.
  const groupOf = new Int16Array(BUCKETS).fill(-1);
  const groupStart: number[] = [];
  const groupBelow: number[] = [];
  const groupRanks: number[] = [];
  const wanted = groupBuckets(counts, ranks, rFirst, rEnd, offset, groupOf, groupStart, groupBelow, groupRanks);
  const gathered = takeSelectBuffer(wanted);
  const fill = Int32Array.from(groupStart);
  gatherGroups(values, digits, groupOf, gathered, fill);
  giveUint16(digits);
  for (let g = 0; g < groupStart.length; g++) {
    const segment = gathered.subarray(groupStart[g], fill[g]);
    selectLevel(segment, ranks, groupRanks[2 * g], groupRanks[2 * g + 1], groupBelow[g], level + 1, out);
  }
  giveSelectBuffer(gathered);
}
